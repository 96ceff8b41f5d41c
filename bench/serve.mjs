// `npm run bench` (server part): what `rein serve` costs. The model server and the HTTP
// clients run in processes of their own; this process holds the server (dist/), and its
// CPU is what is measured.
// - Added CPU per model request of a run started through the server (POST /v1/runs, then
//   followed over its event stream, or by reading its record) against the same agent run
//   through the library (the agent the server would build, `agent.run()` awaited).
// - Events per second delivered to 100 SSE clients of one run.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openSqliteStore } from '../dist/store/index.js';
import { openServedAgents } from '../dist/cli/served-agents.js';
import { startServer } from '../dist/server/server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const TURNS = 8;
const RUNS = 30;
const TOKEN = 'bench-token-0123456789-0123456789-0123456789';

function child(args) {
  const proc = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout });
  const queue = [];
  const waiting = [];
  lines.on('line', (line) => (waiting.length ? waiting.shift()(line) : queue.push(line)));
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  return { proc, exited, line: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiting.push(r))) };
}

const model = child(['dist/testing/cli.js', '--script-module', 'bench/serve-script.mjs']);
const modelUrl = JSON.parse(await model.line()).url;
const base = mkdtempSync(join(tmpdir(), 'rein-bench-serve-'));
const project = join(base, 'project');
mkdirSync(join(project, '.git'), { recursive: true });
mkdirSync(join(project, '.rein/agents'), { recursive: true });
for (const [name, id] of [
  ['calc', `bench-${TURNS}`],
  ['long', 'bench-300-wait'],
]) {
  writeFileSync(
    join(project, '.rein/agents', `${name}.md`),
    `---\nname: ${name}\ndescription: Adds.\nmodel: openai/${id}\ntools: [calculate]\nlimits: { maxSteps: 400 }\n---\nAdd.\n`,
  );
}
const io = {
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  stdin: new PassThrough(),
  env: { HOME: base, PATH: process.env.PATH },
  signal: new AbortController().signal,
};
const store = await openSqliteStore({ path: join(base, 'runs.db') });
const agents = openServedAgents({ root: project, io, baseUrl: modelUrl });
const server = await startServer({ store, agents, token: TOKEN });

const cpuMs = (start) => {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1000;
};

// The library: the same agent, run in this process, awaited.
async function library(runs) {
  const agent = await agents.forNewRun({ name: 'calc', limits: {}, task: 'Add the numbers.', store });
  let requests = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < runs; i++) requests += (await agent.run('Add the numbers.')).totals.steps;
  return cpuMs(start) / requests;
}

// Through the server: a client process starts each run and follows it.
async function served(runs, how) {
  const start = process.cpuUsage();
  const client = child(['bench/serve-client.mjs', 'runs', server.url, TOKEN, 'calc', String(runs), how]);
  await client.line();
  await client.exited;
  return cpuMs(start) / (runs * (TURNS + 1));
}

// Warm-up of every path, then the measured rounds, interleaved so machine noise spreads over all.
await library(3);
await served(3, 'follow');
await served(3, 'poll');
const results = { library: [], follow: [], poll: [] };
for (let round = 0; round < 3; round++) {
  results.library.push(await library(RUNS));
  results.follow.push(await served(RUNS, 'follow'));
  results.poll.push(await served(RUNS, 'poll'));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const lib = median(results.library);
const follow = median(results.follow);
const poll = median(results.poll);

// 100 SSE clients of one run of 300 tool turns.
const { runId } = await (
  await fetch(`${server.url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'long', input: 'Add a lot.' }),
  })
).json();
const clients = child(['bench/serve-client.mjs', 'streams', server.url, TOKEN, runId, '100']);
await clients.line();
const fanout = JSON.parse(await clients.line());
await clients.exited;
// The same 100 clients reading the finished run from its log at once: what the server can push.
const readers = child(['bench/serve-client.mjs', 'streams', server.url, TOKEN, runId, '100']);
await readers.line();
const replay = JSON.parse(await readers.line());
await readers.exited;

await server.stop();
await agents.close();
await store.close();
model.proc.kill();
rmSync(base, { recursive: true, force: true });

const f = (n, d = 2) => n.toFixed(d);
process.stdout.write(`
## rein serve

| measure | value |
|---|---|
| CPU per model request, the agent run through the library (awaited) | ${f(lib)} ms |
| CPU per model request, through the server, the client following the event stream | ${f(follow)} ms (+${f(follow - lib)} ms) |
| CPU per model request, through the server, the client reading the record every 100 ms | ${f(poll)} ms (+${f(poll - lib)} ms) |
| events delivered to 100 SSE clients of one live run (${fanout.events / 100} events each; paced by the run) | ${f(fanout.events / (fanout.ms / 1000), 0)} events/s (${f(fanout.ms, 0)} ms from the first to the last) |
| events delivered to 100 SSE clients reading that run's log at once | ${f(replay.events / (replay.ms / 1000), 0)} events/s (${f(replay.ms, 0)} ms) |

(${TURNS}-tool-turn runs of the agent \`rein serve\` builds, ${RUNS} runs per round, median of 3 rounds; the server's process CPU.)
`);
