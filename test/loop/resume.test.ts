import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { messagesFromEvents } from '../../src/loop/fold.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import type { RunStore } from '../../src/store/types.js';
import { defineTool } from '../../src/tools/define.js';
import type { ToolEffect } from '../../src/tools/types.js';
import { collect, setup } from './helpers.js';

/** A tool of a given effect that counts executions per idempotency key and can be held mid-call. */
function effectTool(effect: ToolEffect, options: { hold?: Promise<void>; reconcileDone?: boolean } = {}) {
  const executions = new Map<string, number>();
  const reconciled: string[] = [];
  let entered!: () => void;
  const started = new Promise<void>((r) => (entered = r));
  const tool = defineTool({
    name: `do_${effect}`,
    description: `A ${effect} action.`,
    parameters: { type: 'object', properties: { n: { type: 'integer' } } },
    effect,
    ...(effect === 'reconcilable'
      ? {
          reconcile: (key: string) => {
            reconciled.push(key);
            return options.reconcileDone ? { done: true as const, output: `already done for ${key}` } : { done: false as const };
          },
        }
      : {}),
    execute: async (_args, ctx) => {
      executions.set(ctx.idempotencyKey, (executions.get(ctx.idempotencyKey) ?? 0) + 1);
      entered();
      if (options.hold) await options.hold;
      return `done ${ctx.idempotencyKey}`;
    },
  });
  return { tool, executions, reconciled, started };
}

const forever = new Promise<void>(() => {});

/** Runs an agent until its tool is mid-call, then "kills" it: a second agent resumes from the log. */
async function crashMidTool(effect: ToolEffect, reconcileDone = false) {
  const store = new MemoryRunStore();
  const first = effectTool(effect, { hold: forever, reconcileDone });
  const script = [{ toolCalls: [{ name: `do_${effect}`, arguments: { n: 1 } }] }, { text: 'all done' }];
  const { agent, server } = await setup(script, { tools: [first.tool], store, toolTimeoutMs: Number.POSITIVE_INFINITY });
  const crashed = agent.run('act');
  await first.started; // the effect happened (or began); the process "dies" here
  const second = effectTool(effect, { reconcileDone });
  second.executions.clear();
  const successor = new Agent({ model: server.model(), tools: [second.tool], store, retry: { baseDelayMs: 5, jitter: false } });
  return { store, crashed, first, second, successor, server };
}

describe('durable runs', () => {
  it('logs every stored event at the write points, and the run record ends with its status and totals', async () => {
    const store = new MemoryRunStore();
    const durabilities: string[] = [];
    const append = store.append.bind(store);
    store.append = (runId, epoch, events, options) => {
      durabilities.push(`${events.map((e) => e.type).join('+')}:${options?.durability ?? 'normal'}`);
      return append(runId, epoch, events, options);
    };
    const pure = effectTool('pure');
    const unsafe = effectTool('unsafe');
    const script = [
      { toolCalls: [{ name: 'do_pure', arguments: {} }] },
      { toolCalls: [{ name: 'do_unsafe', arguments: {} }] },
      { text: 'ok' },
    ];
    const { agent } = await setup(script, { tools: [pure.tool, unsafe.tool], store });
    const handle = agent.run('go');
    const { events, result } = await collect(handle);
    const stored = await store.loadEvents(handle.runId);
    expect(stored).toEqual(events.filter((e) => !['text_delta', 'thinking_delta', 'tool_call_delta'].includes(e.type)));
    expect(messagesFromEvents(stored)).toEqual(result.messages);
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'done', reason: 'final_answer', totals: { steps: 3, toolCalls: 2 } });
    // The assistant message and tool_started are appended together before the tool runs,
    // on disk ('full') before the unsafe one; each tool_finished on its own, after.
    expect(durabilities.find((d) => d.includes('tool_started') && d.includes('assistant_message'))).toMatch(/:normal$/);
    expect(durabilities.filter((d) => d.includes('tool_started')).at(-1)).toMatch(/:full$/);
    expect(durabilities.filter((d) => d.startsWith('tool_finished'))).toHaveLength(2);
  });

  it('a tool runs only once its call is durable', async () => {
    const store: RunStore = new MemoryRunStore();
    let runId = '';
    const seen: string[] = [];
    const probe = defineTool({
      name: 'probe',
      description: 'Looks at the log.',
      parameters: { type: 'object', properties: {} },
      effect: 'pure',
      execute: async (_args, ctx) => {
        runId = ctx.runId;
        for (const e of await store.loadEvents(ctx.runId)) seen.push(e.type);
        return 'seen';
      },
    });
    const { agent } = await setup([{ toolCalls: [{ name: 'probe', arguments: {} }] }, { text: 'ok' }], { tools: [probe], store });
    await agent.run('look');
    expect(runId).not.toBe('');
    expect(seen).toContain('assistant_message');
    expect(seen.at(-1)).toBe('tool_started');
  });

  it('unsafe: a call cut off mid-way is never run again; the model is told it may or may not have happened', async () => {
    const { crashed, first, second, successor, server, store } = await crashMidTool('unsafe');
    const resumed = successor.resume(crashed.runId);
    const { result } = await collect(resumed);
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer', text: 'all done' });
    expect([...first.executions.values()]).toEqual([1]);
    expect(second.executions.size).toBe(0);
    const finished = (await store.loadEvents(crashed.runId)).filter((e) => e.type === 'tool_finished');
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({ outcome: 'unknown', errorCode: 'unknown_outcome' });
    expect(String(server.requests.at(-1)!.messages.at(-1)!.content)).toMatch(/may or may not have taken effect/);
  });

  it('pure and idempotent: run again, with the same idempotency key', async () => {
    for (const effect of ['pure', 'idempotent'] as const) {
      const { crashed, first, second, successor } = await crashMidTool(effect);
      const result = await successor.resume(crashed.runId);
      expect(result.reason).toBe('final_answer');
      expect([...second.executions.keys()]).toEqual([...first.executions.keys()]);
      expect([...second.executions.values()]).toEqual([1]);
    }
  });

  it('reconcilable: reconcile(key) decides; done is not run again', async () => {
    const done = await crashMidTool('reconcilable', true);
    expect((await done.successor.resume(done.crashed.runId)).reason).toBe('final_answer');
    expect(done.second.executions.size).toBe(0);
    expect(done.second.reconciled).toEqual([...done.first.executions.keys()]);
    const notDone = await crashMidTool('reconcilable', false);
    expect((await notDone.successor.resume(notDone.crashed.runId)).reason).toBe('final_answer');
    expect([...notDone.second.executions.keys()]).toEqual([...notDone.first.executions.keys()]);
  });

  it('the process that lost the lease can no longer write: its run ends as failed with lease_lost', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const store = new MemoryRunStore();
    const first = effectTool('idempotent', { hold });
    const { agent, server } = await setup(
      [{ toolCalls: [{ name: 'do_idempotent', arguments: {} }] }, { text: 'ok' }, { text: 'ok again' }],
      { tools: [first.tool], store },
    );
    const zombie = agent.run('act');
    await first.started;
    const successor = new Agent({ model: server.model(), tools: [effectTool('idempotent').tool], store });
    const resumed = await successor.resume(zombie.runId);
    expect(resumed.reason).toBe('final_answer');
    const before = (await store.loadEvents(zombie.runId)).length;
    release();
    const lost = await zombie;
    expect(lost).toMatchObject({ status: 'failed', reason: 'fatal_error', error: { code: 'lease_lost' } });
    expect((await store.loadEvents(zombie.runId)).length).toBe(before);
  });

  it('a model request without an answer is simply asked again', async () => {
    const store = new MemoryRunStore();
    let calls = 0;
    const { agent, server } = await setup(
      async () => {
        calls++;
        if (calls === 1) await forever;
        return { text: 'answered' };
      },
      { store },
    );
    const crashed = agent.run('question');
    while (server.requests.length === 0) await new Promise((r) => setImmediate(r));
    const successor = new Agent({ model: server.model(), store });
    const result = await successor.resume(crashed.runId);
    expect(result).toMatchObject({ reason: 'final_answer', text: 'answered' });
    expect(server.requests[1]!.messages).toEqual(server.requests[0]!.messages);
    const stored = await store.loadEvents(crashed.runId);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i));
    expect(messagesFromEvents(stored)).toEqual(result.messages);
  });

  it('refuses to resume a finished run, an unknown run, or one whose agent changed (unless forced)', async () => {
    const store = new MemoryRunStore();
    const { agent, server } = await setup([{ text: 'done' }, { fault: { type: 'status', status: 401 } }, { text: 'again' }], {
      store,
      system: 'v1',
    });
    const finished = agent.run('x');
    await finished;
    expect(await agent.resume(finished.runId)).toMatchObject({
      status: 'failed',
      error: { code: 'conflict', message: expect.stringMatching(/is done/) },
    });
    expect(await agent.resume('run_nope')).toMatchObject({ status: 'failed', error: { code: 'not_found' } });

    const failed = agent.run('y');
    expect(await failed).toMatchObject({ status: 'failed', error: { code: 'auth' } });
    const changed = new Agent({ model: server.model(), store, system: 'v2' });
    expect(await changed.resume(failed.runId)).toMatchObject({
      status: 'failed',
      error: { code: 'conflict', message: expect.stringMatching(/the agent changed since run .* started \(the system prompt\)/) },
    });
    expect(await changed.resume(failed.runId, { force: true })).toMatchObject({ status: 'done', text: 'again' });
  });

  it('a run whose end was logged but whose record was not updated is finished from its log, not run again', async () => {
    const store = new MemoryRunStore();
    const { agent, server } = await setup([{ text: 'the answer' }], { store });
    const handle = agent.run('q');
    await handle;
    // As if the process died between logging run_finished and updating the record.
    await store.updateRun(handle.runId, await store.acquireLease(handle.runId), { status: 'running' });
    const again = await agent.resume(handle.runId);
    expect(again).toMatchObject({ status: 'done', reason: 'final_answer', text: 'the answer' });
    expect(server.requests).toHaveLength(1);
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'done' });
  });
});
