/** `rein serve` as users start it: the real CLI (bin/rein.js) in a child process, always reaped. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/rein.js', import.meta.url));
const live = new Set<ChildProcess>();

/** A running `rein serve`. */
export interface ServeProcess {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  /** Resolves with the exit code and signal once it has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `rein serve <args>` in `cwd` and resolves once it printed its first stdout line
 * (`{"url":…}`); rejects with its output if it ends first or takes longer than `ms`.
 */
export function startServe(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; ms?: number }): Promise<ServeProcess> {
  const child = spawn(process.execPath, [bin, 'serve', ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rein serve did not print its URL in time.\nstderr: ${stderr}`)), options.ms ?? 20_000);
    child.stdout!.on('data', (d: string) => {
      const before = stdout;
      stdout += d;
      if (before.includes('\n') || !stdout.includes('\n')) return;
      clearTimeout(timer);
      try {
        const { url } = JSON.parse(stdout.split('\n')[0] as string) as { url: string };
        resolve({ url, child, exited, stderr: () => stderr, stdout: () => stdout });
      } catch (error) {
        reject(new Error(`the first stdout line is not {"url":…}: ${stdout}\n${(error as Error).message}`));
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`rein serve ended (${code ?? signal}) before printing its URL.\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/** Runs `rein serve <args>` expecting it to refuse to start: its exit code and output. */
export async function serveRefuses(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, 'serve', ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  live.delete(child);
  return { code, stdout, stderr };
}

/** Kills and reaps every `rein serve` still running. */
export async function reapServers(): Promise<void> {
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
