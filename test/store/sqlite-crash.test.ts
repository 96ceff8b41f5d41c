// WAL with synchronous=NORMAL survives kill -9: every append a process saw succeed is in
// the file after the process is killed mid-write. The writer runs the built store
// (dist/, as `npm test` builds it first) in a child process.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'rein-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Appends one event per transaction, printing each seq once its append returned, until killed
// (or, bounded, after 100,000 events).
const writer = `
const { SqliteStore } = await import(process.argv[1]);
const store = new SqliteStore({ path: process.argv[2] });
await store.createRun({ id: 'run_crash', model: 'm/m', config: {}, configHash: 'h' });
const epoch = await store.acquireLease('run_crash');
for (let seq = 0; seq < 100000; seq++) {
  const event = { type: 'model_request', step: seq, attempt: 1, messages: seq, pad: 'x'.repeat(400), runId: 'run_crash', seq, at: Date.now() };
  await store.append('run_crash', epoch, [event], seq % 10 === 0 ? { durability: 'full' } : {});
  process.stdout.write(seq + '\\n');
}
`;

it('keeps every acknowledged append when the writing process is killed with SIGKILL', async () => {
  const module = join(root, 'dist/store/sqlite.js');
  expect(existsSync(module), 'dist/ is missing: run `npm run build` (npm test does)').toBe(true);
  const path = join(dir, 'crash.db');
  const child = spawn(process.execPath, ['--input-type=module', '-e', writer, module, path], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const acknowledged = await new Promise<number>((resolve, reject) => {
    let buffer = '';
    let last = -1;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffer += d;
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      if (lines.length > 0) last = Number(lines[lines.length - 1]);
      // Killed while it keeps writing: the next append is in flight or about to be.
      if (last >= 300 && child.exitCode === null && !child.killed) {
        child.kill('SIGKILL');
        resolve(last);
      }
    });
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`the writer ended on its own (code ${code}): ${stderr}`));
    });
  });
  await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('exit', resolve)));

  const store = new SqliteStore({ path });
  try {
    expect(store.pragma('integrity_check')).toBe('ok');
    const record = await store.getRun('run_crash');
    expect(record!.eventCount).toBeGreaterThan(acknowledged);
    const log = await store.loadEvents('run_crash');
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: record!.eventCount }, (_, i) => i));
  } finally {
    await store.close();
  }
});
