// createWorker and agent.submit in one process, against the local Postgres and the
// scripted model server: runs queued, driven, refused; SQLite refusing submit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { defineTool } from '../../src/tools/define.js';
import { startScriptedServer, type ScriptedServer, type ScriptTurn } from '../../src/testing/index.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import type { RunStore } from '../../src/store/types.js';
import { dropSchemas, freshSchema, url } from './pg.js';
import { memoryOtel } from '../trace/otel.js';

let server: ScriptedServer;
let store: PostgresStore;
const workers: Worker[] = [];

function answer(request: { messages: Array<{ role: string }> }): ScriptTurn {
  const turn = request.messages.filter((m) => m.role === 'assistant').length;
  if (turn === 0) return { toolCalls: [{ name: 'add', arguments: { a: 2, b: 40 } }] };
  return { text: 'it is 42' };
}

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  effect: 'pure',
  execute: ({ a, b }) => String(Number(a) + Number(b)),
});

const agentOn = (s: RunStore, tools = [add]): Agent =>
  new Agent({
    model: { provider: 'openai', id: 'scripted', api: 'openai-chat', baseUrl: server.url, apiKey: 'k' } as never,
    store: s,
    tools,
  });

beforeAll(async () => {
  server = await startScriptedServer({ script: answer });
  store = await PostgresStore.open({ url, schema: freshSchema('lib'), pool: { max: 4 } });
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop({ drain: false })));
  await store?.close();
  await server?.close();
  await dropSchemas();
});

async function finished(runId: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const record = await store.getRun(runId);
    if (record && record.status !== 'running') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${runId} did not end`);
}

describe('createWorker and agent.submit', () => {
  it('a submitted run is stored with its run_started and queued; a worker drives it to its end', async () => {
    const agent = agentOn(store);
    const { runId } = await agent.submit('what is 2 + 40?', { agent: 'adder' });
    const events = await store.loadEvents(runId);
    expect(events.map((e) => e.type)).toEqual(['run_started']);
    workers.push(await createWorker({ store, agents: { adder: agent }, concurrency: 2 }));
    await finished(runId);
    const record = await store.getRun(runId);
    expect(record).toMatchObject({ status: 'done', reason: 'final_answer' });
    const types = (await store.loadEvents(runId)).map((e) => e.type);
    expect(types[0]).toBe('run_started');
    expect(types).toContain('run_resumed');
    expect(types.at(-1)).toBe('run_finished');
  });

  it('a run of an agent the worker does not know is refused, with the reason in its log', async () => {
    const { runId } = await agentOn(store).submit('what is 2 + 40?', { agent: 'stranger' });
    await finished(runId);
    const events = await store.loadEvents(runId);
    const last = events.at(-1);
    expect(last?.type).toBe('run_finished');
    expect(last?.type === 'run_finished' && last.result.error?.message).toMatch(/agent "stranger" is unknown to worker/);
    expect(await store.getRun(runId)).toMatchObject({ status: 'failed' });
  });

  it('a run whose agent changed since it was submitted is refused, never run with other tools', async () => {
    const other = defineTool({
      name: 'add',
      description: 'Adds two numbers, differently.',
      parameters: { type: 'object', properties: {} },
      effect: 'pure',
      execute: () => 'x',
    });
    const { runId } = await agentOn(store, [other]).submit('what is 2 + 40?', { agent: 'adder' });
    await finished(runId);
    const last = (await store.loadEvents(runId)).at(-1);
    expect(last?.type === 'run_finished' && last.result.error?.message).toMatch(/changed since run .* started.*tools changed/);
    expect((await store.loadEvents(runId)).some((e) => e.type === 'tool_started')).toBe(false);
  });

  it("a worker records the queue depth and each run's pickup latency as OpenTelemetry metrics", async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    const otel = memoryOtel();
    try {
      const agent = agentOn(store);
      const ids = [(await agent.submit('first', { agent: 'adder' })).runId, (await agent.submit('second', { agent: 'adder' })).runId];
      const worker = await createWorker({ store, agents: { adder: agent }, meter: otel.meterProvider.getMeter('rein'), heartbeatMs: 200 });
      workers.push(worker);
      for (const id of ids) await finished(id);
      await new Promise((r) => setTimeout(r, 600));
      const pickup = await otel.metric('rein.queue.pickup.duration');
      expect(pickup).toHaveLength(1);
      expect((pickup[0]!.value as { count: number }).count).toBe(2);
      const depth = await otel.metric('rein.queue.depth');
      expect(depth).toHaveLength(1);
      expect(depth[0]!.value).toBe(0);
    } finally {
      await otel.close();
    }
  });

  it('modelLimits by model: two workers in one process never have more than one request at once to the model', async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    let inFlight = 0;
    let most = 0;
    const slow = await startScriptedServer({
      script: async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 150));
        inFlight--;
        return { text: 'ok' };
      },
    });
    try {
      const agent = new Agent({
        model: { provider: 'openai', id: 'scripted', api: 'openai-chat', baseUrl: slow.url, apiKey: 'k' } as never,
        store,
      });
      const limits = { maxConcurrent: 1, by: 'model' as const };
      workers.push(
        await createWorker({ store, agents: { one: agent }, concurrency: 3, modelLimits: limits }),
        await createWorker({ store, agents: { one: agent }, concurrency: 3, modelLimits: limits }),
      );
      const ids = await Promise.all(Array.from({ length: 6 }, () => agent.submit('go', { agent: 'one' }).then((r) => r.runId)));
      for (const id of ids) await finished(id);
      expect(most).toBe(1);
      await expect(createWorker({ store, agents: {}, modelLimits: { maxConcurrent: 0 } })).rejects.toThrow(
        /maxConcurrent model requests must be an integer from 1/,
      );
    } finally {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      await slow.close();
    }
  });

  it('a store without a queue refuses submit, saying why and what to use', async () => {
    const agent = agentOn(new MemoryRunStore());
    await expect(agent.submit('hi')).rejects.toThrow(/cannot queue runs.*Postgres/);
    await expect(createWorker({ store: new MemoryRunStore(), agents: {} })).rejects.toThrow(/needs the Postgres store/);
  });
});
