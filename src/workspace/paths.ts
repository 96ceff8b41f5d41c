/**
 * The path guard: every workspace tool turns the model's path into a real location inside
 * the workspace root here, or refuses it. Refused are `..` escapes, absolute paths outside
 * the root, symlinks (the file itself or any parent) that resolve outside the root, dangling
 * symlinks, NUL bytes and `~`. What comes out has every existing component resolved, so
 * tools operate on real locations, and the checks here stay true until a component is
 * swapped underneath us — which `verified-io.ts` re-checks when the file is opened.
 */
import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ReinError } from '../errors.js';
import { errnoOf } from '../process/errno.js';
import { closestName } from '../tools/suggest.js';
import type { Workspace } from './workspace.js';

/** A path the guard accepted. */
export interface WorkspacePath {
  /** Real path of the workspace root. */
  root: string;
  /** Absolute location, every existing component resolved (symlinks followed); inside `root`. */
  absolute: string;
  /** `absolute` relative to `root`, with forward slashes; `.` for the root itself. */
  relative: string;
  /** Whether the path existed when it was resolved. */
  exists: boolean;
  /** The deepest existing directory on the way (the path itself when it exists and is a directory). */
  existingAncestor: string;
}

/** A workspace root as configured and as resolved to its real path. */
export type WorkspaceRoot = Pick<Workspace, 'root' | 'realRoot'>;

/** Options of {@link resolveInWorkspace}. */
export interface ResolveOptions {
  /**
   * The caller will create or replace the path: a missing path (and missing parent
   * directories) is fine. Without it, a missing path is a `not_found` error.
   */
  forWrite?: boolean;
}

/**
 * Resolves `path` (relative to `root`, or absolute) to a real location inside the workspace
 * `root`, or throws a `path_refused` {@link ReinError} (correctable: the model can send
 * another path) saying why and what is allowed. A missing path throws `not_found` with a
 * "did you mean" from its directory, unless `forWrite`.
 *
 * @example
 * const target = await resolveInWorkspace(process.cwd(), 'src/index.ts');
 * target.relative; // 'src/index.ts'
 * await resolveInWorkspace(process.cwd(), '../etc/passwd'); // throws path_refused
 */
export async function resolveInWorkspace(root: string, path: string, options: ResolveOptions = {}): Promise<WorkspacePath> {
  return resolveIn({ root, realRoot: await realRoot(root) }, path, options);
}

/** {@link resolveInWorkspace} in a workspace whose real root was resolved once, when it was made. */
export async function resolveIn(workspace: WorkspaceRoot, path: string, options: ResolveOptions = {}): Promise<WorkspacePath> {
  const { root, realRoot: rootReal } = workspace;
  const lexical = lexicalTarget(root, rootReal, path);
  const segments = lexical === rootReal ? [] : relative(rootReal, lexical).split(sep);
  let current = rootReal;
  let stats: Stats | undefined;
  for (let i = 0; i < segments.length; i++) {
    const name = segments[i]!;
    const next = join(current, name);
    const shown = displayPath(rootReal, next);
    try {
      stats = await lstat(next);
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT') throw ioRefusal(path, error);
      const missing = segments.slice(i);
      if (!options.forWrite) throw await notFound(path, current, name, rootReal);
      return accepted(rootReal, join(current, ...missing), false, current);
    }
    if (stats.isSymbolicLink()) {
      current = await followLink(next, shown, path, rootReal);
      stats = undefined;
    } else {
      current = next;
    }
    const last = i === segments.length - 1;
    if (!last && !(stats ? stats.isDirectory() : await isDirectory(current))) {
      throw new ReinError(
        'not_found',
        'correctable',
        `"${path}" cannot exist: ${shown} is a file, not a directory. Check the path (list_dir shows what is there).`,
      );
    }
  }
  // The last component's lstat already tells, unless it was a symlink (then its target must be looked at).
  const isDir = segments.length === 0 || (stats ? stats.isDirectory() : await isDirectory(current));
  return accepted(rootReal, current, true, isDir ? current : join(current, '..'));
}

/**
 * The permission subject of a path argument: where it lands relative to the root, with
 * forward slashes (`.` for the root), existing symlinks resolved so that a rule such as
 * `write_file(src/**)` sees the real destination. Never throws: a path the guard would
 * refuse is answered as the model wrote it, normalized, and the tool refuses it later.
 */
export function workspaceSubject(root: string, path: unknown): string | undefined {
  return subject(root, () => realpathSync(root), path);
}

/** {@link workspaceSubject} in a workspace whose real root was resolved once, when it was made. */
export function subjectIn(workspace: WorkspaceRoot, path: unknown): string | undefined {
  return subject(workspace.root, () => workspace.realRoot, path);
}

function subject(root: string, realRoot: () => string, path: unknown): string | undefined {
  if (typeof path !== 'string') return undefined;
  try {
    const rootReal = realRoot();
    const lexical = lexicalTarget(root, rootReal, path === '' ? '.' : path);
    return displayPath(rootReal, realOfDeepestExisting(lexical));
  } catch {
    return isAbsolute(path) ? resolve(path) : toForwardSlashes(join('.', path));
  }
}

/** `absolute` relative to `root` with forward slashes; `.` for the root. */
export function displayPath(root: string, absolute: string): string {
  if (absolute === root) return '.';
  return toForwardSlashes(relative(root, absolute));
}

/** Whether `path` is `root` or below it (both absolute and normalized). */
export function isInside(root: string, path: string): boolean {
  if (path === root) return true;
  return path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function toForwardSlashes(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/');
}

async function realRoot(root: string): Promise<string> {
  try {
    return await realpath(resolve(root));
  } catch (error) {
    throw new ReinError(
      'config',
      'fatal',
      `the workspace root ${root} cannot be used (${errnoOf(error) ?? String(error)}): create it or choose another root`,
      { cause: error },
    );
  }
}

/** The absolute, normalized target before any symlink is looked at; refuses lexical escapes. */
function lexicalTarget(root: string, rootReal: string, path: string): string {
  if (typeof path !== 'string') refuse(String(path), 'the path must be a string');
  if (path.includes('\0')) refuse(path, 'it contains a NUL byte');
  if (path.trim() === '') refuse(path, 'it is empty; use "." for the workspace root');
  if (path === '~' || path.startsWith('~/')) {
    refuse(path, '"~" is not expanded and the home directory is outside the workspace');
  }
  if (isAbsolute(path)) {
    const normalized = resolve(path);
    if (isInside(rootReal, normalized)) return normalized;
    // The root as the user named it (e.g. through a symlinked home directory) is fine too.
    const rootGiven = resolve(root);
    if (isInside(rootGiven, normalized)) return join(rootReal, relative(rootGiven, normalized));
    refuse(path, `it is an absolute path outside the workspace root ${rootReal}`);
  }
  const normalized = resolve(rootReal, path);
  if (!isInside(rootReal, normalized)) refuse(path, '".." leads outside the workspace root');
  return normalized;
}

async function followLink(link: string, shown: string, path: string, rootReal: string): Promise<string> {
  let target: string;
  try {
    target = await realpath(link);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT') refuse(path, `${shown} is a symlink whose target does not exist`);
    if (code === 'ELOOP') refuse(path, `${shown} is a symlink loop`);
    throw ioRefusal(path, error);
  }
  if (!isInside(rootReal, target)) refuse(path, `${shown} is a symlink to ${target}, outside the workspace root`);
  return target;
}

/** Sync twin of the walk above for {@link workspaceSubject}: realpath of the deepest existing ancestor. */
function realOfDeepestExisting(lexical: string): string {
  const missing: string[] = [];
  let current = lexical;
  for (;;) {
    try {
      lstatSync(current);
      return join(realpathSync(current), ...missing.reverse());
    } catch {
      const parent = join(current, '..');
      if (parent === current) return lexical;
      missing.push(basename(current));
      current = parent;
    }
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory();
  } catch {
    return false;
  }
}

function accepted(root: string, absolute: string, exists: boolean, existingAncestor: string): WorkspacePath {
  return { root, absolute, relative: displayPath(root, absolute), exists, existingAncestor };
}

async function notFound(path: string, directory: string, name: string, rootReal: string): Promise<ReinError> {
  let hint = '';
  try {
    const names = (await readdir(directory)).filter((entry) => entry !== '.git');
    const suggestion = closestName(name, names);
    if (suggestion) hint = ` Did you mean ${displayPath(rootReal, join(directory, suggestion))}?`;
  } catch {
    // No hint then: the error itself is what matters.
  }
  const where = displayPath(rootReal, directory);
  return new ReinError(
    'not_found',
    'correctable',
    `${path} does not exist (no "${name}" in ${where === '.' ? 'the workspace root' : where}).${hint} Use list_dir or glob to find the right path.`,
  );
}

function refuse(path: string, why: string): never {
  throw new ReinError(
    'path_refused',
    'correctable',
    `path ${JSON.stringify(path)} is refused: ${why}. Only paths inside the workspace are allowed: relative to its root, or absolute below it, without symlinks that lead out.`,
  );
}

function ioRefusal(path: string, error: unknown): ReinError {
  const code = errnoOf(error);
  if (code === 'EACCES' || code === 'EPERM') {
    return new ReinError('permission_denied', 'correctable', `${path} cannot be accessed: permission denied by the file system`);
  }
  if (code === 'ENAMETOOLONG') return new ReinError('path_refused', 'correctable', `path ${JSON.stringify(path)} is too long`);
  return new ReinError('tool_failed', 'correctable', `${path} cannot be accessed: ${(error as Error).message}`, { cause: error });
}
