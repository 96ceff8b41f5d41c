/** Shared set-up of the skills tests: temporary folders with SKILL.md files, removed after each test. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import type { Skill } from '../../src/skills/types.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A fresh temporary folder, removed after the test. */
export async function tempDir(prefix = 'rein-skills-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** Writes `files` (relative path → content) under `root`, creating folders. */
export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/** The text of a SKILL.md with the given front-matter lines and body. */
export function skillMd(frontMatter: string, body = 'Do the thing step by step.'): string {
  return `---\n${frontMatter.trim()}\n---\n\n${body}\n`;
}

/** Writes `<root>/<name>/SKILL.md` with a valid front matter (plus `extra` lines) and `body`. */
export async function writeSkill(root: string, name: string, description: string, body?: string, extra = ''): Promise<void> {
  await writeFiles(root, { [`${name}/SKILL.md`]: skillMd(`name: ${name}\ndescription: ${JSON.stringify(description)}\n${extra}`, body) });
}

/** An in-memory skill for tests that do not need files. */
export function fakeSkill(name: string, description: string, extra: Partial<Skill> = {}): Skill {
  return {
    name,
    description,
    disableModelInvocation: false,
    dir: `/nonexistent/${name}`,
    file: `/nonexistent/${name}/SKILL.md`,
    body: `Instructions of ${name}.`,
    ...extra,
  };
}
