/**
 * Discovering skills: every `<root>/<name>/SKILL.md` under the skill roots, validated, in
 * precedence order. One broken file is a diagnostic, never a failure of the others
 * (STYLE 9).
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { checkFrontMatter, splitFrontMatter } from './front-matter.js';
import { projectDirs } from '../util/repo-root.js';
import type { LoadSkillsResult, Skill, SkillDiagnostic } from './types.js';

/** The skill folders looked for in each project directory, in this order. */
export const PROJECT_SKILL_DIRS = ['.rein/skills', '.agents/skills'] as const;
/** The user's skill folder, under the home directory. */
export const USER_SKILL_DIR = '.rein/skills';
/** A `SKILL.md` larger than this is skipped: skills are instructions, not data. */
export const MAX_SKILL_FILE_BYTES = 1024 * 1024;

/** Options of {@link loadSkills}. */
export interface LoadSkillsOptions {
  /** Where the search starts; project folders are searched from here up to the repository root. */
  cwd: string;
  /** The user's home (default `os.homedir()`): `<home>/.rein/skills` is searched last. */
  home?: string;
  /**
   * More skill roots (folders whose subfolders are skills), relative to `cwd` or absolute.
   * They come first: a skill named here wins over a discovered one of the same name.
   */
  dirs?: string[];
  /** Search the project and user folders (default true); false loads only `dirs`. */
  defaults?: boolean;
}

/**
 * Loads every skill rein can find, in precedence order: `dirs`, then for each folder from
 * `cwd` up to the repository root (the nearest ancestor with `.git`; just `cwd` outside a
 * repository) its `.rein/skills/` then `.agents/skills/`, then `~/.rein/skills/`. The
 * first skill of a name wins; later ones are reported as diagnostics. Invalid files are
 * reported with the reason and skipped; the rest still load.
 *
 * @example
 * const { skills, diagnostics } = await loadSkills({ cwd: process.cwd() });
 * for (const d of diagnostics) console.warn(`${d.file}: ${d.reason}`);
 */
export async function loadSkills(options: LoadSkillsOptions): Promise<LoadSkillsResult> {
  const cwd = resolve(options.cwd);
  const roots = (options.dirs ?? []).map((dir) => resolve(cwd, dir));
  if (options.defaults !== false) {
    for (const dir of projectDirs(cwd)) for (const sub of PROJECT_SKILL_DIRS) roots.push(join(dir, sub));
    roots.push(join(options.home ?? homedir(), USER_SKILL_DIR));
  }
  // Each root is read concurrently; precedence is applied afterwards, in root order.
  const found = await Promise.all((await uniqueRoots(roots)).map((root) => loadRoot(root)));
  const diagnostics: SkillDiagnostic[] = found.flatMap((root) => root.diagnostics);
  const skills: Skill[] = [];
  const byName = new Map<string, Skill>();
  for (const skill of found.flatMap((root) => root.skills)) {
    const winner = byName.get(skill.name);
    if (winner) {
      diagnostics.push({
        file: skill.file,
        reason: `skill "${skill.name}" is already defined by ${winner.file}, which takes precedence; this one is ignored`,
      });
      continue;
    }
    byName.set(skill.name, skill);
    skills.push(skill);
  }
  return { skills, diagnostics };
}

/** The roots that exist, each once (the home folder may also be a project folder). */
async function uniqueRoots(roots: string[]): Promise<string[]> {
  const real = await Promise.all(roots.map((root) => realpath(root).catch(() => undefined)));
  const seen = new Set<string>();
  const out: string[] = [];
  real.forEach((path, i) => {
    if (path === undefined || seen.has(path)) return;
    seen.add(path);
    out.push(roots[i] as string);
  });
  return out;
}

/** The skills of one root, sorted by folder name so the order never depends on the file system. */
async function loadRoot(root: string): Promise<LoadSkillsResult> {
  let entries: string[];
  try {
    entries = (await readdir(root)).filter((name) => !name.startsWith('.')).sort();
  } catch (error) {
    return { skills: [], diagnostics: [{ file: root, reason: `cannot list the skill folder: ${(error as Error).message}` }] };
  }
  const loaded = await Promise.all(entries.map((entry) => loadSkillDir(join(root, entry))));
  const result: LoadSkillsResult = { skills: [], diagnostics: [] };
  for (const item of loaded) {
    if (item === undefined) continue;
    if ('reason' in item) result.diagnostics.push(item);
    else result.skills.push(item);
  }
  return result;
}

/** One candidate folder: a skill, a diagnostic, or nothing when it is not a skill folder at all. */
async function loadSkillDir(dir: string): Promise<Skill | SkillDiagnostic | undefined> {
  // Symlinked skill folders are followed: sharing a skill between projects by a link is common.
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) return undefined;
  const file = join(dir, 'SKILL.md');
  const fileInfo = await stat(file).catch(() => undefined);
  if (!fileInfo?.isFile()) {
    const names = await readdir(dir).catch(() => [] as string[]);
    if (names.includes('SKILL.md')) return { file, reason: 'SKILL.md is not a readable file (a dangling link, or a folder)' };
    const misnamed = names.find((name) => name.toLowerCase() === 'skill.md');
    if (misnamed !== undefined) return { file: join(dir, misnamed), reason: `the file must be named SKILL.md (found ${misnamed})` };
    return undefined;
  }
  if (fileInfo.size > MAX_SKILL_FILE_BYTES) {
    return { file, reason: `SKILL.md is ${fileInfo.size} bytes; at most ${MAX_SKILL_FILE_BYTES} are read: move material to references/` };
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { file, reason: `cannot read: ${(error as Error).message}` };
  }
  return parseSkillFile(text, file, dir);
}

/**
 * Parses the text of a `SKILL.md` whose folder is `dir`: a {@link Skill}, or a diagnostic
 * saying what to fix.
 */
export async function parseSkillFile(text: string, file: string, dir: string): Promise<Skill | SkillDiagnostic> {
  const split = splitFrontMatter(text);
  if (!split.ok) return { file, reason: split.reason };
  // yaml is loaded on first use: importing rein must stay fast when no skill exists.
  const { parse } = await import('yaml');
  let data: unknown;
  try {
    data = parse(split.yaml, { prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    return { file, reason: `invalid YAML in the front matter: ${firstLine((error as Error).message)}` };
  }
  const checked = checkFrontMatter(data, basename(dir));
  if (!checked.ok) return { file, reason: checked.reason };
  return { ...checked.meta, dir, file, body: split.body };
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
