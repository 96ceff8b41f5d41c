import { describe, expect, it } from 'vitest';
import { DELTA_EVENT_TYPES } from '../../src/events.js';
import { messagesFromEvents } from '../../src/loop/fold.js';
import { addTool, collect, gateTool, setup } from './helpers.js';

describe('the event log of a run', () => {
  it('stored events are numbered from 0 without gaps (deltas share the next one), stamped with the run id, JSON-serializable, ending with run_finished', async () => {
    const turn = {
      toolCalls: [
        { name: 'add', arguments: { a: 1, b: 2 } },
        { name: 'add', arguments: { a: 3, b: 4 } },
      ],
    };
    const { agent } = await setup([turn, { text: 'Sums: 3 and 7.' }], { tools: [addTool] });
    const handle = agent.run('add both');
    const { events, result } = await collect(handle);
    const stored = events.filter((e) => !DELTA_EVENT_TYPES.has(e.type));
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i));
    expect(events.map((e) => e.seq)).toEqual([...events.map((e) => e.seq)].sort((a, b) => a - b));
    for (const [i, e] of events.entries()) {
      if (DELTA_EVENT_TYPES.has(e.type)) expect(e.seq).toBe(events.slice(i).find((n) => !DELTA_EVENT_TYPES.has(n.type))?.seq);
    }
    expect(new Set(events.map((e) => e.runId))).toEqual(new Set([handle.runId]));
    expect(JSON.parse(JSON.stringify(events))).toEqual(events);
    expect(events[0]).toMatchObject({ type: 'run_started', traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(events.at(-1)).toMatchObject({ type: 'run_finished', reason: 'final_answer', status: 'done' });
    expect(result.traceId).toBe((events[0] as { traceId: string }).traceId);
  });

  it('walks the state machine: planning → tool_calling → observing → planning → done', async () => {
    const { agent } = await setup([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'ok' }], { tools: [addTool] });
    const { events } = await collect(agent.run('go'));
    const states = events.flatMap((e) => (e.type === 'state_changed' ? [e.to] : []));
    expect(states).toEqual(['planning', 'tool_calling', 'observing', 'planning', 'done']);
  });

  it('rebuilds the run: the fold of the stored (non-delta) events equals the result history', async () => {
    const gate = gateTool();
    const turn = {
      toolCalls: [
        { name: 'wait', arguments: {} },
        { name: 'add', arguments: { a: 5, b: 6 } },
      ],
    };
    const { agent } = await setup([turn, { text: 'all done' }], { tools: [gate.tool, addTool] });
    const handle = agent.run('go', { history: [{ role: 'user', content: 'earlier' }] });
    await gate.started;
    handle.steer('also this');
    gate.release();
    const { events, result } = await collect(handle);
    const stored = events.filter((e) => !DELTA_EVENT_TYPES.has(e.type));
    expect(messagesFromEvents(stored)).toEqual(result.messages);
  });

  it('a tool call carries an idempotency key stable for its turn and index', async () => {
    const { agent } = await setup(
      [
        {
          toolCalls: [
            { name: 'add', arguments: { a: 1, b: 2 } },
            { name: 'add', arguments: { a: 2, b: 2 } },
          ],
        },
        { text: 'ok' },
      ],
      {
        tools: [addTool],
      },
    );
    const handle = agent.run('go');
    const { events } = await collect(handle);
    const assistantSeq = events.find((e) => e.type === 'assistant_message')!.seq;
    const keys = events.flatMap((e) => (e.type === 'tool_started' ? [e.idempotencyKey] : []));
    expect(keys.sort()).toEqual([`${handle.runId}:${assistantSeq}:0`, `${handle.runId}:${assistantSeq}:1`]);
  });

  it('streams text deltas that add up to the final text', async () => {
    const text = 'The quick brown fox jumps over the lazy dog, twice over.';
    const { agent } = await setup([{ text }]);
    const { events, result } = await collect(agent.run('fox'));
    const deltas = events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(text);
    expect(result.text).toBe(text);
  });

  it('a run that is only awaited keeps no event buffer, and listeners still see events live', async () => {
    const { agent } = await setup([{ text: 'ok' }]);
    const handle = agent.run('x');
    const seen: string[] = [];
    handle.subscribe((e) => seen.push(e.type));
    const result = await handle;
    expect(result.reason).toBe('final_answer');
    expect(seen.at(-1)).toBe('run_finished');
    expect(() => handle[Symbol.asyncIterator]()).toThrow(/no longer keeps its events/);
  });

  it('the buffer goes once the result is taken by any route and no iterator reads it', async () => {
    const buffered = (handle: object): unknown => (handle as { buffer?: unknown }).buffer;
    const { agent } = await setup([{ text: 'one' }, { text: 'two' }, { text: 'three' }, { text: 'four' }]);

    const viaResult = agent.run('x');
    expect((await viaResult.result).reason).toBe('final_answer');
    expect(buffered(viaResult)).toBeUndefined();
    expect(() => viaResult[Symbol.asyncIterator]()).toThrow(/no longer keeps its events/);

    // Leaving a loop early releases the iterator's hold.
    const leftEarly = agent.run('x');
    for await (const event of leftEarly) if (event.type === 'run_started') break;
    await leftEarly;
    expect(buffered(leftEarly)).toBeUndefined();

    // A live iterator keeps the buffer until it ends, also when the result was taken first.
    const reading = agent.run('x');
    const iterator = reading[Symbol.asyncIterator]();
    await reading.result;
    expect(buffered(reading)).toBeDefined();
    const types: string[] = [];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) types.push(next.value.type);
    expect(types.at(-1)).toBe('run_finished');
    expect(buffered(reading)).toBeUndefined();

    // An iterator that ended before the result was taken leaves the buffer to the await.
    const done = agent.run('x');
    for await (const _event of done);
    expect(buffered(done)).toBeDefined();
    await done;
    expect(buffered(done)).toBeUndefined();
  });
});
