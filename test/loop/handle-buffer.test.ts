/**
 * When a run's handle keeps its events for iterators: an iterator attached in the same
 * synchronous code as the await (in either order) sees every event; a run that is only
 * awaited keeps no event list while it runs; iterating after the awaited result arrived
 * is refused with a message that says what to do.
 */
import { describe, expect, it } from 'vitest';
import type { RunEvent, RunResult } from '../../src/events.js';
import { RunHandle } from '../../src/loop/handle.js';
import { defineTool } from '../../src/tools/define.js';
import { addTool, collect, setup } from './helpers.js';

const script = () => [{ text: 'Adding.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'It is 3.' }];

async function typesOf(run: AsyncIterable<RunEvent>): Promise<string[]> {
  const types: string[] = [];
  for await (const event of run) types.push(event.type);
  return types;
}

/** The event types of the same script, iterated the way the README shows: iterate, then await. */
async function reference(): Promise<string[]> {
  const { agent } = await setup(script(), { tools: [addTool] });
  return (await collect(agent.run('add'))).events.map((e) => e.type);
}

const buffered = (handle: RunHandle): unknown => (handle as unknown as { buffer?: unknown }).buffer;

describe('an iterator attached beside the await', () => {
  it('Promise.all([run.result, iterate]) sees every event, as iterate-then-await does', async () => {
    const expected = await reference();
    const { agent } = await setup(script(), { tools: [addTool] });
    const run = agent.run('add');
    const [result, types] = await Promise.all([run.result, typesOf(run)]);
    expect(result.reason).toBe('final_answer');
    expect(types).toEqual(expected);
    expect(types[0]).toBe('run_started');
    expect(types.at(-1)).toBe('run_finished');
  });

  it('run.then(…) before the loop, in the same synchronous code, leaves the loop every event', async () => {
    const expected = await reference();
    const { agent } = await setup(script(), { tools: [addTool] });
    const run = agent.run('add');
    const done = run.then((r) => r.reason);
    const types = await typesOf(run);
    expect(types).toEqual(expected);
    expect(await done).toBe('final_answer');
  });

  it('also for a run that had already ended when its result was taken', async () => {
    const { agent } = await setup(script(), { tools: [addTool] });
    const run = agent.run('add');
    const seen: string[] = [];
    const ended = new Promise<void>((resolve) => run.subscribe((e) => (seen.push(e.type), e.type === 'run_finished' && resolve())));
    await ended;
    await new Promise<void>((resolve) => setImmediate(resolve)); // the handle's own end, after run_finished
    const [result, types] = await Promise.all([run.result, typesOf(run)]);
    expect(result.reason).toBe('final_answer');
    expect(types).toEqual(seen);
  });
});

describe('a run that is only awaited', () => {
  it('keeps no event list while it runs', async () => {
    let handle: RunHandle | undefined;
    const whileRunning: Array<{ observed: boolean; buffer: unknown }> = [];
    const probe = defineTool({
      name: 'probe',
      description: 'Looks at the handle.',
      parameters: { type: 'object', properties: {} },
      execute: async () => {
        whileRunning.push({ observed: (handle as RunHandle).observed, buffer: buffered(handle as RunHandle) });
        return 'looked';
      },
    });
    const { agent } = await setup([{ toolCalls: [{ name: 'probe', arguments: {} }] }, { text: 'done' }], { tools: [probe] });
    handle = agent.run('look');
    const result = await handle;
    expect(result.reason).toBe('final_answer');
    expect(whileRunning).toEqual([{ observed: false, buffer: undefined }]);
  });

  it('refuses an iterator once the awaited result arrived, saying how to read events', async () => {
    const { agent } = await setup([{ text: 'ok' }]);
    const run = agent.run('x');
    await run;
    expect(() => run[Symbol.asyncIterator]()).toThrow(
      /no longer keeps its events.*Promise\.all\(\[run\.result, iterate\(run\)\]\).*run\.subscribe/,
    );
  });

  it('refuses it the same way when the run had already ended before the await', async () => {
    const { agent } = await setup([{ text: 'ok' }]);
    const run = agent.run('x');
    await new Promise<void>((resolve) => run.subscribe((e) => e.type === 'run_finished' && resolve()));
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(buffered(run)).toBeDefined(); // nobody took the result yet: kept for an iterator
    await run;
    expect(buffered(run)).toBeUndefined();
    expect(() => run[Symbol.asyncIterator]()).toThrow(/no longer keeps its events/);
  });
});

describe('the handle on its own', () => {
  it('decides on the buffer at the next event after the result was taken, not when it is taken', () => {
    const controls = { steering: [], followUps: [], abortController: new AbortController() };
    const handle = new RunHandle('run_1', controls, new Promise<RunResult>(() => {}));
    const event = (type: string) => ({ type, runId: 'run_1', seq: 0, at: 0 }) as unknown as RunEvent;
    handle.deliver(event('run_started'));
    void handle.then(() => {});
    // Same synchronous code: an iterator may still come, and finds the buffer.
    expect(buffered(handle)).toEqual([event('run_started')]);
    const late = handle[Symbol.asyncIterator]();
    handle.deliver(event('state_changed'));
    expect(buffered(handle)).toHaveLength(2);
    void late.return?.();
    // The last iterator out after the result was taken drops it.
    expect(buffered(handle)).toBeUndefined();

    const alone = new RunHandle('run_2', controls, new Promise<RunResult>(() => {}));
    void alone.result;
    expect(alone.observed).toBe(false); // asked at the next event: nobody can read it
    expect(buffered(alone)).toBeUndefined();
  });
});
