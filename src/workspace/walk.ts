/**
 * Walking the workspace tree for glob and grep: sorted, never following symlinks (no
 * cycles, no way out of the root), skipping `.git` and whatever `.gitignore` files say.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ancestorRules, isIgnored, withDirectoryRules, type IgnoreRules } from './ignore-rules.js';
import { compareNames } from './list-dir.js';

/** One entry met by {@link walkWorkspace}. */
export interface WalkEntry {
  /** Relative to the root, forward slashes. */
  path: string;
  absolute: string;
  kind: 'file' | 'directory' | 'symlink' | 'other';
}

/** Options of {@link walkWorkspace}. */
export interface WalkOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Where to start: a directory inside the root, relative to it (`.` for the root). */
  start: string;
  /** Receives every entry not ignored (the start itself excluded); answer false to stop the walk. */
  visit: (entry: WalkEntry) => boolean | void | Promise<boolean | void>;
  /** Answer false to skip a directory's contents (it is still visited). */
  descend?: (entry: WalkEntry) => boolean;
  /** Honour `.gitignore` files (default true). `.git` is skipped either way. */
  gitignore?: boolean;
  /** Stop after this many entries (default 200 000): a runaway tree must not hang the tool. */
  maxEntries?: number;
  signal?: AbortSignal;
}

/** How a walk ended. */
export interface WalkResult {
  entries: number;
  /** `visit` answered false or the signal fired. */
  stopped: boolean;
  /** `maxEntries` was reached. */
  truncated: boolean;
}

const DEFAULT_MAX_ENTRIES = 200_000;

/**
 * Visits the tree under `start`: the entries of each directory in code-point order, then
 * its subdirectories, depth first. Unreadable directories are skipped silently.
 */
export async function walkWorkspace(options: WalkOptions): Promise<WalkResult> {
  const useIgnore = options.gitignore !== false;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const startPath = options.start === '.' ? '' : options.start;
  const rules = useIgnore ? await ancestorRules(options.root, startPath) : [];
  const stack: Array<{ path: string; rules: IgnoreRules }> = [{ path: startPath, rules }];
  let entries = 0;

  while (stack.length > 0) {
    if (options.signal?.aborted) return { entries, stopped: true, truncated: false };
    const directory = stack.pop()!;
    const absolute = directory.path === '' ? options.root : join(options.root, directory.path);
    let dirents: Dirent[];
    try {
      dirents = await readdir(absolute, { withFileTypes: true });
    } catch {
      continue;
    }
    dirents.sort((a, b) => compareNames(a.name, b.name));
    const local =
      useIgnore && dirents.some((d) => d.name === '.gitignore' || (directory.path === '' && d.name === '.git'))
        ? await withDirectoryRules(directory.rules, absolute, directory.path)
        : directory.rules;
    const subdirectories: Array<{ path: string; rules: IgnoreRules }> = [];
    for (const dirent of dirents) {
      if (dirent.name === '.git') continue;
      const kind = kindOf(dirent);
      const path = directory.path === '' ? dirent.name : `${directory.path}/${dirent.name}`;
      if (useIgnore && isIgnored(local, path, kind === 'directory')) continue;
      if (++entries > maxEntries) return { entries: maxEntries, stopped: true, truncated: true };
      const entry: WalkEntry = { path, absolute: join(absolute, dirent.name), kind };
      if ((await options.visit(entry)) === false) return { entries, stopped: true, truncated: false };
      if (kind === 'directory' && (options.descend?.(entry) ?? true)) subdirectories.push({ path, rules: local });
    }
    // Reversed onto the stack so that they come off in order.
    for (let i = subdirectories.length - 1; i >= 0; i--) stack.push(subdirectories[i]!);
  }
  return { entries, stopped: false, truncated: false };
}

function kindOf(dirent: Dirent): WalkEntry['kind'] {
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isFile()) return 'file';
  if (dirent.isSymbolicLink()) return 'symlink';
  return 'other';
}
