// `npm run bench`: rein against two hand-written floors on the same workload, in one run.
// The scripted model server runs in its own process so its CPU is not counted.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startServer } from './server.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const node = process.execPath;

function client(impl, url, turns) {
  const out = execFileSync(node, ['bench/client.mjs', impl, url, String(turns)], { cwd: root, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop());
}

function importMs() {
  const samples = [];
  for (let i = 0; i < 5; i++) {
    // `rein` resolves through package.json's exports (a package may import itself by name):
    // what a user's `import ... from 'rein'` loads.
    const code = "const t=performance.now(); await import('rein'); console.log(performance.now()-t)";
    samples.push(Number(execFileSync(node, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' }).trim()));
  }
  samples.sort((a, b) => a - b);
  return samples[2];
}

// Each implementation runs in a fresh process per round; rounds interleave the three so a
// burst of load on this shared machine hits all of them alike. Each figure is the median
// over the rounds: five by default, because the same client's CPU per request has been
// seen to differ by 2× between consecutive rounds here (the host's speed changes within
// seconds), and the growth check divides four such figures.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const { child, url } = await startServer();
const samples = {};
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const turns of [8, 32]) {
      // Telemetry's cost is measured at 8 turns: rein without it, and with an SDK registered.
      const impls = turns === 8 ? ['fetch', 'http', 'rein', 'rein-off', 'rein-otel'] : ['fetch', 'http', 'rein'];
      for (const impl of impls) {
        (samples[`${impl}-${turns}`] ??= []).push(client(impl, url, turns));
      }
    }
    process.stderr.write(`round ${round} of ${ROUNDS} measured\n`);
  }
} finally {
  child.kill('SIGTERM');
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const results = {};
for (const [key, list] of Object.entries(samples)) {
  results[key] = {};
  for (const field of Object.keys(list[0])) {
    results[key][field] = typeof list[0][field] === 'number' ? median(list.map((r) => r[field])) : list[0][field];
  }
}
const importTime = importMs();

const f = (n, d = 0) => n.toFixed(d);
const rows = [];
for (const turns of [8, 32]) {
  for (const impl of turns === 8 ? ['fetch', 'http', 'rein', 'rein-off', 'rein-otel'] : ['fetch', 'http', 'rein']) {
    const r = results[`${impl}-${turns}`];
    rows.push(`| ${impl} | ${turns} | ${f(r.cpuUsPerRequest)} | ${f(r.medianMsPerRun, 1)} | ${f(r.concurrentWallMs)} | ${f(r.peakRssMb, 1)} |`);
  }
}
const ratio = (turns, floor) => results[`rein-${turns}`].cpuUsPerRequest / results[`${floor}-${turns}`].cpuUsPerRequest;
const r8f = ratio(8, 'fetch');
const r8h = ratio(8, 'http');
const r32f = ratio(32, 'fetch');
const r32h = ratio(32, 'http');
const growth = r32h / r8h;
// Telemetry: with an SDK registered (batch span processor, in-memory exporters) against
// without one; and without one (the default: the API looked up, nothing registered)
// against telemetry turned off.
const cpu = (key) => results[key].cpuUsPerRequest;
const otelRatio = cpu('rein-otel-8') / cpu('rein-8');
const noSdkRatio = cpu('rein-8') / cpu('rein-off-8');
// Each side's own cost per request at 32 turns against 8: whether the ratio moved because
// rein's cost grew with the history, or because the floor's fell.
const own = (impl) => results[`${impl}-32`].cpuUsPerRequest / results[`${impl}-8`].cpuUsPerRequest;
const verdict = (ok) => (ok ? 'ok' : 'OVER TARGET');
console.log(`
## rein benchmark (${new Date().toISOString()}, node ${process.version})

rein-off is rein with \`telemetry: false\`; rein-otel has the OpenTelemetry SDK registered (batch
span processor, in-memory span and metric exporters); rein is the default, with
\`@opentelemetry/api\` installed and no SDK registered.

Workload: one tool \`add(a, b)\`; each run is N tool-call turns plus a final answer,
streaming, against the scripted model server in its own process. Per measurement, a fresh
process does 3 warm-up runs, then 30 sequential runs (CPU, latency), then 100 concurrent
runs (wall, peak RSS). Figures are medians over ${ROUNDS} interleaved rounds.

| impl | tool turns | CPU µs / model request | median ms / run | 100-concurrent wall ms | peak RSS MB |
|---|---|---|---|---|---|
${rows.join('\n')}

| check | value | target | |
|---|---|---|---|
| rein / fetch floor, 8 turns | ${f(r8f, 2)}× | ≤ 1.0× | ${verdict(r8f <= 1)} |
| rein / node:http floor, 8 turns | ${f(r8h, 2)}× | ≤ 1.3× | ${verdict(r8h <= 1.3)} |
| rein / fetch floor, 32 turns | ${f(r32f, 2)}× | ≤ 1.0× | ${verdict(r32f <= 1)} |
| rein / node:http floor, 32 turns | ${f(r32h, 2)}× | ≤ 1.3× | ${verdict(r32h <= 1.3)} |
| growth of the http ratio, 32 vs 8 turns | ${f(growth, 2)} | within ±10% | ${verdict(Math.abs(growth - 1) <= 0.1)} |
| telemetry: SDK registered / none registered, 8 turns | ${f(otelRatio, 2)}× | ≤ 1.15× | ${verdict(otelRatio <= 1.15)} |
| telemetry: none registered / \`telemetry: false\`, 8 turns | ${f(noSdkRatio, 2)}× | ≤ 1.02× | ${verdict(noSdkRatio <= 1.02)} |
| peak RSS, rein 100 concurrent (8 turns) | ${f(results['rein-8'].peakRssMb, 1)} MB | ≤ 130 MB | ${verdict(results['rein-8'].peakRssMb <= 130)} |
| core import (median of 5 fresh processes) | ${f(importTime, 1)} ms | ≤ 50 ms | ${verdict(importTime <= 50)} |

Diagnostics (no target): CPU per request at 32 turns against 8: rein ${f(own('rein'), 2)}, the node:http floor
${f(own('http'), 2)}. The same workload in instructions, with V8's optimizing compiler split out (the same
from one run to the next, where CPU time on a shared machine is not): \`npm run bench:instructions\`.
`);

// The run store's own table (bench/store.mjs: SQLite and Postgres), in a fresh process.
process.stdout.write(execFileSync(node, ['bench/store.mjs'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
// What `rein serve` adds (bench/serve.mjs), in a fresh process.
process.stdout.write(execFileSync(node, ['bench/serve.mjs'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
