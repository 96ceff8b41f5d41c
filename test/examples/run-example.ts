/**
 * Runs a program of examples/ as a user does, through `scripts/run-example.mjs` in a Node
 * process of its own (the built package must be in dist/: `npm test` builds it first).
 * The environment holds no provider settings, so an example can only reach the scripted
 * model server it starts itself.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ExampleRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `examples/<file>`; kills it (and rejects) when it has not ended within `timeoutMs`. */
export function runExample(file: string, timeoutMs = 100_000): Promise<ExampleRun> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' };
  const child = spawn(process.execPath, ['scripts/run-example.mjs', `examples/${file}`], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`examples/${file} did not end within ${timeoutMs} ms.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
