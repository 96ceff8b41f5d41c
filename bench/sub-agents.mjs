// `npm run bench` (sub-agents part): what a tree of runs costs against a flat run of as many
// model requests. The scripted model server runs in its own process; this process holds
// the agents (dist/), and its CPU is what is measured.
// - tree: a parent whose `add` is a sub-agent (agentTool): 1 call and its answer (2
//   requests), the child 8 `add` turns and its answer (9 requests): one child run started,
//   tied to the parent's call, its events delivered to the parent's listeners;
// - the same two runs alone: the child's (an agent with 8 `add` turns, 9 requests) and the
//   parent's (1 `add` turn of a plain tool, 2 requests). What the tree costs beyond them
//   is what tying a child to its parent costs (requests of the same history lengths);
// each without a store and with a SQLite store (a fresh temporary file per measurement).
// Also the events of one child: those its parent's listener receives, and those its own log holds.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, agentTool, defineTool } from '../dist/index.js';
import { openSqliteStore } from '../dist/store/index.js';
import { startServer } from './server.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RUNS = 30;
/** Model requests of each workload's run. */
const REQUESTS = { child: 9, parent: 2, tree: 11 };

const { child: server, url } = await startServer();
const dir = mkdtempSync(join(tmpdir(), 'rein-bench-tree-'));

const add = () =>
  defineTool({
    name: 'add',
    description: 'Add two numbers.',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    risk: 'read',
    execute: ({ a, b }) => String(a + b),
  });
const model = (id) => ({ provider: 'scripted', id, api: 'openai-chat', baseUrl: url });

function flatAgent(store, id = 'bench-8') {
  return new Agent({ model: model(id), tools: [add()], limits: { maxSteps: 20 }, ...(store ? { store } : {}) });
}

function treeAgent(store) {
  const worker = new Agent({
    name: 'adder',
    model: model('bench-8'),
    tools: [add()],
    limits: { maxSteps: 20 },
    ...(store ? { store } : {}),
  });
  // The parent's script calls `add({a, b})`: here that starts the child, with the arguments as its input.
  const delegate = agentTool(worker, {
    name: 'add',
    description: 'Add two numbers (a sub-agent does it).',
    input: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  });
  return new Agent({ name: 'lead', model: model('bench-1'), tools: [delegate], limits: { maxSteps: 20 }, ...(store ? { store } : {}) });
}

async function runOnce(agent) {
  const result = await agent.run('Add the numbers.');
  if (result.reason !== 'final_answer') throw new Error(`run ended with ${result.reason}: ${result.error?.message ?? ''}`);
}

/** CPU µs per run and per model request, and median wall ms per run, over RUNS sequential runs (after 3 warm-up runs). */
async function measure(agent, requests) {
  for (let i = 0; i < 3; i++) await runOnce(agent);
  const walls = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await runOnce(agent);
    walls.push(performance.now() - t);
  }
  const used = process.cpuUsage(cpu);
  walls.sort((a, b) => a - b);
  const perRun = (used.user + used.system) / RUNS;
  return { cpuUsPerRun: perRun, cpuUsPerRequest: perRun / requests, msPerRun: walls[Math.floor(RUNS / 2)] };
}

let stores = 0;
async function withStore(use) {
  const store = await openSqliteStore({ path: join(dir, `runs-${stores++}.db`) });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const samples = { child: [], parent: [], tree: [], childStore: [], parentStore: [], treeStore: [] };
let events;
try {
  const workloads = [
    ['child', () => measure(flatAgent(), REQUESTS.child)],
    ['parent', () => measure(flatAgent(undefined, 'bench-1'), REQUESTS.parent)],
    ['tree', () => measure(treeAgent(), REQUESTS.tree)],
    ['childStore', () => withStore((store) => measure(flatAgent(store), REQUESTS.child))],
    ['parentStore', () => withStore((store) => measure(flatAgent(store, 'bench-1'), REQUESTS.parent))],
    ['treeStore', () => withStore((store) => measure(treeAgent(store), REQUESTS.tree))],
  ];
  for (let round = 1; round <= ROUNDS; round++) {
    // Each round starts with another workload: what runs first in a process (colder code) moves round to round.
    for (let i = 0; i < workloads.length; i++) {
      const [name, run] = workloads[(i + round - 1) % workloads.length];
      samples[name].push(await run());
    }
    process.stderr.write(`sub-agents: round ${round} of ${ROUNDS} measured\n`);
  }
  // One tree run, listened to: the events of its child as the parent's listener gets them, and as its log holds them.
  events = await withStore(async (store) => {
    const handle = treeAgent(store).run('Add the numbers.');
    let delivered = 0;
    let deltas = 0;
    let requests = 0;
    for await (const event of handle) {
      if (event.type === 'assistant_message') requests++;
      if (!event.depth) continue;
      delivered++;
      if (event.type === 'text_delta' || event.type === 'tool_call_delta' || event.type === 'thinking_delta') deltas++;
    }
    const result = await handle;
    const children = (await store.listRuns()).filter((r) => r.parentRunId === result.runId);
    if (children.length !== 1 || requests !== REQUESTS.tree)
      throw new Error(`expected one child and ${REQUESTS.tree} requests, got ${children.length} and ${requests}`);
    return { delivered, deltas, stored: children[0].eventCount, parentStored: (await store.getRun(result.runId)).eventCount };
  });
} finally {
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

const pick = (list, field) => median(list.map((s) => s[field]));
const f = (n, d = 0) => n.toFixed(d);
const row = (name, list) =>
  `| ${name} | ${f(pick(list, 'cpuUsPerRun'))} | ${f(pick(list, 'cpuUsPerRequest'))} | ${f(pick(list, 'msPerRun'), 1)} |`;
/** The tree's CPU per run against its two runs alone (the child's and the parent's). */
const tied = (suffix, field) =>
  pick(samples[`tree${suffix}`], field) / (pick(samples[`child${suffix}`], field) + pick(samples[`parent${suffix}`], field));
const check = (name, value, target) => `| ${name} | ${f(value, 2)}× | ≤ ${target}× | ${value <= target ? 'ok' : 'OVER TARGET'} |`;
console.log(`
### Sub-agents: a tree of runs against its runs alone

tree: a parent that calls a sub-agent once (\`agentTool\`; 2 model requests), the child doing 8
\`add\` turns and its answer (9 requests); alone: the same child agent run by itself, and the
parent's run with a plain \`add\` tool. Against the scripted model server in its own process;
${RUNS} sequential runs after 3 warm-up runs, medians over ${ROUNDS} interleaved rounds; "store": a
SQLite store (the child a run of its own in it, tied to the parent's call).

| workload | CPU µs / run | CPU µs / model request | median ms / run |
|---|---|---|---|
${row('child alone (9 requests)', samples.child)}
${row('parent alone (2 requests)', samples.parent)}
${row('tree: parent + child (11 requests)', samples.tree)}
${row('child alone, store', samples.childStore)}
${row('parent alone, store', samples.parentStore)}
${row('tree, store', samples.treeStore)}

| check | value | target | |
|---|---|---|---|
${check('tree / (child alone + parent alone), CPU per run, no store', tied('', 'cpuUsPerRun'), 1.15)}
${check('tree / (child alone + parent alone), CPU per run, SQLite store', tied('Store', 'cpuUsPerRun'), 1.15)}
| tree / (child alone + parent alone), median wall per run, no store | ${f(tied('', 'msPerRun'), 2)}× | (diagnostic) | |
| tree / (child alone + parent alone), median wall per run, SQLite store | ${f(tied('Store', 'msPerRun'), 2)}× | (diagnostic) | |

Events of one child (8 tool turns, 9 requests): ${events.delivered} reach the parent's listener
(${events.deltas} of them deltas), ${events.stored} are in the child's own log; the parent's log holds
${events.parentStored} events, none of the child's.
`);
