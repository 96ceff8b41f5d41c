// Starts the benchmark's scripted model server in its own process (so its CPU is not
// counted in the measured process) and resolves with its base URL.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export function startServer() {
  const child = spawn(process.execPath, ['dist/testing/cli.js', '--script-module', 'bench/server-script.mjs'], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => resolve({ child, url: JSON.parse(line).url }));
    child.once('exit', (code) => reject(new Error(`scripted server exited with ${code}`)));
  });
}
