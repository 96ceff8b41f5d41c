// One measured implementation in its own process: warm-up, a sequential phase (CPU and
// latency) and a concurrent phase (wall time and peak RSS). Prints one JSON line.
// Usage: node bench/client.mjs <rein|rein-fresh|rein-off|rein-otel|otel-floor|otel-loaded|rein-pure|rein-store|rein-store-pure|fetch|http> <baseUrl> <turns> [sequential] [concurrent] [warm-up runs]
// rein: as a user gets it (telemetry on by default; @opentelemetry/api installed, no SDK
// registered), one agent reused for every run; rein-fresh: the same, but a new tool and
// agent per run (as a server handling requests, or a test, makes them); rein-off:
// `telemetry: false`; rein-otel: the OpenTelemetry SDK registered (batch span processor,
// in-memory span and metric exporters); otel-floor: rein-off with the SDK registered as
// for rein-otel and, after each run, the same spans and metric records made by hand
// (bench/otel-floor.mjs: the SDK's own cost for that telemetry); otel-loaded: rein with the
// SDK's packages imported as for rein-otel but nothing registered (what their presence in
// the process costs); rein-pure: the tool declared `effect: 'pure'`;
// rein-store / rein-store-pure: the same two with a SQLite store (a fresh temporary file).
// A latency (ms) makes the scripted model wait that long before each answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchFloor, httpFloor } from './floors.mjs';
import { telemetryFloor } from './otel-floor.mjs';

const [impl, url, turnsArg, seqArg = '30', concArg = '100', warmArg = '3', latencyArg = '0'] = process.argv.slice(2);
const turns = Number(turnsArg);
const model = Number(latencyArg) > 0 ? `bench-${turns}-d${Number(latencyArg)}` : `bench-${turns}`;
const task = `Add the numbers, ${turns} times.`;

async function makeRunner() {
  if (impl === 'fetch') return () => fetchFloor(url, model, task);
  if (impl === 'http') return () => httpFloor(url, model, task);
  const { Agent, defineTool } = await import('rein');
  if (impl === 'rein-otel' || impl === 'otel-floor') await registerSdk();
  if (impl === 'otel-loaded') await importSdk();
  const floor = impl === 'otel-floor' ? telemetryFloor(await import('@opentelemetry/api'), model, url) : undefined;
  const pure = impl.endsWith('-pure');
  const store = impl.startsWith('rein-store') ? await openBenchStore() : undefined;
  // A new schema object each time, as a tool defined inside a request handler has.
  const makeAgent = () =>
    new Agent({
      model: { provider: 'scripted', id: model, api: 'openai-chat', baseUrl: url },
      tools: [
        defineTool({
          name: 'add',
          description: 'Add two numbers.',
          parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
          risk: 'read',
          ...(pure ? { effect: 'pure' } : {}),
          execute: ({ a, b }) => String(a + b),
        }),
      ],
      limits: { maxSteps: turns + 5 },
      ...(impl === 'rein-off' || floor ? { telemetry: false } : {}),
      ...(store ? { store } : {}),
    });
  const reused = impl === 'rein-fresh' ? undefined : makeAgent();
  return async () => {
    const agent = reused ?? makeAgent();
    const result = await agent.run(task);
    if (result.reason !== 'final_answer') throw new Error(`rein run ended with ${result.reason}: ${result.error?.message ?? ''}`);
    floor?.(result);
    return { requests: result.totals.steps, text: result.text };
  };
}

/** A SQLite store in a temporary folder, removed when the process exits. */
async function openBenchStore() {
  const { openSqliteStore } = await import('rein/store');
  const dir = mkdtempSync(join(tmpdir(), 'rein-bench-client-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return openSqliteStore({ path: join(dir, 'rein.db') });
}

/** The OpenTelemetry API and the SDK's packages, imported. */
function importSdk() {
  return Promise.all([import('@opentelemetry/api'), import('@opentelemetry/sdk-trace-base'), import('@opentelemetry/sdk-metrics')]);
}

/** The OpenTelemetry SDK as a program would register it: spans batched to memory, metrics read into memory. */
async function registerSdk() {
  const [
    { trace, metrics },
    { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter },
    { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality },
  ] = await importSdk();
  // A real exporter lets go of a batch once it is sent: this one drops what it holds when
  // it reports the export done. (It used to keep every span until a 2-second timer
  // dropped them, a timer that never fired within a measured process: its heap grew by
  // every span the process made.)
  const spans = new InMemorySpanExporter();
  const store = spans.export.bind(spans);
  spans.export = (batch, done) =>
    store(batch, (result) => {
      spans.reset();
      done(result);
    });
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spans)] }));
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 60_000,
  });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
}

const run = await makeRunner();
for (let i = 0; i < Number(warmArg); i++) await run();

const sequential = Number(seqArg);
const durations = [];
let requests = 0;
const switches0 = process.resourceUsage().voluntaryContextSwitches;
const cpu0 = process.cpuUsage();
for (let i = 0; i < sequential; i++) {
  const t0 = performance.now();
  const r = await run();
  durations.push(performance.now() - t0);
  requests += r.requests;
}
const cpu = process.cpuUsage(cpu0);
const ctxSwitches = process.resourceUsage().voluntaryContextSwitches - switches0;
if (requests !== sequential * (turns + 1)) throw new Error(`expected ${sequential * (turns + 1)} requests, saw ${requests}`);

const concurrent = Number(concArg);
// The heap's peak during the concurrent phase, sampled: what the waiting runs hold.
let peakHeapMb = 0;
const sampler = setInterval(() => (peakHeapMb = Math.max(peakHeapMb, process.memoryUsage().heapUsed / 2 ** 20)), 50);
const w0 = performance.now();
await Promise.all(Array.from({ length: concurrent }, () => run()));
const concurrentWallMs = performance.now() - w0;
clearInterval(sampler);

durations.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    impl,
    turns,
    cpuUsPerRequest: (cpu.user + cpu.system) / requests,
    userUsPerRequest: cpu.user / requests,
    systemUsPerRequest: cpu.system / requests,
    medianMsPerRun: durations[Math.floor(durations.length / 2)],
    concurrentWallMs,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    peakHeapMb,
    voluntarySwitchesPerRequest: ctxSwitches / requests,
  }),
);
