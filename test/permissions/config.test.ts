import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReinError } from '../../src/errors.js';
import { loadPermissionsConfig, mergePermissionOptions, permissionsFromFlags } from '../../src/permissions/config.js';
import { createPermissionPolicy } from '../../src/permissions/policy.js';
import { all } from './helpers.js';

let root: string;
let home: string;
let repo: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'rein-permissions-'));
  home = join(root, 'home');
  repo = join(root, 'work', 'repo');
  await mkdir(join(repo, '.git'), { recursive: true });
  await mkdir(join(repo, 'packages', 'app'), { recursive: true });
  await mkdir(home, { recursive: true });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function settings(dir: string, content: unknown): Promise<string> {
  await mkdir(join(dir, '.rein'), { recursive: true });
  const file = join(dir, '.rein', 'settings.json');
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('loadPermissionsConfig', () => {
  it('no settings files: empty options, no diagnostics', async () => {
    expect(await loadPermissionsConfig({ cwd: repo, home })).toEqual({ options: {}, diagnostics: [], files: [] });
  });

  it('merges project files nearest first, then the user file', async () => {
    const user = await settings(home, { permissions: { mode: 'acceptEdits', allow: ['grep'], deny: ['bash(rm *)'], ask: ['github__*'] } });
    const top = await settings(repo, { permissions: { allow: ['bash(git status*)'], deny: ['read_file(.env)'] } });
    const near = await settings(join(repo, 'packages', 'app'), { permissions: { mode: 'plan', allow: ['write_file(src/**)'] } });
    const loaded = await loadPermissionsConfig({ cwd: join(repo, 'packages', 'app'), home });
    expect(loaded.diagnostics).toEqual([]);
    expect(loaded.files).toEqual([near, top, user]);
    expect(loaded.options).toEqual({
      mode: 'plan',
      allow: ['write_file(src/**)', 'bash(git status*)', 'grep'],
      deny: ['read_file(.env)', 'bash(rm *)'],
      ask: ['github__*'],
    });
  });

  it('a deny from the user file wins over a project allow', async () => {
    await settings(home, { permissions: { deny: ['bash(git push*)'] } });
    await settings(repo, { permissions: { allow: ['bash'] } });
    const { options } = await loadPermissionsConfig({ cwd: repo, home });
    const policy = createPermissionPolicy(options);
    expect(policy.decide({ name: 'bash', arguments: { command: 'git push' } }, all.bash)).toMatchObject({
      decision: 'deny',
      rule: 'deny bash(git push*)',
    });
    expect(policy.decide({ name: 'bash', arguments: { command: 'ls' } }, all.bash)).toMatchObject({
      decision: 'allow',
      rule: 'allow bash',
    });
  });

  it('stops looking upwards at the repository root', async () => {
    await settings(join(root, 'work'), { permissions: { allow: ['bash'] } });
    const { options, files } = await loadPermissionsConfig({ cwd: join(repo, 'packages', 'app'), home });
    expect(options).toEqual({});
    expect(files).toEqual([]);
  });

  it('outside a repository only the working directory counts', async () => {
    const outside = join(root, 'work', 'loose', 'deeper');
    await mkdir(outside, { recursive: true });
    await settings(join(root, 'work', 'loose'), { permissions: { allow: ['bash'] } });
    const here = await settings(outside, { permissions: { allow: ['grep'] } });
    const { options, files } = await loadPermissionsConfig({ cwd: outside, home });
    expect(options).toEqual({ allow: ['grep'] });
    expect(files).toEqual([here]);
  });

  it('the user file is read once when home is the repository', async () => {
    await mkdir(join(home, '.git'));
    const user = await settings(home, { permissions: { allow: ['grep'] } });
    const { options, files } = await loadPermissionsConfig({ cwd: home, home });
    expect(files).toEqual([user]);
    expect(options).toEqual({ allow: ['grep'] });
  });

  it('a project file cannot choose yolo; the user file can', async () => {
    const project = await settings(repo, { permissions: { mode: 'yolo', allow: ['grep'] } });
    let loaded = await loadPermissionsConfig({ cwd: repo, home });
    expect(loaded.options).toEqual({ allow: ['grep'] });
    expect(loaded.diagnostics).toEqual([
      {
        file: project,
        key: 'permissions.mode',
        message: expect.stringMatching(
          /^a project settings file cannot choose yolo: set it in ~\/\.rein\/settings\.json or pass --mode yolo/,
        ),
      },
    ]);
    await settings(home, { permissions: { mode: 'yolo' } });
    loaded = await loadPermissionsConfig({ cwd: repo, home });
    expect(loaded.options.mode).toBe('yolo');
  });

  it('reports each problem with file and key, and keeps every good rule', async () => {
    const file = await settings(repo, {
      model: 'openai/gpt-4o',
      permissions: {
        allow: ['read_file', 'bash(git status', 42, 'grep'],
        deny: 'bash(rm *)',
        ask: ['write_file(src/**)'],
        mode: 'careful',
        defaults: { execute: 'deny', write: 'sometimes', network: 'ask' },
        alow: ['typo'],
      },
    });
    const { options, diagnostics } = await loadPermissionsConfig({ cwd: repo, home });
    expect(options).toEqual({ allow: ['read_file', 'grep'], ask: ['write_file(src/**)'], defaults: { execute: 'deny' } });
    expect(diagnostics.map((d) => [d.file, d.key])).toEqual([
      [file, 'permissions.alow'],
      [file, 'permissions.allow[1]'],
      [file, 'permissions.allow[2]'],
      [file, 'permissions.deny'],
      [file, 'permissions.mode'],
      [file, 'permissions.defaults.write'],
      [file, 'permissions.defaults.network'],
    ]);
    expect(diagnostics[0]!.message).toBe('unknown key: permissions takes mode, allow, ask, deny, defaults');
    expect(diagnostics[1]!.message).toMatch(
      /^bad permission rule "bash\(git status": the argument pattern is not closed.*\(this rule is skipped; the others apply\)$/,
    );
    expect(diagnostics[2]!.message).toMatch(/a rule must be a string/);
    expect(diagnostics[3]!.message).toBe('must be an array of rules such as ["bash(git status*)"], got string');
    expect(diagnostics[4]!.message).toMatch(/unknown permission mode "careful"/);
    expect(diagnostics[5]!.message).toBe('must be "allow", "ask" or "deny", got "sometimes"');
  });

  it('bad JSON in one file is reported and the other file still applies', async () => {
    const broken = await settings(repo, '{ "permissions": { "allow": ["grep"], } ');
    await settings(home, { permissions: { deny: ['bash(rm *)'] } });
    const { options, diagnostics } = await loadPermissionsConfig({ cwd: repo, home });
    expect(options).toEqual({ deny: ['bash(rm *)'] });
    expect(diagnostics).toEqual([
      { file: broken, message: expect.stringMatching(/^not valid JSON \(.+\): fix the syntax; its permissions are ignored until then$/) },
    ]);
  });

  it('a settings file that starts with a byte-order mark keeps its rules', async () => {
    const file = await settings(repo, `\uFEFF${JSON.stringify({ permissions: { allow: ['grep'], deny: ['bash(rm *)'] } })}`);
    expect(await loadPermissionsConfig({ cwd: repo, home })).toEqual({
      options: { allow: ['grep'], deny: ['bash(rm *)'] },
      diagnostics: [],
      files: [file],
    });
  });

  it('bad JSON is reported with its line and column', async () => {
    const broken = await settings(repo, '{\n  "permissions": {\n    "allow": ["grep"],\n  }\n}');
    const { diagnostics } = await loadPermissionsConfig({ cwd: repo, home });
    expect(diagnostics).toEqual([
      { file: broken, message: expect.stringMatching(/^not valid JSON \(line 4, column 3: .+\): fix the syntax/) },
    ]);
  });

  it('a file that is not an object, or a permissions section that is not one, is reported', async () => {
    const file = await settings(repo, '["allow"]');
    const user = await settings(home, { permissions: ['grep'] });
    const { diagnostics } = await loadPermissionsConfig({ cwd: repo, home });
    expect(diagnostics).toEqual([
      { file, message: 'must hold a JSON object such as {"permissions": {"allow": ["read_file"]}}' },
      { file: user, key: 'permissions', message: 'must be an object with mode, allow, ask, deny or defaults' },
    ]);
  });

  it('a settings file without permissions is fine', async () => {
    const file = await settings(repo, { model: 'x' });
    expect(await loadPermissionsConfig({ cwd: repo, home })).toEqual({ options: {}, diagnostics: [], files: [file] });
  });

  it('an unreadable settings path is reported', async () => {
    await mkdir(join(repo, '.rein', 'settings.json'), { recursive: true });
    const { diagnostics } = await loadPermissionsConfig({ cwd: repo, home });
    expect(diagnostics).toEqual([
      {
        file: join(repo, '.rein', 'settings.json'),
        message: expect.stringMatching(/^cannot read it \(.*EISDIR.*\): fix its permissions or remove it$/),
      },
    ]);
  });
});

describe('permissionsFromFlags', () => {
  it('takes repeated flags and comma lists, keeping commas inside parentheses and braces', () => {
    expect(
      permissionsFromFlags({
        allow: ['read_file,grep', 'bash(git commit -m "a, b")', '{read_file,grep}'],
        deny: [' bash(rm *) '],
        mode: 'accept-edits',
      }),
    ).toEqual({
      allow: ['read_file', 'grep', 'bash(git commit -m "a, b")', '{read_file,grep}'],
      deny: ['bash(rm *)'],
      mode: 'acceptEdits',
    });
  });

  it('no flags: no options', () => {
    expect(permissionsFromFlags({})).toEqual({});
    expect(permissionsFromFlags({ allow: [], ask: [''] })).toEqual({});
  });

  it('names every bad flag at once in one config error', () => {
    let error: unknown;
    try {
      permissionsFromFlags({ allow: ['bash(git status'], deny: ['read file'], mode: 'fast' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ReinError);
    expect((error as ReinError).code).toBe('config');
    const lines = (error as ReinError).message.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^--allow: bad permission rule "bash\(git status"/);
    expect(lines[1]).toMatch(/^--deny: bad permission rule "read file"/);
    expect(lines[2]).toMatch(/^--mode: unknown permission mode "fast"/);
  });
});

describe('mergePermissionOptions', () => {
  it('flags first: their mode and defaults win, rule lists add up in order', () => {
    const flags = permissionsFromFlags({ allow: ['grep'], mode: 'plan' });
    const files = {
      mode: 'acceptEdits' as const,
      allow: ['read_file'],
      deny: ['bash(rm *)'],
      defaults: { execute: 'deny' as const, read: 'ask' as const },
    };
    expect(mergePermissionOptions(flags, files, { defaults: { execute: 'allow' as const, write: 'deny' as const } })).toEqual({
      mode: 'plan',
      allow: ['grep', 'read_file'],
      deny: ['bash(rm *)'],
      defaults: { execute: 'deny', read: 'ask', write: 'deny' },
    });
  });

  it('nothing merged is nothing', () => {
    expect(mergePermissionOptions()).toEqual({});
    expect(mergePermissionOptions({}, {})).toEqual({});
  });
});
