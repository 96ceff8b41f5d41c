import { mkdir, rename, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReinError } from '../../src/errors.js';
import { resolveInWorkspace, workspaceSubject } from '../../src/workspace/paths.js';
import { makeSandbox, type Sandbox } from './helpers.js';

let box: Sandbox;
beforeAll(async () => {
  box = await makeSandbox();
  await box.write({ 'src/index.ts': 'export {};\n', 'README.md': '# hi\n', 'docs/guide.md': 'guide\n' });
  await box.link('../outside', 'escape-dir'); // a symlinked directory leading out
  await box.link('../outside/secret.txt', 'escape-file.txt'); // a symlinked file leading out
  await box.link('src', 'src-link'); // a symlink that stays inside
  await box.link('missing-target', 'dangling'); // points nowhere
  await box.link('loop-b', 'loop-a');
  await box.link('loop-a', 'loop-b');
});
afterAll(() => box.remove());

async function refusal(path: string, options: { forWrite?: boolean } = {}): Promise<ReinError> {
  const error = await resolveInWorkspace(box.root, path, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `${path} should be refused`).toBeInstanceOf(ReinError);
  return error as ReinError;
}

describe('path guard: escape attempts are refused', () => {
  it.each([
    ['../outside/secret.txt', '".." leads outside'],
    ['src/../../outside/secret.txt', '".." leads outside'],
    ['..', '".." leads outside'],
  ])('refuses the .. escape %s', async (path, why) => {
    for (const forWrite of [false, true]) {
      const error = await refusal(path, { forWrite });
      expect(error.code).toBe('path_refused');
      expect(error.kind).toBe('correctable');
      expect(error.message).toContain(why);
      expect(error.message).toContain('Only paths inside the workspace are allowed');
    }
  });

  it('refuses absolute paths outside the root, and a sibling sharing its name as a prefix', async () => {
    for (const path of ['/etc/passwd', join(box.outside, 'secret.txt'), `${box.root}-evil/x`, box.base]) {
      const error = await refusal(path, { forWrite: true });
      expect(error.code).toBe('path_refused');
      expect(error.message).toContain('absolute path outside the workspace root');
    }
  });

  it('refuses a symlinked file that resolves outside', async () => {
    const error = await refusal('escape-file.txt');
    expect(error.code).toBe('path_refused');
    expect(error.message).toContain(`escape-file.txt is a symlink to ${join(box.outside, 'secret.txt')}, outside the workspace root`);
    expect((await refusal('escape-file.txt', { forWrite: true })).code).toBe('path_refused');
  });

  it('refuses a path through a symlinked parent directory, for reading and for creating files', async () => {
    expect((await refusal('escape-dir/secret.txt')).message).toContain('escape-dir is a symlink to');
    expect((await refusal('escape-dir/new-file.txt', { forWrite: true })).code).toBe('path_refused');
    expect((await refusal('escape-dir/deeper/new.txt', { forWrite: true })).code).toBe('path_refused');
  });

  it('refuses dangling symlinks (a write would create the file wherever they point) and symlink loops', async () => {
    expect((await refusal('dangling', { forWrite: true })).message).toContain('dangling is a symlink whose target does not exist');
    expect((await refusal('loop-a')).message).toMatch(/symlink loop|loop-a/);
  });

  it('refuses NUL bytes, "~" and empty paths', async () => {
    expect((await refusal('src/index.ts\0.png')).message).toContain('NUL byte');
    expect((await refusal('~/.ssh/id_rsa')).message).toContain('"~" is not expanded');
    expect((await refusal('  ')).message).toContain('use "." for the workspace root');
  });
});

describe('path guard: paths inside are accepted', () => {
  it('resolves relative and absolute paths to the same real location', async () => {
    const relative = await resolveInWorkspace(box.root, 'src/index.ts');
    const absolute = await resolveInWorkspace(box.root, join(box.root, 'src/index.ts'));
    expect(relative).toEqual({
      root: box.root,
      absolute: join(box.root, 'src/index.ts'),
      relative: 'src/index.ts',
      exists: true,
      existingAncestor: join(box.root, 'src'),
    });
    expect(absolute).toEqual(relative);
  });

  it('accepts ".." that stays inside, "." for the root and "./" prefixes', async () => {
    expect((await resolveInWorkspace(box.root, 'src/../README.md')).relative).toBe('README.md');
    expect((await resolveInWorkspace(box.root, '.')).relative).toBe('.');
    expect((await resolveInWorkspace(box.root, './docs/guide.md')).relative).toBe('docs/guide.md');
  });

  it('follows symlinks that stay inside, to their real location', async () => {
    const target = await resolveInWorkspace(box.root, 'src-link/index.ts');
    expect(target.relative).toBe('src/index.ts');
    expect(target.absolute).toBe(join(box.root, 'src/index.ts'));
  });

  it('accepts absolute paths through the root as it was given (a symlink to the root)', async () => {
    const alias = join(box.base, 'root-alias');
    await symlink(box.root, alias);
    const target = await resolveInWorkspace(alias, join(alias, 'README.md'));
    expect(target.absolute).toBe(join(box.root, 'README.md'));
  });

  it('a missing file is not_found with a did-you-mean; for writing it is fine, with missing parents', async () => {
    const error = await refusal('src/indx.ts');
    expect(error.code).toBe('not_found');
    expect(error.message).toContain('Did you mean src/index.ts?');
    const created = await resolveInWorkspace(box.root, 'new/deep/file.txt', { forWrite: true });
    expect(created).toMatchObject({ exists: false, relative: 'new/deep/file.txt', existingAncestor: box.root });
  });

  it('a file used as a directory is not_found, saying which component is a file', async () => {
    const error = await refusal('README.md/x', { forWrite: true });
    expect(error.code).toBe('not_found');
    expect(error.message).toContain('README.md is a file, not a directory');
  });

  it('a root that does not exist is a config error', async () => {
    const error = await resolveInWorkspace(join(box.base, 'nope'), 'x').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'config' });
  });
});

describe('path guard: a path that races a rename', () => {
  it('what the guard accepted is only as good as the moment it checked: the open re-checks (see verified-io)', async () => {
    await box.write({ 'race/file.txt': 'inside\n' });
    const checked = await resolveInWorkspace(box.root, 'race/file.txt');
    await rename(join(box.root, 'race'), join(box.root, 'race-old'));
    await symlink(box.outside, join(box.root, 'race'));
    // Resolving again now sees the swap.
    expect((await refusal('race/file.txt', { forWrite: true })).code).toBe('path_refused');
    expect(checked.absolute).toBe(join(box.root, 'race/file.txt'));
  });
});

describe('workspaceSubject', () => {
  it('is the path relative to the root, forward slashes, "." for the root, symlinks resolved', async () => {
    await mkdir(join(box.root, 'sub'), { recursive: true });
    expect(workspaceSubject(box.root, 'src/index.ts')).toBe('src/index.ts');
    expect(workspaceSubject(box.root, './src//index.ts')).toBe('src/index.ts');
    expect(workspaceSubject(box.root, join(box.root, 'docs'))).toBe('docs');
    expect(workspaceSubject(box.root, '.')).toBe('.');
    expect(workspaceSubject(box.root, '')).toBe('.');
    expect(workspaceSubject(box.root, 'src-link/new.ts')).toBe('src/new.ts');
    expect(workspaceSubject(box.root, 'not/yet/there.txt')).toBe('not/yet/there.txt');
  });

  it('answers paths the guard refuses as written, normalized, so no inside rule matches them', () => {
    expect(workspaceSubject(box.root, '../outside/x')).toBe('../outside/x');
    expect(workspaceSubject(box.root, '/etc/passwd')).toBe('/etc/passwd');
    expect(workspaceSubject(box.root, 42)).toBeUndefined();
  });
});
