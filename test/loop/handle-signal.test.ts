/**
 * A caller's AbortSignal and the run's own signal: a long-lived signal shared by many runs
 * keeps no listener of a run that ended, and a turn of many parallel tool calls (one abort
 * listener each on the run's signal) raises no MaxListenersExceededWarning.
 */
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import type { ScriptTurn } from '../../src/testing/index.js';
import { addTool, setup } from './helpers.js';

let warnings: Error[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning);
};
beforeEach(() => {
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

/** Warnings are emitted on a later tick: let them arrive before looking. */
const warningsSoFar = async (): Promise<string[]> => {
  await new Promise<void>((resolve) => setImmediate(resolve));
  return warnings.map((w) => `${w.name}: ${w.message}`);
};

const addThenAnswer = (request: { messages: Array<{ role: string }> }): ScriptTurn =>
  request.messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] } : { text: 'ok' };

describe('a signal passed to many runs', () => {
  it('holds no listener of a run once it ended, and 50 runs raise no warning', async () => {
    const { agent } = await setup(addThenAnswer, { tools: [addTool] });
    const shared = new AbortController();
    for (let i = 0; i < 50; i++) {
      const result = await agent.run(`add ${i}`, { signal: shared.signal });
      expect(result.reason).toBe('final_answer');
    }
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(await warningsSoFar()).toEqual([]);
  });

  it('holds none after runs that failed, were aborted, or could not start (run, resume, approve)', async () => {
    const { agent } = await setup([{ fault: { type: 'status', status: 401 } }]);
    const shared = new AbortController();
    const failed = await agent.run('x', { signal: shared.signal });
    expect(failed.reason).toBe('fatal_error');

    const { agent: waiting, server } = await setup(() => ({ text: 'late', delayMs: 5_000 }));
    const handle = waiting.run('x', { signal: shared.signal });
    // Aborted by its own handle while the shared signal stays live.
    await new Promise<void>((resolve) => handle.subscribe((e) => e.type === 'model_request' && resolve()));
    handle.abort();
    expect((await handle).reason).toBe('aborted');
    expect(server.requests.length).toBeLessThanOrEqual(1);

    // Without a store, resume and approve cannot start: the refusal is the run's result.
    expect((await agent.resume('run_missing', { signal: shared.signal })).error?.code).toBe('config');
    expect((await agent.approve('run_missing', { signal: shared.signal })).error?.code).toBe('config');
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('holds none after a stored run paused, was approved and finished', async () => {
    const store = new MemoryRunStore();
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploys.',
      parameters: { type: 'object', properties: {} },
      execute: () => 'deployed',
    });
    const { agent } = await setup([{ toolCalls: [{ name: 'deploy', arguments: {} }] }, { text: 'Deployed.' }], {
      tools: [deploy],
      store,
      approvalPolicy: () => 'ask',
    });
    const shared = new AbortController();
    const paused = agent.run('deploy', { signal: shared.signal });
    expect((await paused).reason).toBe('awaiting_approval');
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    const approved = await agent.approve(paused.runId, { signal: shared.signal });
    expect(approved.reason).toBe('final_answer');
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('still aborts the runs it was given while they run', async () => {
    const { agent } = await setup(() => ({ text: 'late', delayMs: 5_000 }));
    const shared = new AbortController();
    const runs = [agent.run('a', { signal: shared.signal }), agent.run('b', { signal: shared.signal })];
    await Promise.all(runs.map((run) => new Promise<void>((resolve) => run.subscribe((e) => e.type === 'model_request' && resolve()))));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(2);
    shared.abort('enough');
    expect((await Promise.all(runs)).map((r) => r.reason)).toEqual(['aborted', 'aborted']);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });
});

describe('a turn of many parallel tool calls', () => {
  it('20 asynchronous calls at once raise no MaxListenersExceededWarning', async () => {
    const slowAdd = defineTool({
      name: 'slow_add',
      description: 'Adds, asynchronously.',
      parameters: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] },
      execute: async ({ a }) => String((a as number) + 1),
    });
    const calls = Array.from({ length: 20 }, (_, i) => ({ name: 'slow_add', arguments: { a: i } }));
    const { agent } = await setup([{ toolCalls: calls }, { text: 'all added' }], { tools: [slowAdd] });
    const result = await agent.run('add twenty');
    expect(result.reason).toBe('final_answer');
    expect(result.totals.toolCalls).toBe(20);
    expect(await warningsSoFar()).toEqual([]);
  });
});
