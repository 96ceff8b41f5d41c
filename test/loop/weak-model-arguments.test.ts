// What weaker models write instead of JSON arguments (a Python dict, unquoted keys,
// comments, missing commas) reaches the tool repaired, and the log keeps the model's text,
// the repaired text and what was repaired; what no repair can read gets the guided error.
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { addTool, collect, setup } from './helpers.js';

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

describe('arguments from weaker models', () => {
  it('a Python dict with a comment and a missing comma runs repaired, the repair in tool_started', async () => {
    const raw = "{'a': 2 // the first\n 'b': 3}";
    const { agent } = await setup([{ toolCalls: [{ name: 'add', arguments: raw }] }, { text: 'five' }], { tools: [addTool] });
    const { events, result } = await collect(agent.run('add them'));
    expect(result.status).toBe('done');
    const [started] = ofType(events, 'tool_started');
    expect(started).toMatchObject({
      arguments: { a: 2, b: 3 },
      rawArguments: raw,
      repairs: ['single quotes', 'comments', 'missing commas'],
    });
    expect(JSON.parse(started!.repairedArguments!)).toEqual({ a: 2, b: 3 });
    expect(ofType(events, 'tool_finished')[0]).toMatchObject({ result: { isError: false, content: [{ type: 'text', text: '5' }] } });
  });

  it('unquoted keys and Python literals are repaired before validation, which then coerces as usual', async () => {
    const { agent } = await setup([{ toolCalls: [{ name: 'add', arguments: '{a: "1", b: 2, extra: None}' }] }, { text: 'three' }], {
      tools: [addTool],
    });
    const { events } = await collect(agent.run('add them'));
    const [started] = ofType(events, 'tool_started');
    expect(started?.repairs).toEqual(['unquoted keys', 'Python literals']);
    expect(started?.arguments).toMatchObject({ a: 1, b: 2 });
    expect(ofType(events, 'tool_finished')[0]?.result.content).toEqual([{ type: 'text', text: '3' }]);
  });

  it('clean arguments carry no repair fields', async () => {
    const { agent } = await setup([{ toolCalls: [{ name: 'add', arguments: '{"a": 1, "b": 2}' }] }, { text: 'three' }], {
      tools: [addTool],
    });
    const { events } = await collect(agent.run('add them'));
    const [started] = ofType(events, 'tool_started');
    expect(started).not.toHaveProperty('repairs');
    expect(started).not.toHaveProperty('repairedArguments');
  });

  it('a call no repair can read gets the guided error, and the corrected call on the next turn runs', async () => {
    const { agent, server } = await setup(
      [
        { toolCalls: [{ name: 'add', arguments: '{a + b}' }] },
        { toolCalls: [{ name: 'add', arguments: "{'a': 1, 'b': 1}" }] },
        { text: 'two' },
      ],
      { tools: [addTool] },
    );
    const { events, result } = await collect(agent.run('add them'));
    expect(result.status).toBe('done');
    const finished = ofType(events, 'tool_finished');
    expect(finished[0]).toMatchObject({ errorCode: 'invalid_arguments', result: { isError: true } });
    const text = JSON.stringify(finished[0]?.result.content);
    expect(text).toContain('invalid arguments for tool \\"add\\": arguments are not valid JSON');
    expect(text).toContain('Send the arguments as one JSON object.');
    expect(ofType(events, 'tool_started')[0]).not.toHaveProperty('repairs');
    expect(finished[1]?.result.content).toEqual([{ type: 'text', text: '2' }]);
    expect(server.requests).toHaveLength(3);
  });

  it('a call cut off mid-object is not completed by repair: it gets the cut-off advice', async () => {
    const { agent } = await setup([{ toolCalls: [{ name: 'add', arguments: "{'a': 1, 'b': " }] }, { text: 'gave up' }], {
      tools: [addTool],
    });
    const { events } = await collect(agent.run('add them'));
    const [finished] = ofType(events, 'tool_finished');
    expect(finished?.errorCode).toBe('invalid_arguments');
    expect(JSON.stringify(finished?.result.content)).toContain('cut off by the output token limit');
  });
});
