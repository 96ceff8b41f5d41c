/**
 * The project a working directory belongs to: the nearest ancestor holding `.git` (a
 * folder, or a file in worktrees and submodules). Skills and project rules are searched up
 * to it and memory is scoped by it.
 */
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * The nearest ancestor of `cwd` (itself included) with a `.git` entry, or undefined. A
 * folder that cannot be looked into (no permission, not a folder) counts as holding none.
 */
export function findRepoRoot(cwd: string): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    if (hasGit(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The folders from `cwd` up to the repository root, nearest first; just `cwd` when it is
 * not inside a repository (searching up to `/` would pick up strangers' files).
 */
export function projectDirs(cwd: string): string[] {
  const start = resolve(cwd);
  const root = findRepoRoot(start);
  if (root === undefined) return [start];
  const dirs: string[] = [];
  for (let dir = start; ; dir = dirname(dir)) {
    dirs.push(dir);
    if (dir === root || dirname(dir) === dir) return dirs;
  }
}

function hasGit(dir: string): boolean {
  return pathExists(join(dir, '.git'));
}

/** Whether anything (a file, a folder, a link) is at `path`; a place that cannot be looked into holds nothing. */
export function pathExists(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false; // EACCES, ENOTDIR: look further up
  }
}
