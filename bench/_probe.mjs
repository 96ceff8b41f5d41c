import { openSqliteStore } from 'rein/store';
import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
const dir = mkdtempSync(join(tmpdir(), 'i17-'));
const store = await openSqliteStore({ path: join(dir, 'r.db') });
const ev = (runId, seq, type, extra) => ({ type, runId, seq, at: Date.now(), ...extra });
async function oneRun(i, durability) {
  const id = `run_${i}`;
  await store.createRun({ id, model: 'x/y', config: { tools: [] }, configHash: 'h' });
  const epoch = await store.acquireLease(id);
  let seq = 0;
  await store.append(id, epoch, [ev(id, seq++, 'run_started', { input: { role: 'user', content: 'Add the numbers' } }), ev(id, seq++, 'state_changed', { from: 'idle', to: 'planning' })]);
  for (let s = 0; s < 8; s++) {
    await store.append(id, epoch, [ev(id, seq++, 'model_request', { step: s }), ev(id, seq++, 'assistant_message', { message: { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'add', arguments: { a: 1, b: 2 } }] } }), ev(id, seq++, 'state_changed', { from: 'planning', to: 'tool_calling' }), ev(id, seq++, 'tool_started', { toolCallId: 'c', name: 'add', arguments: { a: 1, b: 2 } })], { durability });
    await store.append(id, epoch, [ev(id, seq++, 'tool_finished', { result: { role: 'tool', content: [{ type: 'text', text: '3' }] } })]);
  }
  await store.append(id, epoch, [ev(id, seq++, 'run_finished', {})]);
  await store.updateRun(id, epoch, { status: 'done', reason: 'final_answer' });
}
for (const durability of ['normal', 'full', 'normal', 'full']) {
  for (let i = 0; i < 20; i++) await oneRun(`w${durability}${i}${Math.random()}`, durability);
  const c0 = process.cpuUsage(); const t0 = performance.now();
  const N = 100;
  for (let i = 0; i < N; i++) await oneRun(`${durability}${i}${Math.random()}`, durability);
  const c = process.cpuUsage(c0);
  console.log(durability, 'cpu µs/run', ((c.user + c.system) / N).toFixed(0), 'user', (c.user/N).toFixed(0), 'sys', (c.system/N).toFixed(0), 'wall ms/run', ((performance.now() - t0) / N).toFixed(2));
}
