// The small items of the security review: plan mode offers only what it allows, an unknown
// /skill: is refused, a refused resume says what changed and exits 2, and the sandbox flags.
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../../src/cli/io.js';
import { openWorkbench } from '../../src/cli/workbench.js';
import { configChanges } from '../../src/loop/durable-run.js';
import { exitCodeOf } from '../../src/cli/commands/run.js';
import type { RunResult } from '../../src/events.js';
import { makeProject, removeProject, type TempProject } from './project.js';
import { rein as spawnRein } from './spawn.js';

let dirs: TempProject;
beforeEach(async () => {
  dirs = await makeProject('rein-small-');
});
afterEach(async () => {
  await removeProject(dirs);
});

const io = (): CliIO => ({
  stdin: new PassThrough(),
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  env: { PATH: process.env.PATH, HOME: dirs.home },
  signal: new AbortController().signal,
});

describe('plan mode offers only read tools', () => {
  it('--mode plan sends no write or shell tool to the model', async () => {
    const bench = await openWorkbench({ root: dirs.project, mode: 'plan', 'no-skills': true, 'no-mcp': true }, io(), []);
    try {
      const names = (bench.options.tools ?? []).map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['read_file', 'list_dir', 'glob', 'grep']));
      expect(names).not.toContain('write_file');
      expect(names).not.toContain('edit_file');
      expect(names).not.toContain('bash');
    } finally {
      await bench.close();
    }
    const other = await openWorkbench({ root: dirs.project, 'no-skills': true, 'no-mcp': true }, io(), []);
    expect((other.options.tools ?? []).map((t) => t.name)).toContain('bash');
    await other.close();
  });
});

describe('sandbox flags', () => {
  it('a bad level is a usage error naming the levels; --sandbox-network with off is refused', async () => {
    await expect(openWorkbench({ root: dirs.project, sandbox: 'full', 'no-mcp': true }, io(), [])).rejects.toThrow(
      /unknown sandbox level "full": use one of read-only, workspace-write, off/,
    );
    await expect(openWorkbench({ root: dirs.project, sandbox: 'off', 'sandbox-network': true, 'no-mcp': true }, io(), [])).rejects.toThrow(
      /--sandbox-network needs a sandbox/,
    );
  });

  it('a bad level is named before a missing API key (every flag is checked before the environment)', async () => {
    const run = await spawnRein(['run', '--sandbox', 'maybe', 'hi'], {
      cwd: dirs.project,
      stdin: '',
      env: { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1' },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown sandbox level "maybe": use one of read-only, workspace-write, off/);
    expect(run.stderr).not.toMatch(/OPENAI_API_KEY/);
  });
});

describe('unknown skills', () => {
  it('rein run "/skill:nope …" is refused with exit 2, saying which skills exist', async () => {
    const run = await spawnRein(['run', '--base-url', 'http://127.0.0.1:9/v1', '/skill:nope do it'], {
      cwd: dirs.project,
      stdin: '',
      env: { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1', OPENAI_API_KEY: 'x' },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown skill "nope" \(no skills are loaded\)/);
  });

  it('rein chat says so for the line and sends nothing', async () => {
    const chat = await spawnRein(['chat', '--base-url', 'http://127.0.0.1:9/v1'], {
      cwd: dirs.project,
      stdin: '/skill:nope do it\nexit\n',
      env: { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1', OPENAI_API_KEY: 'x' },
    });
    expect(chat.stderr).toMatch(/unknown skill "nope" \(no skills are loaded\)/);
    expect(chat.stderr).not.toMatch(/ECONNREFUSED|connection refused/i);
  });
});

describe('a refused resume says what changed', () => {
  it('names the model, the prompt and the tools that differ', () => {
    const before = {
      model: 'openai/a',
      system: 'x',
      tools: [
        { name: 'read_file', description: 'r' },
        { name: 'bash', description: 'b' },
      ],
    };
    const after = {
      model: 'openai/b',
      system: 'y',
      tools: [
        { name: 'read_file', description: 'r2' },
        { name: 'grep', description: 'g' },
      ],
    };
    expect(configChanges(before, after)).toBe(
      'the model: openai/a then, openai/b now; the system prompt; tools added: grep; tools removed: bash; tools changed (description, parameters or effect): read_file',
    );
    expect(configChanges(before, before)).toBe('its configuration');
  });

  it('exits 2, as docs/cli.md says for a run that cannot be resumed', () => {
    const refused = {
      status: 'failed',
      reason: 'fatal_error',
      error: { code: 'conflict', kind: 'fatal', message: 'the agent changed' },
    } as unknown as RunResult;
    expect(exitCodeOf(refused)).toBe(2);
    expect(exitCodeOf({ ...refused, error: { ...refused.error, code: 'auth' } } as RunResult)).toBe(1);
  });
});
