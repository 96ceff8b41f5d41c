/**
 * Queued messages (steer, follow-up) and the end of a turn: a text answer that goes on
 * because something is queued passes the same budget and hook checks as a tool turn, and a
 * queued message enters only when the run goes on.
 */
import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/define.js';
import { addTool, collect, roles, setup } from './helpers.js';

const usage = { prompt_tokens: 60, completion_tokens: 40 };

describe('a text turn that goes on because a message is queued', () => {
  it('stops on the token budget like a tool turn', async () => {
    const { agent, server } = await setup(() => ({ text: 'an answer', usage }), { limits: { maxTokens: 150 } });
    const handle = agent.run('hello');
    for (let i = 0; i < 5; i++) handle.followUp(`more ${i}`);
    const result = await handle;
    expect(result).toMatchObject({ status: 'stopped', reason: 'budget' });
    expect(result.totals.steps).toBe(2);
    expect(server.requests).toHaveLength(2);
    // The follow-up that did not get to run is not left unanswered in the history.
    expect(result.messages.at(-1)!.role).toBe('assistant');
    expect(handle.unsent.followUps.map((m) => m.content)).toEqual(['more 1', 'more 2', 'more 3', 'more 4']);
  });

  it('asks shouldStopAfterTurn, with the turn and no tool results', async () => {
    const asked: Array<{ step: number; toolResults: number }> = [];
    const { agent } = await setup([{ text: 'one' }, { text: 'two' }, { text: 'three' }], {
      hooks: {
        shouldStopAfterTurn: ({ step, toolResults }) => (
          asked.push({ step, toolResults: toolResults.length }), step === 2 ? 'enough' : false
        ),
      },
    });
    const handle = agent.run('hello');
    handle.followUp('again');
    handle.followUp('and again');
    const result = await handle;
    expect(asked).toEqual([
      { step: 1, toolResults: 0 },
      { step: 2, toolResults: 0 },
    ]);
    expect(result).toMatchObject({ reason: 'hook', detail: 'enough', text: 'two' });
  });

  it('a final answer with nothing queued asks no hook', async () => {
    let asked = 0;
    const { agent } = await setup([{ text: 'done' }], { hooks: { shouldStopAfterTurn: () => (asked++, true) } });
    expect((await agent.run('hi')).reason).toBe('final_answer');
    expect(asked).toBe(0);
  });
});

describe('queued messages', () => {
  it('a steer sent before the run starts is in the first model request', async () => {
    const { agent, server } = await setup([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'ok' }], {
      tools: [addTool],
    });
    const handle = agent.run('add');
    handle.steer('use small numbers');
    const { events, result } = await collect(handle);
    expect(roles(server.requests[0]!.messages)).toBe('user,user');
    expect(server.requests[0]!.messages[1]!.content).toBe('use small numbers');
    expect(events.find((e) => e.type === 'message_injected')).toMatchObject({ kind: 'steer', step: 0 });
    expect(roles(result.messages)).toBe('user,user,assistant,tool,assistant');
  });

  it('a tool that ends the run with terminate leaves queued messages unsent, not in the history', async () => {
    let handle!: ReturnType<typeof agent.run>;
    const stopper = defineTool({
      name: 'stop_here',
      description: 'Ends the task.',
      parameters: { type: 'object', properties: {} },
      execute: () => {
        handle.steer('a late steer');
        handle.followUp('a late follow-up');
        return { content: 'ok', terminate: true };
      },
    });
    const { agent, server } = await setup([{ toolCalls: [{ name: 'stop_here', arguments: {} }] }], { tools: [stopper] });
    handle = agent.run('go');
    const { events, result } = await collect(handle);
    expect(result.reason).toBe('terminate');
    expect(server.requests).toHaveLength(1);
    expect(result.messages.at(-1)!.role).toBe('tool');
    expect(events.some((e) => e.type === 'message_injected')).toBe(false);
    expect(handle.unsent).toEqual({
      steering: [{ role: 'user', content: 'a late steer' }],
      followUps: [{ role: 'user', content: 'a late follow-up' }],
    });
  });

  it("shouldStopAfterTurn returning '' does not stop the run", async () => {
    const { agent } = await setup([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }], {
      tools: [addTool],
      hooks: { shouldStopAfterTurn: () => '' },
    });
    expect(await agent.run('add')).toMatchObject({ reason: 'final_answer', text: 'three' });
  });
});

describe('hooks that return the wrong thing', () => {
  it('transformContext returning undefined fails the run naming the hook', async () => {
    const { agent } = await setup([{ text: 'never' }], { hooks: { transformContext: (() => undefined) as never } });
    const result = await agent.run('hi');
    expect(result).toMatchObject({ status: 'failed', reason: 'fatal_error', error: { code: 'config' } });
    expect(result.error!.message).toMatch(/hooks\.transformContext must return an array of messages.*got undefined/);
  });
});

describe('an output schema', () => {
  const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] };

  it('a text answer is met with a reminder to call the final-answer tool, and the call then ends the run', async () => {
    const { agent, server } = await setup([{ text: 'It is 42.' }, { toolCalls: [{ name: 'final_answer', arguments: { answer: 42 } }] }], {
      outputSchema: schema,
    });
    const result = await agent.run('answer?');
    expect(result).toMatchObject({ reason: 'done_signal', output: { answer: 42 } });
    expect(result.totals.steps).toBe(2);
    const reminder = server.requests[1]!.messages.at(-1)!;
    expect(reminder.role).toBe('user');
    expect(String(reminder.content)).toMatch(/`final_answer` tool/);
  });

  it('after two reminders in a row, a text answer fails the run: it has no output of its schema', async () => {
    const { agent, server } = await setup(() => ({ text: 'just text' }), { outputSchema: schema });
    const result = await agent.run('answer?');
    expect(result).toMatchObject({ status: 'failed', reason: 'fatal_error', text: 'just text', error: { code: 'invalid_response' } });
    expect(result.error?.message).toMatch(/answered in text 3 times in a row without calling the `final_answer` tool/);
    expect(result.output).toBeUndefined();
    expect(server.requests).toHaveLength(3);
    expect(roles(result.messages)).toBe('user,assistant,user,assistant,user,assistant');
  });

  it('reminders count as steps, so max_steps bounds them', async () => {
    const { agent } = await setup(() => ({ text: 'just text' }), { outputSchema: schema, limits: { maxSteps: 2 } });
    expect(await agent.run('answer?')).toMatchObject({ reason: 'max_steps' });
  });
});

describe('the end of a run', () => {
  it('no event reaches a listener after run_finished, even from a tool that ignores its abort signal', async () => {
    let started!: () => void;
    let release!: () => void;
    let progressed!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const released = new Promise<void>((r) => (release = r));
    const reported = new Promise<void>((r) => (progressed = r));
    const stubborn = defineTool({
      name: 'stubborn',
      description: 'Ignores its signal.',
      parameters: { type: 'object', properties: {} },
      execute: async (_args, ctx) => {
        started();
        await released;
        ctx.progress({ progress: 1, total: 1 });
        progressed();
        return 'late';
      },
    });
    const { agent } = await setup([{ toolCalls: [{ name: 'stubborn', arguments: {} }] }, { text: 'never' }], { tools: [stubborn] });
    const handle = agent.run('go');
    const seen: string[] = [];
    handle.subscribe((e) => seen.push(e.type));
    await running;
    handle.abort();
    expect((await handle).reason).toBe('aborted');
    release();
    await reported;
    expect(seen.at(-1)).toBe('run_finished');
    expect(seen).not.toContain('tool_progress');
  });
});
