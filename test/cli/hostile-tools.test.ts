// Tool calls meant to wedge the process, through the real binary (needs `npm run build`):
// a catastrophic regular expression for `grep` and a named pipe for `read_file`. Each
// run must still stop at --timeout or on SIGTERM, the process gone within seconds and
// its run logged as stopped. Each test has its own project folder and reaps what it started.
import { execFileSync, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, removeProject, type TempProject } from './project.js';
import { cleanEnv, rein, startRein } from './spawn.js';
import { startScriptedServer, type ScriptFunction, type ScriptedServer } from '../../src/testing/index.js';

const servers: ScriptedServer[] = [];
let dirs: TempProject;

beforeEach(async () => {
  dirs = await makeProject('rein-cli-hostile-');
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await removeProject(dirs);
});

async function model(script: ScriptFunction): Promise<ScriptedServer> {
  const s = await startScriptedServer({ script });
  servers.push(s);
  return s;
}

/** A model that calls `tool` turn after turn (arguments varied by `vary`, so no_progress does not stop it first). */
function forever(tool: string, vary: (index: number) => Record<string, unknown>): ScriptFunction {
  return (_request, { index }) => ({ toolCalls: [{ name: tool, arguments: vary(index) }] });
}

/** Stored runs of `store`, newest first. */
async function storedRuns(store: string): Promise<Array<{ status: string; reason?: string }>> {
  const listed = await rein(['runs', '--store', store, '--json'], { cwd: dirs.project });
  return listed.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { status: string; reason?: string });
}

/** `^(a+)+$` over lines of `a`s that end in another letter: 2^n steps for a backtracking engine. */
const evilGrep = (index: number) => ({ pattern: `^(a+)+$|q{${(index % 900) + 1}}`, path: 'a.txt' });

async function writeEvilFile(): Promise<void> {
  const lines = Array.from({ length: 2000 }, (_, i) => `${'a'.repeat(37 + (i % 50))}!`);
  await writeFile(join(dirs.project, 'a.txt'), `${lines.join('\n')}\n`);
}

describe('grep with a catastrophic pattern', () => {
  it('--timeout still stops the run: timeout, exit 3, logged', async () => {
    await writeEvilFile();
    const s = await model(forever('grep', evilGrep));
    const store = join(dirs.base, 'runs.db');
    const out = await rein(['run', '--json', '--timeout', '3', '--max-steps', '100000', '--store', store, '--base-url', s.url, 'search'], {
      cwd: dirs.project,
      env: cleanEnv({ HOME: dirs.home }),
      timeoutMs: 30_000,
    });
    const last = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { type: string; reason: string };
    expect(last).toMatchObject({ type: 'run_finished', reason: 'timeout' });
    expect(out.code).toBe(3);
    expect(out.stdout).toContain('No matches for');
    expect((await storedRuns(store))[0]).toMatchObject({ reason: 'timeout' });
  });

  it('SIGTERM during the searches ends the process within seconds, the run logged as aborted', async () => {
    await writeEvilFile();
    const s = await model(forever('grep', evilGrep));
    const store = join(dirs.base, 'runs.db');
    const run = startRein(['run', '--json', '--max-steps', '100000', '--store', store, '--base-url', s.url, 'search'], {
      cwd: dirs.project,
      env: cleanEnv({ HOME: dirs.home }),
    });
    await run.waitFor(/"type":"tool_finished"/, 3);
    const sent = Date.now();
    run.terminate();
    const out = await run.done;
    expect(Date.now() - sent).toBeLessThan(10_000);
    expect(out.code).toBe(143);
    expect(JSON.parse(out.stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'run_finished', status: 'aborted' });
    expect((await storedRuns(store))[0]).toMatchObject({ status: 'aborted' });
  });
});

describe('read_file on a named pipe', () => {
  it('four reads of a FIFO are refused at once, a plain file is read after them (it used to time out) and the process exits (with --timeout)', async () => {
    execFileSync('mkfifo', [join(dirs.project, 'pipe')]);
    await writeFile(join(dirs.project, 'plain.txt'), 'plain text\n');
    const s = await model((_request, { index }) =>
      index < 4
        ? { toolCalls: [{ name: 'read_file', arguments: { path: 'pipe', offset: index + 1 } }] }
        : index === 4
          ? { toolCalls: [{ name: 'read_file', arguments: { path: 'plain.txt' } }] }
          : { text: 'done' },
    );
    const store = join(dirs.base, 'runs.db');
    const out = await rein(['run', '--json', '--timeout', '20', '--store', store, '--base-url', s.url, 'read'], {
      cwd: dirs.project,
      env: cleanEnv({ HOME: dirs.home }),
      timeoutMs: 30_000,
    });
    expect(out.code).toBe(0);
    expect(out.stdout.match(/is a named pipe \(FIFO\), not a regular file/g)?.length).toBe(4);
    expect(out.stdout).toContain('plain text');
    expect(JSON.parse(out.stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'run_finished', reason: 'final_answer' });
  });

  it('SIGTERM while the model reads pipes turn after turn ends the process within seconds, logged as aborted', async () => {
    execFileSync('mkfifo', [join(dirs.project, 'pipe')]);
    await writeFile(join(dirs.project, 'plain.txt'), 'plain text\n');
    // A plain read between pipes keeps the tool-error breaker (5 failures in a row) from stopping the run first.
    const s = await model(forever('read_file', (index) => ({ path: index % 2 === 0 ? 'pipe' : 'plain.txt', offset: 1, limit: index + 1 })));
    const store = join(dirs.base, 'runs.db');
    const run = startRein(['run', '--json', '--max-steps', '100000', '--store', store, '--base-url', s.url, 'read'], {
      cwd: dirs.project,
      env: cleanEnv({ HOME: dirs.home }),
    });
    await run.waitFor(/"type":"tool_finished"/, 5);
    const sent = Date.now();
    run.terminate();
    const out = await run.done;
    expect(Date.now() - sent).toBeLessThan(10_000);
    expect(out.code).toBe(143);
    expect((await storedRuns(store))[0]).toMatchObject({ status: 'aborted' });
  });
});

describe('deeply nested tool arguments', () => {
  it('5,000 levels: the call is refused naming the limit, the run goes on to its answer, stored as done', async () => {
    const deep = `{"path":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const s = await model((_request, { index }) =>
      index === 0 ? { toolCalls: [{ name: 'read_file', arguments: deep }] } : { text: 'done' },
    );
    const store = join(dirs.base, 'runs.db');
    const out = await rein(['run', '--json', '--store', store, '--base-url', s.url, 'go'], {
      cwd: dirs.project,
      env: cleanEnv({ HOME: dirs.home }),
    });
    expect(out.stderr).not.toContain('Maximum call stack');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('nested more than 64 levels deep');
    const last = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { type: string; runId: string };
    expect(last).toMatchObject({ type: 'run_finished', reason: 'final_answer' });
    expect(last.runId).toMatch(/^run_/);
    expect((await storedRuns(store))[0]).toMatchObject({ status: 'done', reason: 'final_answer' });
  });
});

describe('the whole-run timeout of the CLI', () => {
  it('is on by default (3600 s), set by --timeout, and off with --timeout none', async () => {
    const s = await model(() => ({ text: 'done' }));
    const limitsOf = async (extra: string[]) => {
      const out = await rein(['run', '--json', '--store', join(dirs.base, 'runs.db'), '--base-url', s.url, ...extra, 'hi'], {
        cwd: dirs.project,
        env: cleanEnv({ HOME: dirs.home }),
      });
      expect(out.code).toBe(0);
      return (JSON.parse(out.stdout.trim().split('\n')[0]!) as { limits: { timeoutMs?: number } }).limits;
    };
    expect((await limitsOf([])).timeoutMs).toBe(3_600_000);
    expect((await limitsOf(['--timeout', '7'])).timeoutMs).toBe(7_000);
    expect((await limitsOf(['--timeout', 'none'])).timeoutMs).toBeUndefined();
  });
});

describe('a signal while the approval question waits for an answer', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal} at the prompt ends rein within seconds (exit ${code}), the run logged as aborted`, async () => {
      const s = await model((request) =>
        request.messages.at(-1)!.role === 'tool'
          ? { text: 'written' }
          : { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'hi' } }] },
      );
      const store = join(dirs.base, 'runs.db');
      // stdin stays open and silent: only the signal can end the question.
      const session = startRein(['chat', '--store', store, '--base-url', s.url], { cwd: dirs.project, env: cleanEnv({ HOME: dirs.home }) });
      await session.waitFor(/(?:^|\n)> /);
      session.write('write a note');
      await session.waitFor(/allow\? \[y\]es, \[n\]o/);
      const sent = Date.now();
      session.signal(signal);
      const out = await session.done;
      expect(Date.now() - sent).toBeLessThan(10_000);
      expect(out.code).toBe(code);
      expect((await storedRuns(store))[0]).toMatchObject({ status: 'aborted' });
    });
  }
});

describe('after the run has ended', () => {
  it('work still holding the event loop (a tool that ignored its deadline) does not keep rein running', async () => {
    const s = await model(() => ({ text: 'done' }));
    const cli = fileURLToPath(new URL('../../dist/bundle/cli.js', import.meta.url));
    // A stray referenced interval stands for a tool's blocked read: without rein's exit
    // after its command ends, this process would never exit.
    const program = `setInterval(() => {}, 1000); const { main } = await import(${JSON.stringify(cli)}); await main(process.argv.slice(1));`;
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', program, 'run', '--json', '--store', join(dirs.base, 'runs.db'), '--base-url', s.url, 'hi'],
      {
        cwd: dirs.project,
        env: cleanEnv({ HOME: dirs.home }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (c, sig) => resolve([c, sig])),
    );
    clearTimeout(killer);
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'run_finished', reason: 'final_answer' });
  });
});
