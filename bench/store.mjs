// `npm run bench:store` (and part of `npm run bench`): what the run store costs, on SQLite
// (a temp file) and Postgres (a fresh schema, dropped afterwards), through the public
// store API of dist/. Targets from the issue: SQLite append ≤ 200 µs per event when batched,
// resume (load) of a 1,000-event run ≤ 50 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresStore, openSqliteStore } from '../dist/store/index.js';
import { resumeStateFrom } from '../dist/loop/resume-state.js';

const PG_URL = process.env.REIN_BENCH_DATABASE_URL || process.env.REIN_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const LOAD_SAMPLES = 9;
const LIST_SAMPLES = 9;
const RUNS = 10_000;

const text = (n) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45)).slice(0, n);

/** One realistic event per seq, cycling through a turn's kinds (about 340 B of JSON on average). */
function event(runId, seq) {
  const base = { runId, seq, at: 1_700_000_000_000 + seq };
  const step = Math.floor(seq / 10);
  if (seq === 0) {
    const limits = { maxSteps: 200, noProgressRepeats: 3, maxConsecutiveToolErrors: 5 };
    return {
      type: 'run_started',
      traceId: '0'.repeat(32),
      input: { role: 'user', content: 'read the files' },
      history: [],
      model: { provider: 'openai', id: 'gpt-4o-mini', api: 'openai-chat', baseUrl: 'https://api.openai.com/v1' },
      tools: ['read_file'],
      limits,
      ...base,
    };
  }
  switch (seq % 10) {
    case 0:
      return { type: 'state_changed', from: 'observing', to: 'planning', step, ...base };
    case 1:
      return { type: 'model_request', step, attempt: 1, messages: 2 * step + 1, ...base };
    case 2:
      return {
        type: 'assistant_message',
        step,
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: text(200) },
            { type: 'tool_call', id: `call_${seq}`, name: 'read_file', arguments: { path: `src/file-${seq}.ts` } },
          ],
          api: 'openai-chat',
          provider: 'openai',
          model: 'gpt-4o-mini',
          usage: { input: 1200, output: 80, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 1280 },
          stopReason: 'tool_use',
        },
        ...base,
      };
    case 3:
      return { type: 'state_changed', from: 'planning', to: 'tool_calling', step, ...base };
    case 4:
      return {
        type: 'tool_started',
        step,
        toolCallId: `call_${seq - 2}`,
        name: 'read_file',
        arguments: { path: `src/file-${seq}.ts` },
        idempotencyKey: `${runId}:${seq - 2}:0`,
        ...base,
      };
    case 5:
      return {
        type: 'tool_finished',
        step,
        toolCallId: `call_${seq - 3}`,
        name: 'read_file',
        result: {
          role: 'tool',
          toolCallId: `call_${seq - 3}`,
          toolName: 'read_file',
          content: [{ type: 'text', text: text(1500) }],
          isError: false,
        },
        durationMs: 4,
        ...base,
      };
    case 6:
      return { type: 'state_changed', from: 'tool_calling', to: 'observing', step, ...base };
    default:
      return { type: 'model_request', step, attempt: seq % 10, messages: 2 * step + 2, ...base };
  }
}

const events = (runId, from, count) => Array.from({ length: count }, (_, i) => event(runId, from + i));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const newRun = (id, createdAt) => ({
  id,
  model: 'openai/gpt-4o-mini',
  config: { tools: ['read_file'], maxSteps: 20 },
  configHash: 'bench',
  createdAt,
});

async function started(store, id) {
  await store.createRun(newRun(id));
  return store.acquireLease(id);
}

/** µs per event appending `total` events in appends of `batch`. */
async function appendCost(store, label, batch, total, durability) {
  const id = `run_${label}_${batch}_${durability}`;
  const epoch = await started(store, id);
  const t = performance.now();
  for (let seq = 0; seq < total; seq += batch) await store.append(id, epoch, events(id, seq, batch), { durability });
  return ((performance.now() - t) * 1000) / total;
}

async function measure(store, label) {
  // Warm-up: JIT, statement caches, the pool's connections.
  await appendCost(store, `${label}_warm`, 10, 500, 'normal');
  const batched = await appendCost(store, label, 10, 3000, 'normal');
  const single = await appendCost(store, label, 1, 1000, 'normal');
  const singleFull = await appendCost(store, label, 1, 500, 'full');

  const resumeId = `run_${label}_resume`;
  const epoch = await started(store, resumeId);
  for (let seq = 0; seq < 1000; seq += 10) await store.append(resumeId, epoch, events(resumeId, seq, 10));
  const loads = [];
  for (let i = 0; i < LOAD_SAMPLES; i++) {
    const t = performance.now();
    await store.getRun(resumeId);
    const log = await store.loadEvents(resumeId);
    // What agent.resume does before it asks the model again: fold the log into its state.
    const state = resumeStateFrom(log);
    loads.push(performance.now() - t);
    if (log.length !== 1000 || state.totals.steps !== 100) throw new Error(`loaded ${log.length} events, ${state.totals.steps} steps`);
  }

  // 10,000 runs: 60% done, 20% stopped, 10% failed, 10% running; 8 writers at a time.
  const statuses = ['done', 'done', 'done', 'done', 'done', 'done', 'stopped', 'stopped', 'failed', 'running'];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < RUNS) {
        const n = next++;
        const id = `run_${label}_list_${String(n).padStart(5, '0')}`;
        await store.createRun(newRun(id, 1_700_000_000_000 + n * 1000));
        const status = statuses[n % 10];
        if (status !== 'running') await store.updateRun(id, 0, { status, reason: status === 'failed' ? 'fatal_error' : 'final_answer' });
      }
    }),
  );
  const timeList = async (filter) => {
    const samples = [];
    for (let i = 0; i < LIST_SAMPLES; i++) {
      const t = performance.now();
      const runs = await store.listRuns(filter);
      samples.push(performance.now() - t);
      if (runs.length !== 50) throw new Error(`listed ${runs.length} runs`);
    }
    return median(samples);
  };
  return {
    batched,
    single,
    singleFull,
    resumeMs: median(loads),
    listNewestMs: await timeList({ limit: 50 }),
    listFailedMs: await timeList({ status: 'failed', limit: 50 }),
    listPageMs: await timeList({ limit: 50, before: 1_700_000_000_000 + 5000 * 1000 }),
  };
}

const results = {};
const dir = mkdtempSync(join(tmpdir(), 'rein-bench-store-'));
try {
  const sqlite = await openSqliteStore({ path: join(dir, 'rein.db') });
  try {
    results.SQLite = await measure(sqlite, 'sqlite');
  } finally {
    await sqlite.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.stderr.write('store bench: SQLite measured\n');

const schema = `rein_bench_${process.pid}`;
const admin = new pg.Client({ connectionString: PG_URL });
let pgSkipped;
try {
  await admin.connect();
} catch (error) {
  pgSkipped = `Postgres not reachable at ${PG_URL} (${error.message}): not measured`;
}
if (!pgSkipped) {
  try {
    const store = await openPostgresStore({ url: PG_URL, schema, pool: { max: 8 } });
    try {
      results.Postgres = await measure(store, 'postgres');
    } finally {
      await store.close();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  process.stderr.write('store bench: Postgres measured\n');
}

const f = (n, d = 0) => n.toFixed(d);
const verdict = (ok) => (ok ? 'ok' : 'OVER TARGET');
const rows = Object.entries(results).map(
  ([name, r]) =>
    `| ${name} | ${f(r.batched)} | ${f(r.single)} | ${f(r.singleFull)} | ${f(r.resumeMs, 1)} | ${f(r.listNewestMs, 2)} | ${f(r.listFailedMs, 2)} | ${f(r.listPageMs, 2)} |`,
);
const checks = [];
if (results.SQLite)
  checks.push(
    `| SQLite append, 10 events per append | ${f(results.SQLite.batched)} µs / event | ≤ 200 µs | ${verdict(results.SQLite.batched <= 200)} |`,
  );
for (const [name, r] of Object.entries(results))
  checks.push(`| ${name} resume of a 1,000-event run | ${f(r.resumeMs, 1)} ms | ≤ 50 ms | ${verdict(r.resumeMs <= 50)} |`);
console.log(`
## run store (${new Date().toISOString()}, node ${process.version})

Events of a realistic turn (340 B of JSON on average; a 1.5 KB tool output among every 10).
Append: µs per event over 3,000 events in appends of 10 (one turn), 1,000 in appends of 1,
and 500 in appends of 1 with \`durability: 'full'\` (the write before an unsafe tool).
Resume: \`getRun\` + \`loadEvents\` + the fold into the resume state, of a 1,000-event run, median of ${LOAD_SAMPLES}. Listing:
\`listRuns\` over 10,000 runs, median of ${LIST_SAMPLES}: the newest 50, the newest 50
\`failed\` (10% of the runs), and a page of 50 from the middle (\`before\`).
${pgSkipped ? `\n${pgSkipped}\n` : ''}
| store | append µs/event (10 per append) | µs/event (1 per append) | µs/event (1, full) | resume 1,000 events ms | list newest 50 ms | list 50 failed ms | list page (before) ms |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}

| check | value | target | |
|---|---|---|---|
${checks.join('\n')}
`);
