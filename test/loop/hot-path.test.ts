import { describe, expect, it } from 'vitest';
import type { RunEvent, RunResult } from '../../src/events.js';
import { RunHandle } from '../../src/loop/handle.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { addTool, collect, setup } from './helpers.js';

const DELTAS = new Set(['text_delta', 'thinking_delta', 'tool_call_delta']);
const script = () => [
  { text: 'Adding.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
  { toolCalls: [{ name: 'add', arguments: { a: 3, b: 4 } }] },
  { text: 'Both sums are done.' },
];
/** An event without what differs between two runs of the same script. */
const shape = (e: RunEvent) => {
  const { runId: _r, at: _a, ...rest } = e as RunEvent & Record<string, unknown>;
  const out = rest as Record<string, unknown>;
  delete out.durationMs;
  delete out.traceId;
  delete out.result;
  delete out.message;
  delete out.idempotencyKey;
  delete out.toolCallId;
  delete out.model; // each run has its own scripted server
  return out;
};

describe('the loop keeps every observable event while doing less for unobserved ones', () => {
  it('a handle is observed while it buffers for iterators or has listeners, and not once only awaited', async () => {
    const controls = { steering: [], followUps: [], abortController: new AbortController() };
    let finish!: () => void;
    const handle = new RunHandle('run_1', controls, new Promise<RunResult>((resolve) => (finish = () => resolve({} as never))));
    expect(handle.observed).toBe(true);
    const done = handle.then(() => 'done');
    expect(handle.observed).toBe(false);
    const unsubscribe = handle.subscribe(() => {});
    expect(handle.observed).toBe(true);
    unsubscribe();
    expect(handle.observed).toBe(false);
    finish();
    expect(await done).toBe('done');
  });

  it('an awaited run logs exactly the events, with the same seqs, of an iterated run', async () => {
    const iterated = new MemoryRunStore();
    const awaited = new MemoryRunStore();
    const a = await setup(script(), { tools: [addTool], store: iterated });
    const b = await setup(script(), { tools: [addTool], store: awaited });
    const { events, result } = await collect(a.agent.run('add twice'));
    const quiet = await b.agent.run('add twice');
    expect(quiet.reason).toBe('final_answer');
    expect(quiet.text).toBe(result.text);
    const storedA = await iterated.loadEvents(result.runId);
    const storedB = await awaited.loadEvents(quiet.runId);
    expect(storedB.map(shape)).toEqual(storedA.map(shape));
    // The iterated run saw its deltas; none of them is stored.
    expect(events.filter((e) => DELTAS.has(e.type)).length).toBeGreaterThan(0);
    expect(storedA.some((e) => DELTAS.has(e.type))).toBe(false);
  });

  it('a listener subscribed to an awaited run receives the deltas, in order with the other events', async () => {
    const { agent } = await setup(script(), { tools: [addTool] });
    const handle = agent.run('add twice');
    const heard: RunEvent[] = [];
    handle.subscribe((e) => heard.push(e));
    const result = await handle;
    const { events } = await collect((await setup(script(), { tools: [addTool] })).agent.run('add twice'));
    expect(heard.map((e) => e.type)).toEqual(events.map((e) => e.type));
    expect(
      heard
        .filter((e) => e.type === 'text_delta')
        .map((e) => (e as { delta: string }).delta)
        .join(''),
    ).toBe('Adding.Both sums are done.');
    expect(result.reason).toBe('final_answer');
  });

  it('sequential calls keep their order when an asynchronous call comes before synchronous ones', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Answers later.',
      parameters: { type: 'object', properties: {} },
      execute: () => new Promise<string>((resolve) => setTimeout(() => resolve('late'), 20)),
    });
    const turn = {
      toolCalls: [
        { name: 'slow', arguments: {} },
        { name: 'add', arguments: { a: 1, b: 1 } },
        { name: 'add', arguments: { a: 2, b: 2 } },
      ],
    };
    const { agent, server } = await setup([turn, { text: 'ok' }], { tools: [slow, addTool], toolExecution: 'sequential' });
    const { events } = await collect(agent.run('go'));
    const order = events.flatMap((e) => (e.type === 'tool_started' || e.type === 'tool_finished' ? [`${e.type}:${e.name}`] : []));
    expect(order).toEqual([
      'tool_started:slow',
      'tool_finished:slow',
      'tool_started:add',
      'tool_finished:add',
      'tool_started:add',
      'tool_finished:add',
    ]);
    const results = server.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results).toEqual(['late', '2', '4']);
  });

  it('parallel calls: a synchronous call finishes while an asynchronous one before it still runs', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Answers later.',
      parameters: { type: 'object', properties: {} },
      execute: () => new Promise<string>((resolve) => setTimeout(() => resolve('late'), 20)),
    });
    const turn = {
      toolCalls: [
        { name: 'slow', arguments: {} },
        { name: 'add', arguments: { a: 1, b: 1 } },
      ],
    };
    const { agent, server } = await setup([turn, { text: 'ok' }], { tools: [slow, addTool] });
    const { events } = await collect(agent.run('go'));
    const order = events.flatMap((e) => (e.type === 'tool_started' || e.type === 'tool_finished' ? [`${e.type}:${e.name}`] : []));
    expect(order).toEqual(['tool_started:slow', 'tool_started:add', 'tool_finished:add', 'tool_finished:slow']);
    expect(server.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['late', '2']);
  });

  it('a stop hook that throws ends the run as fatal_error with the history so far', async () => {
    const { agent } = await setup(script(), {
      tools: [addTool],
      hooks: {
        shouldStopAfterTurn: () => {
          throw new Error('hook broke');
        },
      },
    });
    const result = await agent.run('add');
    expect(result.reason).toBe('fatal_error');
    expect(result.error?.message).toMatch(/hook broke/);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });
});
