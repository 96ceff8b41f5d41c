/**
 * Running one shell command so that it always comes back: in its own process group, with
 * stdin closed, a timeout (SIGTERM to the group, SIGKILL after a grace), and — the case
 * that hangs other harnesses — no wait for pipes that a background process or daemon still
 * holds open: the run ends when the shell exits, the pipes get a short grace to drain,
 * then they are closed and the rest of the group is stopped.
 */
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { groupAlive, killGroups, killOnExit, terminateGroup } from '../process/process-group.js';
import { settlesWithin } from '../process/timing.js';
import { OutputBuffer } from './output-buffer.js';

/** What {@link runShell} needs. */
export interface ShellRunOptions {
  command: string;
  cwd: string;
  /** The shell, run as `shell -c command` (default: bash from PATH, else /bin/sh). */
  shell?: string;
  /** The complete environment of the command. */
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** After SIGTERM, how long the group gets before SIGKILL (2000). */
  killGraceMs?: number;
  /** After the shell exits, how long its pipes may stay open before they are closed (250). */
  drainMs?: number;
  /** Output kept, head and tail, in characters. */
  maxOutputChars: number;
  signal?: AbortSignal;
  /** Runs the shell inside this sandbox (`program ...args shell -c command`; see `sandbox.ts`). */
  sandbox?: { program: string; args: string[] };
}

/** How a command ended. */
export interface ShellRunResult {
  /** stdout and stderr interleaved as they arrived, cut to the budget, escape sequences removed. */
  output: string;
  /** The shell's exit code; null when it was ended by a signal. */
  exitCode: number | null;
  /** The signal that ended the shell, if one did. */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Processes of the group outlived the shell (background jobs, daemons) and were stopped. */
  stoppedBackground: boolean;
  /** Some process still held stdout/stderr open after the shell exited; the pipes were closed on it. */
  pipesHeldOpen: boolean;
  /** Characters cut from the middle of the output. */
  omittedChars: number;
  durationMs: number;
  /** The process group id (the shell's pid). */
  pgid: number | undefined;
}

/** Default of {@link ShellRunOptions.killGraceMs}. */
export const DEFAULT_KILL_GRACE_MS = 2000;
/** Default of {@link ShellRunOptions.drainMs}. */
export const DEFAULT_DRAIN_MS = 250;

let defaultShell: string | undefined;

/** Groups of commands still running, killed if this process exits first (they are detached, so nothing else would). */
const runningGroups = new Set<number>();
killOnExit(runningGroups);

function track(pgid: number): void {
  runningGroups.add(pgid);
}

/**
 * SIGKILLs the process group of every command still running, at once. A normal exit of
 * this process does it by itself; this is for embedders that end the process some other
 * way (and for tests).
 */
export function killRunningCommands(): void {
  killGroups(runningGroups);
}

/** bash when it is on PATH (or in /bin), else /bin/sh; looked up once. */
function findDefaultShell(): string {
  if (defaultShell) return defaultShell;
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/bin', '/usr/bin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'bash');
    try {
      accessSync(candidate, constants.X_OK);
      return (defaultShell = candidate);
    } catch {
      // Not here; keep looking.
    }
  }
  return (defaultShell = '/bin/sh');
}

/**
 * Runs `command` and resolves when it is over and nothing it started in its process group
 * is left. Never rejects for the command's sake: a shell that cannot start rejects.
 *
 * @example
 * const result = await runShell({ command: 'npm test', cwd, env: process.env, timeoutMs: 120_000, maxOutputChars: 12_000 });
 * result.exitCode; // 0
 */
export async function runShell(options: ShellRunOptions): Promise<ShellRunResult> {
  const started = performance.now();
  const { spawn } = await import('node:child_process');
  // Checked after the import: an abort while it loaded must not be missed.
  if (options.signal?.aborted) return notStarted(started);
  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const output = new OutputBuffer(options.maxOutputChars);
  // One pipe for both streams, as in a terminal: two pipes would lose the order between them.
  // On the same line as the command, so the shell's line numbers in error messages stay right.
  const script = `exec 2>&1; ${options.command}`;
  const shell = options.shell ?? findDefaultShell();
  const [program, args] = options.sandbox
    ? [options.sandbox.program, [...options.sandbox.args, shell, '-c', script]]
    : [shell, ['-c', script]];
  const child = spawn(program, args, {
    cwd: options.cwd,
    env: options.env,
    // Its own process group (and session): one kill(-pgid) reaches everything it starts.
    detached: process.platform !== 'win32',
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const pgid = child.pid;
  if (pgid !== undefined && process.platform !== 'win32') track(pgid);
  const streamsClosed = collect(child, output);

  let timedOut = false;
  let aborted = false;
  let stopping: Promise<unknown> | undefined;
  const stop = (): void => {
    stopping ??= pgid === undefined ? Promise.resolve() : stopGroup(child, pgid, graceMs);
  };
  // Timers above 2^31 − 1 ms fire at once in Node: clamp (to about 24 days).
  const timer = setTimeout(
    () => {
      timedOut = true;
      stop();
    },
    Math.min(options.timeoutMs, 2_147_483_647),
  );
  const onAbort = (): void => {
    aborted = true;
    stop();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    // 'exit', not 'close': 'close' waits for every holder of the pipes, and a daemon may hold them forever.
    const { code, signal } = await exited(child);
    clearTimeout(timer);
    const drained = await settlesWithin(streamsClosed, options.drainMs ?? DEFAULT_DRAIN_MS);
    if (!drained) {
      child.stdout?.destroy();
      child.stderr?.destroy();
    }
    await stopping;
    let stoppedBackground = false;
    // In a sandbox the kernel ends the whole PID namespace once its shell is gone, a moment
    // after the sandbox's own exit: what is left of the group then is not left running.
    if (options.sandbox && pgid !== undefined) await groupGone(pgid, SANDBOX_TEARDOWN_MS);
    if (pgid !== undefined && process.platform !== 'win32' && groupAlive(pgid)) {
      stoppedBackground = true;
      await terminateGroup(pgid, graceMs);
    }
    return {
      output: output.text(),
      exitCode: code,
      signal,
      timedOut,
      aborted,
      stoppedBackground,
      pipesHeldOpen: !drained,
      omittedChars: output.omittedChars,
      durationMs: performance.now() - started,
      pgid,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (pgid !== undefined) runningGroups.delete(pgid);
  }
}

/** How long a sandbox's namespace may take to go after the sandbox exited. */
const SANDBOX_TEARDOWN_MS = 500;

/** Resolves once no process of the group is left, or after `ms`. */
async function groupGone(pgid: number, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (groupAlive(pgid) && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** The result of a run aborted before it started: nothing was spawned. */
function notStarted(started: number): ShellRunResult {
  return {
    output: '',
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: true,
    stoppedBackground: false,
    pipesHeldOpen: false,
    omittedChars: 0,
    durationMs: performance.now() - started,
    pgid: undefined,
  };
}

/** Resolves when every stdio pipe has closed (all holders, daemons included, let go). */
function collect(child: ChildProcess, output: OutputBuffer): Promise<void> {
  const streams = [child.stdout, child.stderr].filter((s) => s !== null);
  return Promise.all(
    streams.map(
      (stream) =>
        new Promise<void>((resolve) => {
          const decoder = new StringDecoder('utf8');
          stream.on('data', (chunk: Buffer) => output.push(decoder.write(chunk)));
          stream.once('close', () => {
            output.push(decoder.end());
            resolve();
          });
          // A destroyed pipe may error (EPIPE, ECONNRESET): the output so far is what we have.
          stream.on('error', () => undefined);
        }),
    ),
  ).then(() => undefined);
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => {
      // 'error' without a pid: the shell never started (missing binary, bad cwd).
      if (child.pid === undefined) reject(error);
    });
  });
}

async function stopGroup(child: ChildProcess, pgid: number, graceMs: number): Promise<void> {
  if (process.platform === 'win32') {
    child.kill();
    return;
  }
  await terminateGroup(pgid, graceMs);
}
