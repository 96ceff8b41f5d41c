// The workers' workload (docs/workers.md): runs per second through the queue with 1, 2 and
// 3 `rein worker` processes, the scripted model answering each request after 50 ms (three
// requests per run: two list_dir calls, then the answer); then the pickup latency after a
// kill -9: from the kill to the `run_resumed` of each run the dead worker held, on another
// worker. Needs Postgres (REIN_BENCH_DATABASE_URL, else the local server's `test`
// database: a fresh database per phase, dropped after). `npm run bench` runs it last;
// BENCH_CASES=workers runs only it.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (path) => import(pathToFileURL(join(root, 'dist', path)).href);
const [{ startScriptedServer }, { PostgresStore }, { openSubmitter }] = await Promise.all([
  dist('testing/index.js'),
  dist('store/postgres.js'),
  dist('cli/commands/submit.js'),
]);

const base = process.env.REIN_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const RUNS = Number(process.env.BENCH_WORKER_RUNS ?? 120);
const CONCURRENCY = 8;
const LATENCY_MS = 50;
const KILLS = 3;

const server = await startScriptedServer({
  recordRequests: false,
  script: (request) => {
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    const delayMs = request.messages.some((m) => m.role === 'user' && String(m.content).startsWith('slow')) ? 400 : LATENCY_MS;
    return turn < 2 ? { delayMs, toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] } : { delayMs, text: 'done' };
  },
});
const dir = mkdtempSync(join(tmpdir(), 'rein-bench-workers-'));
mkdirSync(join(dir, '.rein', 'agents'), { recursive: true });
writeFileSync(
  join(dir, '.rein', 'agents', 'bench.md'),
  '---\nname: bench\ndescription: lists a folder\nmodel: openai/scripted\ntools: [list_dir]\n---\nList the folder.\n',
);
const env = { PATH: process.env.PATH, HOME: dir, NO_COLOR: '1', OPENAI_API_KEY: 'bench' };
const live = new Set();

async function admin(sql) {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
async function freshDatabase(name) {
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.href;
}

function startWorker(db) {
  const child = spawn(process.execPath, [join(root, 'bin/rein.js'), 'worker', '--store', db, '--concurrency', String(CONCURRENCY)], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.stderr.resume();
  const exited = new Promise((resolve) => child.on('close', () => (live.delete(child), resolve())));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve({ child, exited, id: JSON.parse(out.split('\n')[0]).worker });
    });
    exited.then(() => reject(new Error('a worker ended before it started')));
  });
}

function quietIO() {
  const sink = new PassThrough();
  sink.resume();
  const stdin = new PassThrough();
  stdin.end();
  return { stdout: sink, stderr: sink, stdin, env, signal: new AbortController().signal };
}

/** Submits `tasks` 16 at a time (one submit is a transaction: done one by one, they would pace the workers). */
async function submit(db, tasks) {
  const submitter = await openSubmitter({ agent: 'bench', store: db, 'base-url': server.url, root: dir }, quietIO());
  try {
    const ids = [];
    for (let i = 0; i < tasks.length; i += 16)
      ids.push(...(await Promise.all(tasks.slice(i, i + 16).map((task) => submitter.submit(task)))));
    return ids;
  } finally {
    await submitter.close();
  }
}

async function waitDone(store, count, ms = 300_000) {
  for (const end = Date.now() + ms; ; ) {
    const done = (await store.listRuns({ status: 'done' })).length;
    if (done >= count) return;
    if (Date.now() > end) throw new Error(`${count - done} runs did not end`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stopAll = async (workers) => {
  for (const w of workers) w.child.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
};

const results = { throughput: {}, pickup: undefined };
try {
  for (const n of [1, 2, 3]) {
    const db = await freshDatabase(`rein_bench_workers_${n}`);
    const store = await PostgresStore.open({ url: db });
    const workers = await Promise.all(Array.from({ length: n }, () => startWorker(db)));
    try {
      const started = performance.now();
      await submit(
        db,
        Array.from({ length: RUNS }, (_, i) => `run ${i}`),
      );
      const submitted = performance.now();
      await waitDone(store, RUNS);
      const seconds = (performance.now() - started) / 1000;
      results.throughput[n] = RUNS / seconds;
      results.submitRate = RUNS / ((submitted - started) / 1000);
      process.stderr.write(
        `workers ${n}: ${RUNS} runs in ${seconds.toFixed(1)} s (submitted in ${((submitted - started) / 1000).toFixed(1)} s)\n`,
      );
    } finally {
      await stopAll(workers);
      await store.close();
      await admin(`DROP DATABASE IF EXISTS "rein_bench_workers_${n}" WITH (FORCE)`);
    }
  }

  // Pickup after a kill: two workers; kill the one holding the most runs; time each run's takeover.
  const db = await freshDatabase('rein_bench_workers_kill');
  const store = await PostgresStore.open({ url: db });
  const fleet = new pg.Client({ connectionString: db });
  await fleet.connect();
  let workers = await Promise.all([startWorker(db), startWorker(db)]);
  const samples = [];
  try {
    for (let k = 0; k < KILLS; k++) {
      const ids = await submit(
        db,
        Array.from({ length: 2 * CONCURRENCY }, (_, i) => `slow ${k} ${i}`),
      );
      // Both workers full, mid-run (their first model request or tool).
      await new Promise((r) => setTimeout(r, 700));
      const { rows } = await fleet.query(
        'SELECT worker_id, array_agg(run_id) AS runs FROM rein_fleet.holders GROUP BY worker_id ORDER BY count(*) DESC',
      );
      const victim = workers.find((w) => w.id === rows[0]?.worker_id) ?? workers[0];
      const held = rows.find((r) => r.worker_id === victim.id)?.runs ?? [];
      const killedAt = Date.now();
      victim.child.kill('SIGKILL');
      await victim.exited;
      workers = [...workers.filter((w) => w !== victim), await startWorker(db)];
      await waitDone(store, (k + 1) * ids.length);
      for (const runId of held) {
        const resumed = (await store.loadEvents(runId)).filter((e) => e.type === 'run_resumed' && e.at > killedAt);
        if (resumed[0]) samples.push(resumed[0].at - killedAt);
      }
    }
  } finally {
    await stopAll(workers);
    await fleet.end();
    await store.close();
    await admin('DROP DATABASE IF EXISTS "rein_bench_workers_kill" WITH (FORCE)');
  }
  samples.sort((a, b) => a - b);
  const at = (p) => samples[Math.min(samples.length - 1, Math.ceil((p / 100) * samples.length) - 1)];
  results.pickup = { count: samples.length, p50: at(50), p99: at(99), max: samples.at(-1) };
} finally {
  for (const child of live) child.kill('SIGKILL');
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}

const t = results.throughput;
process.stdout.write(`
## Workers (rein worker processes on Postgres, scripted model ${LATENCY_MS} ms per request, 3 requests per run)

| workers (concurrency ${CONCURRENCY} each) | runs per second |
|---|---|
| 1 | ${t[1].toFixed(1)} |
| 2 | ${t[2].toFixed(1)} |
| 3 | ${t[3].toFixed(1)} |

(from the first submit to the last run done; submits, 16 at a time, ran at ${results.submitRate.toFixed(0)} per second)

Pickup after a kill -9 (from the kill to the run's run_resumed on another worker), ${results.pickup.count} runs over ${KILLS} kills:
p50 ${(results.pickup.p50 / 1000).toFixed(1)} s, p99 ${(results.pickup.p99 / 1000).toFixed(1)} s (max ${(results.pickup.max / 1000).toFixed(1)} s; pg-boss hands a job on 10 s after its last heartbeat).
`);
