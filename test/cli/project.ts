/**
 * A project folder of its own for each CLI test: `<tmp>/…/project` (the cwd of rein) and
 * `<tmp>/…/home` (its HOME) beside it, and the checks after the test that nothing it
 * started is left running.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { spawned } from './spawn.js';

export interface TempProject {
  /** The folder holding both (what must stay out of the workspace's reach goes here). */
  base: string;
  project: string;
  home: string;
}

/** Makes the folders; a `.git` folder makes the project a repository root: rules, skills and settings stop here. */
export async function makeProject(prefix: string): Promise<TempProject> {
  const base = await mkdtemp(join(tmpdir(), prefix));
  const project = join(base, 'project');
  const home = join(base, 'home');
  await mkdir(join(project, '.git'), { recursive: true });
  await mkdir(home);
  return { base, project, home };
}

/**
 * Removes the folders, then fails if a `rein` the test started is still running (each test
 * awaits its own: one still running here is killed) or if a process started for the
 * project (an MCP server) outlived the rein that started it.
 */
export async function removeProject({ base, project }: TempProject): Promise<void> {
  const lingering = spawned.splice(0).filter((c) => c.exitCode === null && c.signalCode === null);
  for (const child of lingering) child.kill('SIGKILL');
  await rm(base, { recursive: true, force: true });
  expect(lingering.map((c) => c.pid)).toEqual([]);
  expect(processesMentioning(project)).toEqual([]);
}

/** Live (not zombie) processes whose command line mentions `text` (Linux; elsewhere none are found). */
function processesMentioning(text: string): string[] {
  if (process.platform !== 'linux') return [];
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes(text)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))) found.push(`${pid}: ${cmdline.replace(/\0/g, ' ')}`);
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}
