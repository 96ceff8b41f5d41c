// A seeded fuzz test of the model wire: real responses of each of the four wires (recorded
// from the scripted server through a proxy) are cut at random places, sprinkled with
// random bytes, given random nesting and sent in random chunk sizes. Every run must end
// with a stop reason from the documented set and a log that folds to its result — no
// hang, no crash, no throw. Seeded: a failure names its seed and case, which replays it.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import type { ModelApi, ModelRef } from '../../src/model/types.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { expectLogFoldsTo } from './log-folds.js';

const SEED = Number(process.env.REIN_FUZZ_SEED ?? 20261201);
// 1,200 cases in all take about 45-55 s on a busy 2-core machine; REIN_FUZZ_CASES=1000 runs 4,000.
const CASES_PER_WIRE = Number(process.env.REIN_FUZZ_CASES ?? 300);
const WIRES: ModelApi[] = ['openai-chat', 'anthropic-messages', 'openai-responses', 'gemini'];

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One response the fuzz server sends: the bytes, how they are chunked, and whether the connection is dropped at the end. */
interface Served {
  body: Buffer;
  contentType: string;
  chunks: number[];
  drop: boolean;
}

let scripted: ScriptedServer;
let fuzz: Server;
let fuzzUrl = '';
/** What the fuzz server does: forward to the scripted server (recording), or serve `current`. */
let mode: 'record' | 'serve' = 'record';
let recorded: { body: Buffer; contentType: string } | undefined;
let current: Served | undefined;

function forward(req: IncomingMessage, res: ServerResponse): void {
  const target = new URL(scripted.origin);
  const upstream = httpRequest(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
    (up) => {
      const parts: Buffer[] = [];
      up.on('data', (d: Buffer) => parts.push(d));
      up.on('end', () => {
        const body = Buffer.concat(parts);
        const contentType = String(up.headers['content-type'] ?? 'text/event-stream');
        // The first answer of the run: the one with text, thinking and a tool call.
        recorded ??= { body, contentType };
        res.writeHead(up.statusCode ?? 200, { 'content-type': contentType });
        res.end(body);
      });
    },
  );
  req.pipe(upstream);
}

async function serve(res: ServerResponse): Promise<void> {
  const served = current as Served;
  res.writeHead(200, { 'content-type': served.contentType });
  let at = 0;
  for (const size of served.chunks) {
    if (at >= served.body.length || res.destroyed) break;
    res.write(served.body.subarray(at, at + size));
    at += size;
    await new Promise((r) => setImmediate(r));
  }
  if (at < served.body.length && !res.destroyed) res.write(served.body.subarray(at));
  if (served.drop) res.socket?.destroy();
  else res.end();
}

beforeAll(async () => {
  scripted = await startScriptedServer({
    script: () => ({
      text: 'Hello there, this is a longer answer to fuzz.',
      thinking: 'Let me think.',
      toolCalls: [{ name: 'note', arguments: { text: 'a [nested] {value}', n: 3 } }],
    }),
    chunkSize: 5,
    recordRequests: false,
  });
  fuzz = createServer((req, res) => {
    if (mode === 'record') forward(req, res);
    else {
      req.resume();
      req.on('end', () => void serve(res));
    }
  });
  await new Promise<void>((resolve) => fuzz.listen(0, '127.0.0.1', resolve));
  fuzzUrl = `http://127.0.0.1:${(fuzz.address() as AddressInfo).port}`;
});

afterAll(async () => {
  fuzz.closeAllConnections();
  await new Promise((resolve) => fuzz.close(resolve));
  await scripted.close();
});

const note = defineTool({
  name: 'note',
  description: 'Take a note.',
  parameters: { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } } },
  execute: () => 'noted',
});

/** The scripted server's model for `api`, pointed at the fuzz server. */
function modelFor(api: ModelApi): ModelRef {
  const ref = scripted.model('scripted', api);
  const origin = new URL(scripted.origin).origin;
  return { ...ref, baseUrl: (ref.baseUrl ?? '').replace(origin, fuzzUrl) };
}

function agentFor(api: ModelApi, store: MemoryRunStore): Agent {
  return new Agent({
    model: modelFor(api),
    tools: [note],
    store,
    retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2, jitter: false },
    limits: { maxSteps: 2, timeoutMs: 20_000 },
    modelOptions: { idleTimeoutMs: 5_000 },
  });
}

/** The recorded response of `api`, through the real adapter and the scripted server. */
async function record(api: ModelApi): Promise<{ body: Buffer; contentType: string }> {
  mode = 'record';
  recorded = undefined;
  await agentFor(api, new MemoryRunStore()).run('go');
  mode = 'serve';
  const first = recorded as { body: Buffer; contentType: string } | undefined;
  if (!first) throw new Error(`no response of ${api} was recorded`);
  return first;
}

/** One mutation of `original`, drawn from `rand`. */
function mutate(original: Buffer, contentType: string, rand: () => number): { served: Served; what: string } {
  let body = Buffer.from(original);
  const what: string[] = [];
  const roll = rand();
  if (roll < 0.3) {
    const at = Math.floor(rand() * body.length);
    body = body.subarray(0, at);
    what.push(`cut at ${at}`);
  }
  if (rand() < 0.4) {
    const n = 1 + Math.floor(rand() * 8);
    for (let i = 0; i < n; i++) body[Math.floor(rand() * body.length)] = Math.floor(rand() * 256);
    what.push(`${n} random bytes`);
  }
  if (rand() < 0.25) {
    const depth = [10, 600, 5_000, 50_000][Math.floor(rand() * 4)] as number;
    const text = body.toString('latin1');
    const at = text.indexOf('{', Math.floor(rand() * text.length));
    if (at !== -1) {
      const open = rand() < 0.5 ? '['.repeat(depth) : '{"a":'.repeat(depth);
      body = Buffer.from(`${text.slice(0, at + 1)}"x":${open}${text.slice(at + 1)}`, 'latin1');
      what.push(`nesting ${depth}`);
    }
  }
  if (rand() < 0.1) {
    body = Buffer.concat([body, Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 200) }, () => Math.floor(rand() * 256)))]);
    what.push('trailing junk');
  }
  const chunks: number[] = [];
  const max = [1, 7, 64, 4096][Math.floor(rand() * 4)] as number;
  // At most 150 small writes (then the rest at once): the cuts between events are what is
  // tested, not a 250 KB body written one byte per tick.
  for (let total = 0; total < body.length && chunks.length < 150; ) {
    const size = 1 + Math.floor(rand() * max);
    chunks.push(size);
    total += size;
  }
  const drop = rand() < 0.3;
  if (drop) what.push('connection dropped');
  return { served: { body, contentType, chunks, drop }, what: `${what.join(', ') || 'unchanged'}, chunks up to ${max}` };
}

describe('fuzzing the model wire', () => {
  for (const api of WIRES) {
    it(`${api}: ${CASES_PER_WIRE} mutated responses each end with a documented stop reason and a log that folds to the result`, {
      timeout: 600_000,
    }, async () => {
      const original = await record(api);
      expect(original.body.length).toBeGreaterThan(100);
      const rand = random(SEED ^ WIRES.indexOf(api));
      const reasons = new Map<string, number>();
      for (let i = 0; i < CASES_PER_WIRE; i++) {
        const { served, what } = mutate(original.body, original.contentType, rand);
        current = served;
        const store = new MemoryRunStore();
        const label = `${api} seed ${SEED} case ${i} (${what})`;
        let result;
        try {
          result = await agentFor(api, store).run('go');
        } catch (error) {
          throw new Error(`${label}: the run threw: ${String(error)}`);
        }
        try {
          expectLogFoldsTo(await store.loadEvents(result.runId), result);
        } catch (error) {
          throw new Error(`${label}: ${(error as Error).message}`);
        }
        reasons.set(result.reason, (reasons.get(result.reason) ?? 0) + 1);
      }
      // The mix says the fuzzing reached both ends: answers that still parse, and failures.
      if (process.env.REIN_FUZZ_SHOW) console.log(api, Object.fromEntries(reasons));
      expect(reasons.size).toBeGreaterThan(1);
    });
  }
});
