/**
 * `rein worker` and `rein submit` as users start them: the real CLI (bin/rein.js) in child
 * processes, every one reaped (`reapWorkers` in afterAll). A worker is ready once it printed
 * {"worker": id}; its stderr lines say which runs it took and how they ended.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RunStore } from '../../src/store/types.js';

const bin = fileURLToPath(new URL('../../bin/rein.js', import.meta.url));
const live = new Set<ChildProcess>();

export interface WorkerProcess {
  id: string;
  pid: number;
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `rein worker <args>` in `cwd`; resolves once it takes jobs. */
export function startWorker(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; ms?: number }): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [bin, 'worker', ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rein worker did not start in time.\nstderr: ${stderr}`)), options.ms ?? 30_000);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      const before = stdout;
      stdout += d;
      if (before.includes('\n') || !stdout.includes('\n')) return;
      clearTimeout(timer);
      try {
        const { worker } = JSON.parse(stdout.split('\n')[0] as string) as { worker: string };
        resolve({ id: worker, pid: child.pid as number, child, exited, stderr: () => stderr });
      } catch (error) {
        reject(new Error(`the first stdout line is not {"worker":…}: ${stdout}\n${(error as Error).message}`));
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`rein worker ended (${code ?? signal}) before it started.\nstderr: ${stderr}`));
    });
  });
}

/** Runs `rein <args>` to its end. */
export function rein(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; ms?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rein ${args.join(' ')} did not end in time.\nstderr: ${stderr}`));
    }, options.ms ?? 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      live.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/** kill -9, resolved once the process is gone. */
export async function killHard(worker: WorkerProcess): Promise<void> {
  if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
  await worker.exited;
}

/** Kills and reaps every child still running. */
export async function reapWorkers(): Promise<void> {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** Polls `probe` every 100 ms until it gives a value (worker processes take seconds to act). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until run `runId`'s record has `status`. */
export function runStatus(store: RunStore, runId: string, status: string): Promise<true> {
  return until(`run ${runId} ${status}`, async () => ((await store.getRun(runId))?.status === status ? true : undefined));
}
