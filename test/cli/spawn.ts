/** Runs the real `rein` binary (bin/rein.js → the bundled CLI in dist/bundle/) as a child process, always reaped. */
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
export function rein(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<CliRun> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? root,
    env: options.env ?? cleanEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  spawned.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // Stdin ends at once unless given, as for a command run from a script (`< /dev/null`).
  child.stdin.end(options.stdin ?? '');
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

/**
 * An interactive `rein` process (in `cwd`, default the repository): write lines, wait for
 * output, then await its end.
 */
export function startRein(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}) {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? root,
    env: options.env ?? cleanEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
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
  // A waiter must hear of the end too, or it would wait for output that never comes.
  child.on('close', poke);
  return {
    out,
    done,
    write: (line: string) => child.stdin.write(`${line}\n`),
    end: () => child.stdin.end(),
    kill: () => child.kill('SIGKILL'),
    /** Asks rein to stop, as a service manager does. */
    terminate: () => child.kill('SIGTERM'),
    /** Sends `signal` (SIGTERM, SIGHUP, …). */
    signal: (signal: NodeJS.Signals) => child.kill(signal),
    /** Closes the reading end of rein's stdout (or stderr), as `rein … | head` does once it has enough. */
    closeStdout: () => child.stdout.destroy(),
    closeStderr: () => child.stderr.destroy(),
    /**
     * Resolves once `pattern` has matched `times` times (in stdout and stderr, each read on
     * its own); fails with the output so far if rein ends first or after 20 s.
     */
    async waitFor(pattern: RegExp, times = 1): Promise<void> {
      const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
      const count = (text: string): number => (text.match(global) ?? []).length;
      const started = Date.now();
      while (count(out.stdout) + count(out.stderr) < times) {
        const what = `${pattern} ×${times}:\nstdout: ${out.stdout}\nstderr: ${out.stderr}`;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`rein ${args.join(' ')} exited before ${what}`);
        if (Date.now() - started > 20_000) throw new Error(`rein ${args.join(' ')} did not print ${what}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 1000);
        });
      }
    },
  };
}
