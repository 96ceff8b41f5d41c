// `npm run bench:instructions`: the benchmark's workload counted in machine instructions
// instead of CPU time. On a shared machine the CPU time of the same client can differ by 2×
// between two rounds; an instruction count under valgrind (cachegrind) is the same from
// one run to the next within a few percent. Node runs with --single-threaded so V8's
// optimizing compiler works on the main thread and is counted, and split out.
//
// Per implementation and workload: one process does the benchmark's 3 warm-up runs and 30
// sequential runs, another only the warm-up; the difference over the 30 runs' requests is
// the count per model request of the measured window. A diagnostic, not a check: under
// valgrind everything runs ~50× slower (about 4 minutes in all).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './server.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SEQUENTIAL = 30;

if (spawnSync('valgrind', ['--version']).error) {
  process.stderr.write('bench:instructions needs valgrind (Debian: apt-get install valgrind).\n');
  process.exit(1);
}

/** Where an instruction was spent, from the function valgrind names (V8's own C++ is named; generated code is not). */
function category(fn) {
  if (fn.includes('v8::internal::compiler::')) return 'compiler';
  if (/Scavenger|MarkCompact|heap::|Heap::|Marking|Sweeper|Evacuat|GCTracer/.test(fn)) return 'gc';
  return 'rest';
}

/** Instructions per category in one cachegrind output file. */
function countsOf(file) {
  const counts = { compiler: 0, gc: 0, rest: 0 };
  let current = 'rest';
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) current = category(line.slice(3));
    else if (line.charCodeAt(0) >= 48 && line.charCodeAt(0) <= 57) counts[current] += Number(line.split(' ')[1] ?? 0);
  }
  return counts;
}

function measure(dir, url, impl, turns, sequential) {
  const out = join(dir, `${impl}-${turns}-${sequential}.out`);
  const args = ['--tool=cachegrind', '--cache-sim=no', '--branch-sim=no', '--smc-check=all-non-file', `--cachegrind-out-file=${out}`];
  const run = spawnSync(
    'valgrind',
    [...args, process.execPath, '--single-threaded', 'bench/client.mjs', impl, url, String(turns), String(sequential), '0', '3'],
    { cwd: root, encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`${impl} ${turns} turns under valgrind failed:\n${run.stderr.slice(-2000)}`);
  return countsOf(out);
}

// BENCH_CASES=telemetry counts only the telemetry cases at 8 turns (rein, rein-off, rein-otel,
// the hand-made floor otel-floor, and otel-loaded: the SDK's packages imported, nothing
// registered); BENCH_CASES=fresh only the fresh-agent case and what it is compared with (http,
// rein and rein-fresh at 8 turns); BENCH_CASES=store the SQLite store on and off (with the
// tool's default effect and with `pure`), which the default leaves out; the default counts
// the others and the growth cases; BENCH_CASES=loop only rein at 8 and 32 turns (to compare
// two trees of the loop).
const only = process.env.BENCH_CASES;
const CASES = {
  telemetry: [
    ['rein', 8],
    ['rein-off', 8],
    ['rein-otel', 8],
    ['otel-floor', 8],
    ['otel-loaded', 8],
  ],
  fresh: [
    ['http', 8],
    ['rein', 8],
    ['rein-fresh', 8],
  ],
  store: [
    ['rein', 8],
    ['rein-store', 8],
    ['rein-pure', 8],
    ['rein-store-pure', 8],
  ],
  loop: [
    ['rein', 8],
    ['rein', 32],
  ],
  all: [
    ['http', 8],
    ['http', 32],
    ['rein', 32],
    ['rein', 8],
    ['rein-fresh', 8],
    ['rein-off', 8],
    ['rein-otel', 8],
    ['otel-floor', 8],
  ],
};
const cases = CASES[only ?? 'all'];
if (!cases) {
  process.stderr.write(`BENCH_CASES must be one of ${Object.keys(CASES).join(', ')}; got ${only}\n`);
  process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), 'rein-instructions-'));
const { child, url } = await startServer();
const window = {};
try {
  for (const [impl, turns] of cases) {
    const warm = measure(dir, url, impl, turns, 0);
    const all = measure(dir, url, impl, turns, SEQUENTIAL);
    const requests = SEQUENTIAL * (turns + 1);
    const per = {};
    for (const key of Object.keys(all)) per[key] = (all[key] - warm[key]) / requests;
    per.total = per.compiler + per.gc + per.rest;
    window[`${impl}-${turns}`] = per;
    process.stderr.write(`${impl}, ${turns} turns counted\n`);
  }
} finally {
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

const k = (n) => `${(n / 1000).toFixed(0)}k`;
const rows = Object.entries(window).map(
  ([key, w]) => `| ${key.replace(/-(\d+)$/, ' | $1')} | ${k(w.total)} | ${k(w.compiler)} | ${k(w.gc)} | ${k(w.total - w.compiler)} |`,
);
const growth = (withCompiler) => {
  const value = (key) => (withCompiler ? window[key].total : window[key].total - window[key].compiler);
  return value('rein-32') / value('http-32') / (value('rein-8') / value('http-8'));
};
const ratio = (a, b, withCompiler) => {
  const value = (key) => (withCompiler ? window[key].total : window[key].total - window[key].compiler);
  return value(a) / value(b);
};
const telemetry = !window['rein-off-8']
  ? ''
  : `Telemetry at 8 turns: SDK registered / none registered ${ratio('rein-otel-8', 'rein-8', true).toFixed(3)}× in all, ${ratio('rein-otel-8', 'rein-8', false).toFixed(3)}× without
the compiler (target ≤ 1.15×); none registered / \`telemetry: false\` ${ratio('rein-8', 'rein-off-8', true).toFixed(3)}× in all, ${ratio('rein-8', 'rein-off-8', false).toFixed(3)}×
without the compiler (target ≤ 1.02×).`;
const floorLine = window['otel-floor-8']
  ? `The floor (the same spans and metric records made by hand through the SDK, after each run of
rein with \`telemetry: false\`; bench/otel-floor.mjs) / \`telemetry: false\` ${ratio('otel-floor-8', 'rein-off-8', true).toFixed(3)}× in all, ${ratio('otel-floor-8', 'rein-off-8', false).toFixed(3)}× without
the compiler; rein with the SDK registered / the floor ${ratio('rein-otel-8', 'otel-floor-8', true).toFixed(3)}× in all, ${ratio('rein-otel-8', 'otel-floor-8', false).toFixed(3)}× without the compiler.`
  : '';
const loadedLine = window['otel-loaded-8']
  ? `The SDK's packages imported, nothing registered (no run observed) / none imported ${ratio('otel-loaded-8', 'rein-8', true).toFixed(3)}× in all,
${ratio('otel-loaded-8', 'rein-8', false).toFixed(3)}× without the compiler: what their presence in the process costs the measured runs.`
  : '';
const growthLine = window['http-32']
  ? `Growth of rein / node:http from 8 to 32 turns: ${growth(true).toFixed(2)} in all, ${growth(false).toFixed(2)} without the
optimizing compiler.`
  : '';
const storeLine = window['rein-store-8']
  ? `The SQLite store at 8 turns, instructions per step: on / off ${ratio('rein-store-8', 'rein-8', true).toFixed(3)}× in all, ${ratio('rein-store-8', 'rein-8', false).toFixed(3)}× without the compiler
(\`unsafe\` tool); ${ratio('rein-store-pure-8', 'rein-pure-8', true).toFixed(3)}× in all, ${ratio('rein-store-pure-8', 'rein-pure-8', false).toFixed(3)}× without the compiler (\`pure\` tool); target ≤ 1.3×.`
  : '';
const freshLine = window['rein-fresh-8']
  ? `A fresh agent and tool per run at 8 turns: ${ratio('rein-fresh-8', 'rein-8', true).toFixed(3)}× the reused agent in all, ${ratio('rein-fresh-8', 'rein-8', false).toFixed(3)}× without the
compiler (target ≤ 1.15×); ${ratio('rein-fresh-8', 'http-8', true).toFixed(3)}× the node:http loop in all, ${ratio('rein-fresh-8', 'http-8', false).toFixed(3)}× without the compiler (target ≤ 1.25×).`
  : '';
console.log(`
## Instructions per model request (${new Date().toISOString()}, node ${process.version}, valgrind)

The benchmark's workload (3 warm-up runs, then ${SEQUENTIAL} sequential runs), counted with
cachegrind under \`node --single-threaded\`: the optimizing compiler's work is on the main
thread and counted in the column "compiler".

| impl | tool turns | instructions / request | compiler | gc | without the compiler |
|---|---|---|---|---|---|
${rows.join('\n')}

${growthLine}

${freshLine}

${storeLine}

${telemetry}

${floorLine}

${loadedLine}
`);
