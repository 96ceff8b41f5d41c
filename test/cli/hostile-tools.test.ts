// Tool calls meant to wedge the process, through the real binary (needs `npm run build`):
// a catastrophic regular expression for `grep` and a named pipe for `read_file`. Each
// run must still stop at --timeout or on SIGTERM, the process gone within seconds and
// its run logged as stopped. Each test has its own project folder and reaps what it started.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, removeProject, type TempProject } from './project.js';
import { cleanEnv, rein, startRein } from './spawn.js';
import { startScriptedServer, type ScriptFunction, type ScriptedServer } from '../../src/model/scripted/index.js';

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
    const run = startRein(['run', '--json', '--max-steps', '100000', '--store', store, '--base-url', s.url, 'search'], { cwd: dirs.project, env: cleanEnv({ HOME: dirs.home }) });
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
