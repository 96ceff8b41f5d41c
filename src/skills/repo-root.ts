/**
 * The project a working directory belongs to: the nearest ancestor holding `.git` (a
 * folder, or a file in worktrees and submodules). Skills are searched up to it and memory
 * is scoped by it.
 */
import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The nearest ancestor of `cwd` (itself included) with a `.git` entry, or undefined. */
export function findRepoRoot(cwd: string): string | undefined {
  let dir = resolve(cwd);
  for (;;) {
    if (statSync(join(dir, '.git'), { throwIfNoEntry: false }) !== undefined) return dir;
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
