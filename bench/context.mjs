// `npm run bench:context`: what the context engine costs and what it buys.
//
//   1. assembly per turn (prepare + assemble + observe: layers, token counts, the
//      threshold check) at 10, 100 and 1,000 history turns; it must stay flat (≤ 2×),
//      while serializing the history for the wire (shown for scale) grows with it;
//   2. tokens sent per request over a 300-turn run against a small window, with
//      compaction: bounded by the window, however long the run;
//   3. CPU per model request of a whole agent run with the engine on and off
//      (`context: false`), each in fresh processes, against a scripted server in its own
//      process: the engine must cost next to nothing far below the threshold.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createContextEngine, RunContext } from '../dist/context/engine.js';
import { isSummaryRequest } from '../dist/context/summary.js';
import { Agent, defineTool } from '../dist/index.js';
import { startScriptedServer } from '../dist/testing/index.js';
import { startServer } from './server.mjs';

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const [mode, url] = process.argv.slice(2);

const addParameters = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };

if (mode === 'cpu') {
  // Child process of part 3: CPU µs per model request of whole agent runs, engine on and
  // off, interleaved in rotating order so drift and order effects hit all alike; a second
  // `off` agent measures the noise floor.
  const model = { provider: 'scripted', id: 'bench-8', api: 'openai-chat', baseUrl: url };
  const add = defineTool({ name: 'add', description: 'Add two numbers.', parameters: addParameters, execute: ({ a, b }) => String(a + b) });
  // The agent made first runs measurably slower in this set-up, so each process makes them
  // in another order (the parent passes it).
  const make = {
    on: () => new Agent({ model, tools: [add] }),
    off: () => new Agent({ model, tools: [add], context: false }),
    control: () => new Agent({ model, tools: [add], context: false }),
  };
  const names = process.argv[4].split(',');
  const agents = {};
  for (const name of names) agents[name] = make[name]();
  for (const agent of Object.values(agents)) for (let i = 0; i < 30; i++) await agent.run('x');
  const cpu = { on: 0, off: 0, control: 0 };
  const requests = { on: 0, off: 0, control: 0 };
  for (let round = 0; round < 30; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length];
      const c0 = process.cpuUsage();
      for (let i = 0; i < 20; i++) requests[name] += (await agents[name].run('x')).totals.steps;
      const c = process.cpuUsage(c0);
      cpu[name] += c.user + c.system;
    }
  }
  console.log(JSON.stringify(Object.fromEntries(names.map((n) => [n, cpu[n] / requests[n]]))));
  process.exit(0);
}

if (mode === 'inside') {
  // Child process of part 3: time spent inside the engine's per-request methods during real
  // runs (each call timed; the timer's own cost, ~0.1 µs a call, is included).
  let spent = 0n;
  let requests = 0;
  for (const name of ['prepare', 'assemble', 'observe']) {
    const original = RunContext.prototype[name];
    RunContext.prototype[name] = function timed(...args) {
      const t0 = process.hrtime.bigint();
      const out = original.apply(this, args);
      spent += process.hrtime.bigint() - t0;
      if (name === 'observe') requests++;
      return out;
    };
  }
  const model = { provider: 'scripted', id: 'bench-8', api: 'openai-chat', baseUrl: url };
  const add = defineTool({ name: 'add', description: 'Add two numbers.', parameters: addParameters, execute: ({ a, b }) => String(a + b) });
  const agent = new Agent({ model, tools: [add] });
  for (let i = 0; i < 200; i++) await agent.run('x');
  spent = 0n;
  requests = 0;
  for (let i = 0; i < 600; i++) await agent.run('x');
  console.log(Number(spent) / requests / 1_000);
  process.exit(0);
}

// --- 1. assembly per turn -----------------------------------------------------------------

const model = { provider: 'scripted', id: 'bench', api: 'openai-chat', baseUrl: 'http://127.0.0.1:1/v1' };
const tools = [
  {
    name: 'read_file',
    description: 'Read a file of the workspace.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];
const noStream = () => {
  throw new Error('no summary expected in this part');
};
const usage = { input: 0, output: 10, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 10 };
const resultText = 'export function add(a, b) {\n  return a + b;\n}\n'.repeat(8);
const turn = (n) => [
  {
    role: 'assistant',
    content: [
      { type: 'tool_call', id: `c${n}`, name: 'read_file', arguments: { path: `src/f${n}.ts` }, rawArguments: `{"path":"src/f${n}.ts"}` },
    ],
    stopReason: 'tool_use',
    usage,
    provider: 'scripted',
    model: 'bench',
  },
  { role: 'tool', toolCallId: `c${n}`, toolName: 'read_file', content: [{ type: 'text', text: resultText }], isError: false },
];

const CONFIGS = {
  default: {},
  'all layers': {
    rules: 'Project rules: run the tests before you finish.',
    skills: 'Skills: pdf, xlsx.',
    task: 'always',
    memory: { retrieve: () => [{ text: 'The build uses pnpm.', source: 'notes.md' }] },
  },
};

/** Median µs per turn of prepare + assemble + observe with `base` turns of history. */
async function assemblyPerTurn(base, options) {
  const samples = [];
  const serialize = [];
  const engine = createContextEngine(options, {
    model,
    stream: noStream,
    wrapStream: (fn) => fn,
    system: 'You are a careful engineer.',
    modelInfo: { contextWindow: 100_000_000 },
  });
  const signal = new AbortController().signal;
  const onCompacted = () => {
    throw new Error('no compaction expected in this part');
  };
  for (let rep = 0; rep < 40; rep++) {
    const run = engine.startRun({ input: { role: 'user', content: 'Read every file.' } });
    const history = [{ role: 'user', content: 'Read every file.' }];
    for (let n = 1; n <= base; n++) history.push(...turn(n));
    // The first request of a run counts its whole history; the turns after it are measured.
    await run.prepare(history, tools, { step: 1, signal, onCompacted });
    run.assemble(history, tools);
    for (let k = 1; k <= 20; k++) {
      history.push(...turn(base + k));
      const response = {
        role: 'assistant',
        content: [],
        stopReason: 'stop',
        usage: { ...usage, input: 1_000 * (base + k) },
        provider: 'scripted',
        model: 'bench',
      };
      const t0 = process.hrtime.bigint();
      await run.prepare(history, tools, { step: k + 1, signal, onCompacted });
      const request = run.assemble(history, tools);
      run.observe(request, response);
      const t1 = process.hrtime.bigint();
      if (rep % 8 === 0 && k === 20) {
        JSON.stringify(request.messages);
        serialize.push(Number(process.hrtime.bigint() - t1) / 1_000);
      }
      samples.push(Number(t1 - t0) / 1_000);
    }
  }
  return { perTurn: median(samples), serialize: median(serialize) };
}

console.log('## Context assembly per turn (µs, median)\n');
console.log('| history turns | default | all layers | JSON of the history, for scale |\n|---|---|---|---|');
const assembly = {};
for (const base of [10, 100, 1_000]) {
  // Warm the JIT on this size first so every size is measured hot.
  for (const options of Object.values(CONFIGS)) await assemblyPerTurn(base, options);
  const row = {};
  for (const [name, options] of Object.entries(CONFIGS)) row[name] = await assemblyPerTurn(base, options);
  assembly[base] = row;
  console.log(
    `| ${base} | ${row.default.perTurn.toFixed(1)} | ${row['all layers'].perTurn.toFixed(1)} | ${row.default.serialize.toFixed(0)} |`,
  );
}
for (const name of Object.keys(CONFIGS)) {
  const ratio = assembly[1_000][name].perTurn / assembly[10][name].perTurn;
  console.log(`\n${name}: 1,000 turns / 10 turns = ${ratio.toFixed(2)}× (target ≤ 2×) ${ratio <= 2 ? 'ok' : 'OVER TARGET'}`);
}

// --- 2. tokens sent per request over a 300-turn run ------------------------------------------

const WINDOW = 8_000;
let steps = 0;
const server = await startScriptedServer({
  recordRequests: false,
  script: (request) => {
    if (isSummaryRequest(request)) return { text: 'Summary: files 1 to N were read; each exports add(a, b).' };
    steps++;
    return steps <= 300 ? { toolCalls: [{ name: 'read_file', arguments: { path: `src/f${steps}.ts` } }] } : { text: 'Read all 300 files.' };
  },
});
try {
  const readFile = defineTool({
    name: 'read_file',
    description: 'Read a file of the workspace.',
    parameters: tools[0].parameters,
    risk: 'read',
    effect: 'pure',
    execute: () => resultText,
  });
  const agent = new Agent({ model: server.model(), tools: [readFile], limits: { maxSteps: 310 }, modelInfo: { contextWindow: WINDOW } });
  const sent = [];
  let compactions = 0;
  const handle = agent.run('Read src/f1.ts to src/f300.ts, one per turn.');
  for await (const event of handle) {
    if (event.type === 'assistant_message') sent.push(event.message.usage.input);
    if (event.type === 'context_compacted') compactions++;
  }
  const result = await handle;
  const max = Math.max(...sent);
  const tail = sent.slice(-50).reduce((a, b) => a + b, 0) / 50;
  // Before the first compaction each request grows by one turn: extrapolated to 301 requests.
  const growth = (sent[10] - sent[0]) / 10;
  const full = Math.round(sent[0] + growth * (sent.length - 1));
  console.log(`\n## Tokens sent per request, 300-turn run, window ${WINDOW.toLocaleString('en')}\n`);
  console.log(
    '| requests | compactions | max tokens / request | mean of the last 50 | max / window | last request without compaction (extrapolated) |\n|---|---|---|---|---|---|',
  );
  console.log(
    `| ${sent.length} | ${compactions} | ${max} | ${tail.toFixed(0)} | ${(max / WINDOW).toFixed(2)} | ${full.toLocaleString('en')} |`,
  );
  if (result.reason !== 'final_answer' || max >= WINDOW) console.log(`\nBOUND VIOLATED: ${result.reason}, max ${max}`);
} finally {
  await server.close();
}

// --- 3. CPU per model request, engine on and off ---------------------------------------------

const { child, url: serverUrl } = await startServer();
const script = fileURLToPath(import.meta.url);
const rounds = [];
let inside;
try {
  for (const order of ['on,off,control', 'off,control,on', 'control,on,off'])
    rounds.push(JSON.parse(execFileSync(process.execPath, [script, 'cpu', serverUrl, order], { encoding: 'utf8' }).trim()));
  inside = median([0, 1, 2].map(() => Number(execFileSync(process.execPath, [script, 'inside', serverUrl], { encoding: 'utf8' }).trim())));
} finally {
  child.kill('SIGTERM');
}
const cpuOf = (name) => median(rounds.map((r) => r[name]));
const ratio = (name) => median(rounds.map((r) => r[name] / r.off));
console.log('\n## CPU per model request, whole agent runs of 8 tool turns (µs, median of 3 processes)\n');
console.log(
  '| engine on (default) | off (context: false) | on / off | off / off (noise floor) | inside the engine per request |\n|---|---|---|---|---|',
);
console.log(
  `| ${cpuOf('on').toFixed(0)} | ${cpuOf('off').toFixed(0)} | ${ratio('on').toFixed(3)} | ${ratio('control').toFixed(3)} | ${inside.toFixed(2)} (${((100 * inside) / cpuOf('on')).toFixed(1)}%) |`,
);
