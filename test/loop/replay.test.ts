import { describe, expect, it } from 'vitest';
import { DELTA_EVENT_TYPES } from '../../src/events.js';
import { Agent } from '../../src/loop/agent.js';
import { firstDivergence, replayModel } from '../../src/loop/replay.js';
import { defineTool } from '../../src/tools/define.js';
import { collect, setup } from './helpers.js';

function adder(offset = 0) {
  return defineTool({
    name: 'add',
    description: 'Add two numbers.',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    effect: 'pure',
    execute: ({ a, b }) => String((a as number) + (b as number) + offset),
  });
}

const strip = (events: Awaited<ReturnType<typeof collect>>['events']) =>
  events
    .filter((e) => !DELTA_EVENT_TYPES.has(e.type))
    .map(({ runId, at: _a, ...rest }) => {
      // Run ids (and the idempotency keys made from them) and times differ by construction.
      const copy = JSON.parse(JSON.stringify(rest).split(runId).join('RUN')) as Record<string, unknown>;
      delete copy.traceId;
      if (copy.type === 'tool_finished') delete copy.durationMs;
      if (copy.type === 'run_finished') delete copy.result;
      return copy;
    });

describe('replaying a recorded run', () => {
  it('the same agent on the replay model reproduces the same events, with no divergence', async () => {
    const script = [
      {
        toolCalls: [
          { name: 'add', arguments: { a: 2, b: 40 } },
          { name: 'add', arguments: { a: 1, b: 1 } },
        ],
      },
      { text: 'Sums: 42 and 2.' },
    ];
    const { agent } = await setup(script, { tools: [adder()] });
    const recorded = await collect(agent.run('add these'));
    const replayAgent = new Agent({ model: agent.model, tools: [adder()], streamFn: replayModel(recorded.events) });
    const replayed = await collect(replayAgent.run('add these'));
    expect(replayed.result.messages).toEqual(recorded.result.messages);
    expect(strip(replayed.events)).toEqual(strip(recorded.events));
    expect(firstDivergence(recorded.events, replayed.events)).toBeUndefined();
  });

  it('reports the first tool result that differs when the agent code changed', async () => {
    const script = [{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 40 } }] }, { text: 'It is 42.' }];
    const { agent } = await setup(script, { tools: [adder()] });
    const recorded = await collect(agent.run('add'));
    const changed = new Agent({ model: agent.model, tools: [adder(1)], streamFn: replayModel(recorded.events) });
    const replayed = await collect(changed.run('add'));
    expect(firstDivergence(recorded.events, replayed.events)).toMatchObject({
      kind: 'tool_result',
      expected: 'add: 42',
      actual: 'add: 43',
    });
  });

  it('a replay that asks the model more often than recorded fails saying so', async () => {
    const { agent } = await setup([{ text: 'only answer' }]);
    const recorded = await collect(agent.run('x'));
    const replay = new Agent({ model: agent.model, streamFn: replayModel(recorded.events) });
    const handle = replay.run('x');
    handle.followUp('and more');
    const result = await handle;
    expect(result).toMatchObject({
      status: 'failed',
      error: { message: expect.stringMatching(/asked the model 2 times; the recording has 1 answers/) },
    });
  });
});
