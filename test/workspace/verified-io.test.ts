import { constants } from 'node:fs';
import { chmod, readdir, readFile, rename, stat, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveInWorkspace } from '../../src/workspace/paths.js';
import { openVerified, readVerified, writeFileAtomic } from '../../src/workspace/verified-io.js';
import { makeSandbox, type Sandbox } from './helpers.js';

let box: Sandbox;
beforeEach(async () => {
  box = await makeSandbox();
  await box.write({ 'dir/file.txt': 'inside\n' });
  await box.write({ 'secret.txt': 'outside twin\n' }); // not used by the race, only to be sure names do not matter
});
afterEach(() => box.remove());

/** Between the guard's check and the open, `dir` becomes a symlink to the outside directory. */
async function swapDirForSymlink(): Promise<void> {
  await rename(join(box.root, 'dir'), join(box.root, 'dir-moved'));
  await symlink(box.outside, join(box.root, 'dir'));
}

describe('check-then-use: a path that races a rename is refused at open', () => {
  it('reading: the directory swapped for a symlink after the check', async () => {
    await box.write({ 'dir/secret.txt': 'inside\n' });
    const checked = await resolveInWorkspace(box.root, 'dir/secret.txt');
    await swapDirForSymlink(); // now dir/secret.txt would be outside/secret.txt
    const error = await readVerified(checked).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'path_refused', kind: 'correctable' });
    expect((error as Error).message).toContain('the path changed while it was being opened');
  });

  it('reading: the file itself swapped for a symlink after the check (O_NOFOLLOW)', async () => {
    const checked = await resolveInWorkspace(box.root, 'dir/file.txt');
    await unlink(join(box.root, 'dir/file.txt'));
    await symlink(join(box.outside, 'secret.txt'), join(box.root, 'dir/file.txt'));
    const error = await openVerified(checked, constants.O_RDONLY).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'path_refused' });
  });

  it('writing a new file: nothing is left outside', async () => {
    const checked = await resolveInWorkspace(box.root, 'dir/new.txt', { forWrite: true });
    await swapDirForSymlink();
    const error = await writeFileAtomic(checked, 'leak').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'path_refused' });
    expect((await readdir(box.outside)).sort()).toEqual(['secret.txt']);
  });

  it('writing into directories still to be created: a planted symlink on the way is refused', async () => {
    const checked = await resolveInWorkspace(box.root, 'dir/a/b/new.txt', { forWrite: true });
    await symlink(box.outside, join(box.root, 'dir/a'));
    const error = await writeFileAtomic(checked, 'leak').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'path_refused' });
    expect((await readdir(box.outside)).sort()).toEqual(['secret.txt']);
  });

  it('without a race the same steps succeed', async () => {
    const checked = await resolveInWorkspace(box.root, 'dir/file.txt');
    expect((await readVerified(checked)).toString()).toBe('inside\n');
  });
});

describe('writeFileAtomic', () => {
  it('creates missing parent directories and reports a creation', async () => {
    const target = await resolveInWorkspace(box.root, 'new/deeper/file.txt', { forWrite: true });
    expect(await writeFileAtomic(target, 'hello')).toEqual({ created: true, bytes: 5 });
    expect(await readFile(join(box.root, 'new/deeper/file.txt'), 'utf8')).toBe('hello');
  });

  it('replaces a file keeping its mode, and leaves no temporary file behind', async () => {
    const path = join(box.root, 'dir/file.txt');
    await chmod(path, 0o750);
    const target = await resolveInWorkspace(box.root, 'dir/file.txt', { forWrite: true });
    expect(await writeFileAtomic(target, 'new content\n')).toEqual({ created: false, bytes: 12, previousBytes: 7 });
    expect((await stat(path)).mode & 0o777).toBe(0o750);
    expect(await readdir(join(box.root, 'dir'))).toEqual(['file.txt']);
  });

  it('refuses to replace a directory', async () => {
    const target = await resolveInWorkspace(box.root, 'dir', { forWrite: true });
    await expect(writeFileAtomic(target, 'x')).rejects.toMatchObject({ code: 'tool_failed' });
  });
});
