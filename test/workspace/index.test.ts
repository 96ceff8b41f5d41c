import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReinError } from '../../src/errors.js';
import { assertValidTool } from '../../src/tools/define.js';
import { createWorkspaceTools, WORKSPACE_TOOL_NAMES } from '../../src/workspace/index.js';
import { makeSandbox, type Sandbox } from './helpers.js';

let box: Sandbox;
beforeAll(async () => {
  box = await makeSandbox();
  await box.write({ 'src/a.ts': '' });
  await box.link('src', 'src-link');
});
afterAll(() => box.remove());

describe('createWorkspaceTools', () => {
  it('creates the seven tools with their risk and effect', () => {
    const tools = createWorkspaceTools({ root: box.root });
    expect(tools.map((t) => [t.name, t.risk, t.effect])).toEqual([
      ['read_file', 'read', 'pure'],
      ['write_file', 'write', 'idempotent'],
      ['edit_file', 'write', 'unsafe'],
      ['list_dir', 'read', 'pure'],
      ['glob', 'read', 'pure'],
      ['grep', 'read', 'pure'],
      ['bash', 'execute', 'unsafe'],
    ]);
    for (const tool of tools) {
      expect(() => assertValidTool(tool)).not.toThrow();
      expect(tool.description.length).toBeGreaterThan(100);
      expect(tool.parameters).toMatchObject({ type: 'object', additionalProperties: false });
    }
    expect(tools.filter((t) => t.preview).map((t) => t.name)).toEqual(['write_file', 'edit_file']);
  });

  it('creates only the tools asked for, and refuses unknown names', () => {
    expect(createWorkspaceTools({ root: box.root, tools: ['grep', 'read_file'] }).map((t) => t.name)).toEqual(['read_file', 'grep']);
    expect(() => createWorkspaceTools({ root: box.root, tools: ['shell'] })).toThrow(
      /unknown workspace tool "shell": choose from read_file/,
    );
    expect(WORKSPACE_TOOL_NAMES).toHaveLength(7);
  });

  it('gives permission subjects: paths relative to the root for file tools, the command for bash', () => {
    const tools = Object.fromEntries(createWorkspaceTools({ root: box.root }).map((t) => [t.name, t]));
    expect(tools.write_file!.permissionSubject!({ path: 'src/new.ts', content: '' })).toBe('src/new.ts');
    expect(tools.edit_file!.permissionSubject!({ path: `${box.root}/src/a.ts` })).toBe('src/a.ts');
    expect(tools.read_file!.permissionSubject!({ path: 'src-link/a.ts' })).toBe('src/a.ts');
    expect(tools.list_dir!.permissionSubject!({})).toBe('.');
    expect(tools.glob!.permissionSubject!({ pattern: '**', path: 'src' })).toBe('src');
    expect(tools.grep!.permissionSubject!({ pattern: 'x' })).toBe('.');
    expect(tools.bash!.permissionSubject!({ command: 'git status --short' })).toBe('git status --short');
  });

  it('defaults the root to the working directory', () => {
    const tools = createWorkspaceTools({ tools: ['read_file'] });
    expect(tools[0]!.permissionSubject!({ path: join(process.cwd(), 'package.json') })).toBe('package.json');
  });

  it('refuses a root that is missing or a file, and bad limits, as config errors', () => {
    for (const options of [
      { root: join(box.root, 'nope') },
      { root: join(box.root, 'src/a.ts') },
      { root: box.root, maxReadBytes: 0 },
      { root: box.root, bash: { timeoutMs: -1 } },
    ]) {
      let error: unknown;
      try {
        createWorkspaceTools(options);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ReinError);
      expect(error).toMatchObject({ code: 'config', kind: 'fatal' });
    }
  });
});

describe('workspace modules stay cheap to import', () => {
  it('load picomatch, ignore and child_process only when a tool runs', () => {
    const dir = fileURLToPath(new URL('../../src/workspace/', import.meta.url));
    const offenders = readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .filter((name) => /^import (?!type)[^;]*from '(picomatch|ignore|node:child_process)'/m.test(readFileSync(join(dir, name), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
