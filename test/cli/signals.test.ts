// Signals that stop `rein run` and `rein chat`: SIGTERM and SIGHUP stop a run as the first
// Ctrl-C does (the run is logged as aborted, its tools are stopped, --json ends with
// run_finished) and exit 128 + the signal's number; Ctrl-C in `rein chat` with stdin piped
// stops the run and keeps the session, as at a terminal. Through the real binary (needs
// `npm run build`); each test has its own project folder, and reaps what it started.
import { existsSync, readdirSync, readFileSync, watch } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, removeProject, type TempProject } from './project.js';
import { cleanEnv, isGone, rein, spawned, startRein } from './spawn.js';
import { startScriptedServer, type ScriptFunction, type ScriptedServer } from '../../src/testing/index.js';

const servers: ScriptedServer[] = [];
let dirs: TempProject;

beforeEach(async () => {
  dirs = await makeProject('rein-cli-signals-');
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

/** Resolves once `path` exists (its folder is watched: no polling). */
function fileAppears(path: string): Promise<void> {
  return new Promise((resolve) => {
    const dir = join(path, '..');
    const watcher = watch(dir, () => {
      if (!existsSync(path)) return;
      watcher.close();
      resolve();
    });
    if (existsSync(path)) {
      watcher.close();
      resolve();
    }
  });
}

/** True while `pid` runs: a zombie (dead, its parent not told yet) has stopped. */
function running(pid: number): boolean {
  if (isGone(pid)) return false;
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false; // it ended while we looked
  }
}

/** The status and reason of the runs in `store`, newest first. */
async function storedRuns(store: string): Promise<Array<{ status: string; reason?: string }>> {
  const listed = await rein(['runs', '--store', store, '--json'], { cwd: dirs.project });
  return listed.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { status: string; reason?: string });
}

/** The model calls `bash` with a long sleep (its PID written to sleep.pid), then answers. */
/** A sleep's argument no other process has: the sleep is found on the host by it (inside the sandbox its pid is the namespace's own). */
let SLEEP_MARK = '';
const sleeper: ScriptFunction = (request) =>
  request.messages.at(-1)!.role === 'tool'
    ? { text: 'slept' }
    : { toolCalls: [{ name: 'bash', arguments: { command: `sleep ${SLEEP_MARK} & echo $! > sleep.pid; wait` } }] };

/** Polls `read` until `done` holds or `ms` pass; the last value read. */
async function within<T>(ms: number, read: () => T, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + ms;
  let value = read();
  while (!done(value) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = read();
  }
  return value;
}

/** The host pids of the marked sleep (none once rein stopped it). */
function markedSleeps(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('sleep') && args[1] === SLEEP_MARK && running(Number(entry))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

describe('rein run stopped by a signal', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal}: the run is aborted (its bash process stopped, run_finished last under --json, logged as aborted) and exits ${code}`, async () => {
      // Each test its own mark: a sleep of another test is never mistaken for this one's.
      SLEEP_MARK = `60.${process.pid}${code}`;
      const s = await model(sleeper);
      const store = join(dirs.base, 'runs.db');
      // Unconfined: the check reads the sleep's PID, which in the sandbox's own PID
      // namespace is not the host's (the sandbox tests check its children end with it).
      const run = startRein(
        ['run', '--json', '--allow', 'bash', '--sandbox', 'off', '--store', store, '--base-url', s.url, 'sleep a while'],
        { cwd: dirs.project, env: cleanEnv({ HOME: dirs.home }) },
      );
      const child = spawned.at(-1)!;
      const pidFile = join(dirs.project, 'sleep.pid');
      await run.waitFor(/"type":"tool_started"/);
      await fileAppears(pidFile);
      // The pid file can be written a moment before the forked shell has become the sleep.
      const sleeps = await within(
        5000,
        () => markedSleeps(),
        (found) => found.length === 1,
      );
      expect(sleeps).toHaveLength(1);
      try {
        child.kill(signal);
        const out = await run.done;
        expect(out.code).toBe(code);
        const last = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { type: string; status: string };
        expect(last).toMatchObject({ type: 'run_finished', status: 'aborted' });
        // The sandbox's PID namespace goes with rein; the kernel ends its processes a moment later.
        expect(
          await within(
            5000,
            () => sleeps.filter(running),
            (left) => left.length === 0,
          ),
        ).toEqual([]);
        expect((await storedRuns(store))[0]).toMatchObject({ status: 'aborted' });
      } finally {
        // A rein that failed to stop it must not leave the sleep behind.
        for (const pid of sleeps.filter(running)) process.kill(pid, 'SIGKILL');
      }
    });
  }
});

describe('rein chat and signals', () => {
  /** A model that answers each prompt at once, except "wait", which it holds until released. */
  function heldModel() {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let asked!: () => void;
    const waiting = new Promise<void>((r) => (asked = r));
    const script: ScriptFunction = async (request) => {
      const last = String(request.messages.at(-1)!.content);
      if (last !== 'wait') return { text: `answer to ${last}` };
      asked();
      await held;
      return { text: 'too late' };
    };
    return { script, release, waiting };
  }

  it('with stdin piped, Ctrl-C (SIGINT) stops the run and keeps the session; at the prompt it ends the session (exit 0)', async () => {
    const m = heldModel();
    const s = await model(m.script);
    const store = join(dirs.base, 'runs.db');
    const chat = startRein(['chat', '--store', store, '--base-url', s.url], { cwd: dirs.project, env: cleanEnv({ HOME: dirs.home }) });
    const child = spawned.at(-1)!;
    try {
      await chat.waitFor(/(?:^|\n)> /);
      chat.write('wait');
      await m.waiting;
      child.kill('SIGINT');
      await chat.waitFor(/■ aborted[^\n]*\n> /);
      // The session goes on.
      chat.write('next');
      await chat.waitFor(/answer to next/);
      await chat.waitFor(/final_answer[^\n]*\n> /);
      child.kill('SIGINT');
      const out = await chat.done;
      expect(out.code).toBe(0);
      expect(out.stdout).not.toMatch(/too late/);
      expect((await storedRuns(store)).map((r) => r.status)).toEqual(['done', 'aborted']);
    } finally {
      m.release();
    }
  });

  it('SIGTERM stops the run, logs it as aborted and ends the session with exit 143', async () => {
    const m = heldModel();
    const s = await model(m.script);
    const store = join(dirs.base, 'runs.db');
    const chat = startRein(['chat', '--store', store, '--base-url', s.url], { cwd: dirs.project, env: cleanEnv({ HOME: dirs.home }) });
    try {
      await chat.waitFor(/(?:^|\n)> /);
      chat.write('wait');
      await m.waiting;
      chat.terminate();
      const out = await chat.done;
      expect(out.code).toBe(143);
      expect(out.stderr).toMatch(/■ aborted/);
      expect((await storedRuns(store))[0]).toMatchObject({ status: 'aborted' });
    } finally {
      m.release();
    }
  });
});
