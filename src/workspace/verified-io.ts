/**
 * Check-then-use, closed: the path guard checks a path, and between that check and the
 * open a directory on the way may be renamed or swapped for a symlink. Every open here is
 * re-checked against the location the guard accepted — on Linux by reading where the
 * kernel actually opened (`/proc/self/fd/N`), elsewhere by comparing the descriptor's
 * device and inode with a fresh lookup — and refused when they differ. The final
 * component is opened with `O_NOFOLLOW`.
 *
 * Node has no `openat`/`renameat`, so an atomic write's final rename still goes by path;
 * the directory is re-checked after it and a file that landed elsewhere is removed again.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, rename, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { ReinError } from '../errors.js';
import { errnoOf } from '../process/errno.js';
import { displayPath, isInside, type WorkspacePath } from './paths.js';

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// Opening a named pipe blocks until a writer comes, in a libuv thread that nothing can
// cancel: four such opens stall every file operation of the process. Non-blocking, the
// open returns at once and the descriptor's type is checked before any read.
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/** The part of a {@link WorkspacePath} an open needs. */
export type CheckedPath = Pick<WorkspacePath, 'root' | 'absolute' | 'relative'>;

/** What {@link writeFileAtomic} did. */
export interface WriteReport {
  /** True when the file did not exist before. */
  created: boolean;
  bytes: number;
  /** Size of the file it replaced. */
  previousBytes?: number;
}

/**
 * Opens `target` (already accepted by the guard) and proves the descriptor is that very
 * file; refuses with `path_refused` when a component was swapped since the check, or when
 * it is a named pipe, a socket or a device (only regular files and directories are
 * opened). `flags` are `fs.constants` open flags; `O_NOFOLLOW` and `O_NONBLOCK` are always
 * added.
 */
export async function openVerified(target: CheckedPath, flags: number, mode?: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(target.absolute, flags | O_NOFOLLOW | O_NONBLOCK, mode);
  } catch (error) {
    if (errnoOf(error) === 'ELOOP') throw changedUnderfoot(target);
    // A socket refuses any open, a pipe with no reader a non-blocking one for writing.
    if (errnoOf(error) === 'ENXIO') {
      const stats = await lstatIfExists(target.absolute).catch(() => undefined);
      throw notRegular(target.relative, stats ? specialKind(stats) : 'not a regular file');
    }
    throw fileError(target.relative, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() && !stats.isDirectory()) throw notRegular(target.relative, specialKind(stats));
    await verifyDescriptor(handle, target);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/** Reads a whole file through {@link openVerified}. */
export async function readVerified(target: CheckedPath): Promise<Buffer> {
  const handle = await openVerified(target, constants.O_RDONLY);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * Writes `data` to `target` atomically: creates missing parent directories (each checked),
 * writes a temporary file beside the target, flushes it and renames it into place, so a
 * reader sees the old content or the new, never half. Keeps the replaced file's mode.
 */
export async function writeFileAtomic(target: WorkspacePath, data: string | Uint8Array): Promise<WriteReport> {
  const directory = dirname(target.absolute);
  await createParents(target, directory);
  const previous = await lstatIfExists(target.absolute);
  if (previous?.isDirectory()) {
    throw new ReinError('tool_failed', 'correctable', `${target.relative} is a directory; give the path of a file inside it`);
  }
  if (previous?.isSymbolicLink()) throw changedUnderfoot(target);
  if (previous && !previous.isFile()) throw notRegular(target.relative, specialKind(previous));

  const temporary = join(directory, `.${basename(target.absolute)}.${randomBytes(6).toString('hex')}.tmp`);
  const temp: CheckedPath = { root: target.root, absolute: temporary, relative: displayPath(target.root, temporary) };
  let handle: FileHandle;
  try {
    handle = await openVerified(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o666);
  } catch (error) {
    // A refused open may still have created the (randomly named, so ours) file where the path led.
    if (error instanceof ReinError && error.code === 'path_refused') await unlink(temporary).catch(() => undefined);
    throw error;
  }
  let bytes = 0;
  try {
    try {
      if (previous) await handle.chmod(previous.mode & 0o7777);
      await handle.writeFile(data);
      bytes = (await handle.stat()).size;
      // Without the flush, a crash right after the rename can leave an empty file behind.
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target.absolute);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw fileError(target.relative, error);
  }
  if ((await realpath(directory).catch(() => undefined)) !== directory) {
    await removeStray(target.absolute, bytes);
    throw changedUnderfoot(target);
  }
  const report: WriteReport = { created: previous === undefined, bytes };
  if (previous) report.previousBytes = previous.size;
  return report;
}

/** Maps a file-system error to a {@link ReinError} the model can act on. */
export function fileError(shown: string, error: unknown): Error {
  if (error instanceof ReinError) return error;
  const code = errnoOf(error);
  const fail = (errorCode: 'not_found' | 'permission_denied' | 'tool_failed', message: string): ReinError =>
    new ReinError(errorCode, 'correctable', message, { cause: error });
  switch (code) {
    case 'ENOENT':
      return fail('not_found', `${shown} does not exist (it may have been moved or deleted just now)`);
    case 'EISDIR':
      return fail('tool_failed', `${shown} is a directory; use list_dir to see what it contains`);
    case 'ENOTDIR':
      return fail('not_found', `${shown}: a component of the path is a file, not a directory`);
    case 'EACCES':
    case 'EPERM':
      return fail('permission_denied', `${shown}: permission denied by the file system`);
    case 'ENOSPC':
      return fail('tool_failed', `${shown}: no space left on the device`);
    case 'EROFS':
      return fail('tool_failed', `${shown}: the file system is read-only`);
    default:
      return fail('tool_failed', `${shown}: ${(error as Error)?.message ?? String(error)}`);
  }
}

async function verifyDescriptor(handle: FileHandle, target: CheckedPath): Promise<void> {
  const actual = await descriptorPath(handle.fd);
  if (actual !== undefined) {
    if (actual !== target.absolute) throw changedUnderfoot(target);
    return;
  }
  // No /proc: the descriptor and a fresh lookup of the accepted path must be one file.
  const [opened, real] = await Promise.all([handle.stat(), realpath(target.absolute).catch(() => undefined)]);
  if (real !== target.absolute || !isInside(target.root, real)) throw changedUnderfoot(target);
  const looked = await stat(real).catch(() => undefined);
  if (!looked || looked.ino !== opened.ino || looked.dev !== opened.dev) throw changedUnderfoot(target);
}

/** Where a descriptor really points, when the platform says (Linux). */
async function descriptorPath(fd: number): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    return await readlink(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** Creates the missing directories between the deepest existing one and `directory`, one by one. */
async function createParents(target: WorkspacePath, directory: string): Promise<void> {
  if (target.exists || !isInside(target.existingAncestor, directory)) return;
  let current = target.existingAncestor;
  const missing = directory === current ? [] : relative(current, directory).split(sep);
  for (const name of missing) {
    current = join(current, name);
    try {
      await mkdir(current);
    } catch (error) {
      if (errnoOf(error) !== 'EEXIST') throw fileError(displayPath(target.root, current), error);
    }
    // Re-check each level: a symlink planted here since the guard ran would lead out.
    if ((await realpath(current).catch(() => undefined)) !== current) throw changedUnderfoot(target);
  }
}

async function lstatIfExists(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** Best effort: the rename landed somewhere else; remove the file if it still looks like ours. */
async function removeStray(path: string, bytes: number): Promise<void> {
  const stats = await lstatIfExists(path).catch(() => undefined);
  if (stats?.isFile() && stats.size === bytes) await unlink(path).catch(() => undefined);
}

/** What a file that is neither regular nor a directory is, in words. */
function specialKind(stats: Stats): string {
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

function notRegular(shown: string, kind: string): ReinError {
  return new ReinError(
    'path_refused',
    'correctable',
    `${shown} is ${kind}, not a regular file: the file tools read and write only regular files (reading a pipe or a device could block or never end). Nothing was read or written.`,
  );
}

function changedUnderfoot(target: CheckedPath): ReinError {
  return new ReinError(
    'path_refused',
    'correctable',
    `${target.relative} is refused: the path changed while it was being opened (a directory on the way was renamed or replaced by a symlink), so it may now lead outside the workspace. Nothing was read or written; check the path and try again.`,
  );
}
