/** Runs the real `rein` binary (bin/rein.js → dist/) as a child process, always reaped. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = fileURLToPath(new URL('../../bin/rein.js', import.meta.url));
/** Every child a test started, so a test can prove none is left running. */
export const spawned: ChildProcess[] = [];

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment without the caller's provider settings, so tests never reach a real API. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' };
  return { ...env, ...extra };
}

/**
 * Runs `rein <args>` (in `cwd`, default the repository); kills it (and fails) if it has not
 * ended within `timeoutMs`.
 */
export function rein(args: string[], options: { env?: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number; cwd?: string } = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd ?? root, env: options.env ?? cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  spawned.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  if (options.stdin !== undefined) child.stdin.end(options.stdin);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`rein ${args.join(' ')} did not end in time.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** True when the process no longer exists. */
export function isGone(pid: number | undefined): boolean {
  if (pid === undefined) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

/** An interactive `rein` process: write lines, wait for output, then await its end. */
export function startRein(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['bin/rein.js', ...args], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
  spawned.push(child);
  const out = { stdout: '', stderr: '' };
  const waiters: Array<() => void> = [];
  const poke = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out.stdout += d;
    poke();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out.stderr += d;
    poke();
  });
  const done = new Promise<CliRun>((resolve) => child.on('close', (code) => resolve({ code, ...out })));
  return {
    out,
    done,
    write: (line: string) => child.stdin.write(`${line}\n`),
    end: () => child.stdin.end(),
    kill: () => child.kill('SIGKILL'),
    /** Resolves once stdout + stderr match `pattern` (the test's own timeout bounds it). */
    async waitFor(pattern: RegExp): Promise<void> {
      while (!pattern.test(out.stdout + out.stderr)) {
        if (child.exitCode !== null) throw new Error(`rein exited before ${pattern}: ${out.stdout}${out.stderr}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
  };
}
