import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/define.js';
import { seedTools } from '../../src/tools/builtin/index.js';
import { addTool, collect, gateTool, roles, setup } from './helpers.js';

const call = (name: string, args: Record<string, unknown> | string) => ({ toolCalls: [{ name, arguments: args }] });
const lastToolContent = (messages: Array<{ role: string; content?: unknown }>) =>
  String(messages.filter((m) => m.role === 'tool').at(-1)?.content);

describe('errors a model can fix are fed back', () => {
  it('a failing tool is reported, and the corrected call on the next turn succeeds', async () => {
    const { agent, server } = await setup(
      [call('calculate', { expression: '1/0' }), call('calculate', { expression: '1/4' }), { text: 'It is 0.25.' }],
      {
        tools: seedTools(),
      },
    );
    const result = await agent.run('1/0 then 1/4');
    expect(result.reason).toBe('final_answer');
    expect(lastToolContent(server.requests[1]!.messages)).toMatch(/zero/i);
    expect(lastToolContent(server.requests[2]!.messages)).toBe('0.25');
  });

  it('invalid arguments go back naming the parameter', async () => {
    const { agent, server } = await setup([call('roll_dice', { sides: 'six' }), { text: 'ok' }], { tools: seedTools() });
    await agent.run('roll');
    expect(lastToolContent(server.requests[1]!.messages)).toMatch(/"?sides"?/);
  });

  it('malformed argument JSON goes back as a parse error', async () => {
    const { agent, server } = await setup([call('add', '{"a": 1, "b": '), { text: 'ok' }], { tools: [addTool] });
    await agent.run('add');
    expect(lastToolContent(server.requests[1]!.messages)).toMatch(/JSON/);
  });

  it('an unknown tool is answered with the list of available tools', async () => {
    const { agent, server } = await setup([call('serach', { q: 'x' }), { text: 'ok' }], { tools: seedTools() });
    await agent.run('search');
    const text = lastToolContent(server.requests[1]!.messages);
    expect(text).toMatch(/unknown tool "serach"/);
    for (const name of ['calculate', 'get_current_time', 'roll_dice']) expect(text).toContain(name);
  });
});

describe('tool batches', () => {
  it('parallel calls run concurrently and are written back in call order', async () => {
    const finished: string[] = [];
    const sleepy = defineTool({
      name: 'sleepy',
      description: 'Answers after a delay.',
      parameters: { type: 'object', properties: { ms: { type: 'integer' }, tag: { type: 'string' } }, required: ['ms', 'tag'] },
      execute: async ({ ms, tag }) => {
        await new Promise((r) => setTimeout(r, ms as number));
        finished.push(tag as string);
        return String(tag);
      },
    });
    const turn = {
      toolCalls: [
        { name: 'sleepy', arguments: { ms: 300, tag: 'first' } },
        { name: 'sleepy', arguments: { ms: 1, tag: 'second' } },
      ],
    };
    const { agent, server } = await setup([turn, { text: 'done' }], { tools: [sleepy] });
    const { events, result } = await collect(agent.run('go'));
    expect(finished).toEqual(['second', 'first']);
    const sent = server.requests[1]!.messages;
    expect(roles(sent)).toBe('user,assistant,tool,tool');
    const ids = (sent[1] as { tool_calls: Array<{ id: string }> }).tool_calls.map((c) => c.id);
    expect(sent.slice(2).map((m) => [m.tool_call_id, m.content])).toEqual([
      [ids[0], 'first'],
      [ids[1], 'second'],
    ]);
    expect(events.filter((e) => e.type === 'tool_finished').map((e) => e.type === 'tool_finished' && e.name)).toHaveLength(2);
    expect(result.reason).toBe('final_answer');
  });

  it('sequential execution runs calls one after another', async () => {
    let running = 0;
    let maxRunning = 0;
    const t = defineTool({
      name: 't',
      description: 'x',
      parameters: { type: 'object', properties: { n: { type: 'integer' } } },
      execute: async () => {
        maxRunning = Math.max(maxRunning, ++running);
        await new Promise((r) => setTimeout(r, 20));
        running--;
        return 'ok';
      },
    });
    const turn = { toolCalls: [0, 1, 2].map((n) => ({ name: 't', arguments: { n } })) };
    const { agent } = await setup([turn, { text: 'done' }], { tools: [t], toolExecution: 'sequential' });
    await agent.run('go');
    expect(maxRunning).toBe(1);
  });
});

describe('steering and follow-ups', () => {
  it('a steering message sent during a tool batch enters after its results, before the next model call', async () => {
    const gate = gateTool();
    const { agent, server } = await setup([call('wait', {}), { text: 'steered' }], { tools: [gate.tool] });
    const handle = agent.run('start');
    await gate.started;
    handle.steer('actually, stop after this');
    gate.release();
    const { events, result } = await collect(handle);
    expect(result.reason).toBe('final_answer');
    const sent = server.requests[1]!.messages;
    expect(roles(sent)).toBe('user,assistant,tool,user');
    expect(sent[2]!.content).toBe('released');
    expect(sent[3]!.content).toBe('actually, stop after this');
    expect(events.some((e) => e.type === 'message_injected' && e.kind === 'steer')).toBe(true);
  });

  it('a follow-up runs when the agent would otherwise stop', async () => {
    const { agent, server } = await setup([{ text: 'first answer' }, { text: 'second answer' }]);
    const handle = agent.run('one');
    handle.followUp('and another thing');
    const result = await handle;
    expect(result).toMatchObject({ reason: 'final_answer', text: 'second answer' });
    expect(roles(server.requests[1]!.messages)).toBe('user,assistant,user');
    expect(server.requests[1]!.messages[2]!.content).toBe('and another thing');
  });
});

describe('abort leaves a valid history', () => {
  it('mid-stream: the partial answer is not in the history, and the history is accepted by a model', async () => {
    const { agent, server } = await setup([
      { text: 'a long answer that streams slowly '.repeat(20), fault: { type: 'slow', tokenDelayMs: 20 } },
      { text: 'fresh' },
    ]);
    const handle = agent.run('talk');
    for await (const event of handle) if (event.type === 'text_delta') break;
    handle.abort();
    const result = await handle;
    expect(result).toMatchObject({ status: 'aborted', reason: 'aborted' });
    expect(result.messages.map((m) => m.role)).toEqual(['user']);
    const next = await agent.run('again', { history: result.messages });
    expect(next.reason).toBe('final_answer');
    expect(server.requests.at(-1)!.messages.map((m) => m.role)).toEqual(['user', 'user']);
  });

  it('mid-tool: every call gets a result, so no tool call dangles', async () => {
    const gate = gateTool();
    const { agent, server } = await setup(
      [
        {
          toolCalls: [
            { name: 'wait', arguments: {} },
            { name: 'add', arguments: { a: 1, b: 1 } },
          ],
        },
        { text: 'continued' },
      ],
      { tools: [gate.tool, addTool] },
    );
    const handle = agent.run('start');
    await gate.started;
    handle.abort();
    const result = await handle;
    expect(result).toMatchObject({ status: 'aborted', reason: 'aborted' });
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    const next = await agent.run('go on', { history: result.messages });
    expect(next.reason).toBe('final_answer'); // the server answers 400 to a dangling tool call
    expect(roles(server.requests.at(-1)!.messages)).toBe('user,assistant,tool,tool,user');
  });

  it('an external AbortSignal aborts the run', async () => {
    const gate = gateTool();
    const { agent } = await setup([call('wait', {})], { tools: [gate.tool] });
    const controller = new AbortController();
    const handle = agent.run('start', { signal: controller.signal });
    await gate.started;
    controller.abort();
    expect((await handle).reason).toBe('aborted');
  });
});

describe('retries', () => {
  it('429 with retry-after is retried after the time the server asked for, then succeeds', async () => {
    const { agent, server } = await setup([{ fault: { type: 'status', status: 429, retryAfter: 1 } }, { text: 'finally' }]);
    const { events, result } = await collect(agent.run('hi'));
    expect(result).toMatchObject({ reason: 'final_answer', text: 'finally' });
    const retry = events.find((e) => e.type === 'retry_scheduled');
    expect(retry).toMatchObject({ attempt: 1, delayMs: 1000, error: { code: 'rate_limited', kind: 'transient' } });
    expect(server.requests).toHaveLength(2);
  });

  it('500 and a stream cut mid-way are retried; the failed attempt leaves nothing in the answer', async () => {
    const { agent } = await setup([
      { fault: { type: 'status', status: 500 } },
      { text: 'PARTIAL-GARBAGE that will be cut off here', fault: { type: 'cut', afterChunks: 2 } },
      { text: 'clean answer' },
    ]);
    const { events, result } = await collect(agent.run('hi'));
    expect(result.text).toBe('clean answer');
    expect(events.filter((e) => e.type === 'retry_scheduled').map((e) => e.type === 'retry_scheduled' && e.error.code)).toEqual([
      'server_error',
      'stream_cut',
    ]);
    expect(result.messages.filter((m) => m.role === 'assistant')).toHaveLength(1);
  });

  it('a retried request is logged (model_request) when it is sent, after the wait, and not at all when an abort ends the wait', async () => {
    let wake: (() => void) | undefined;
    const sleep = (_ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        wake = resolve;
        signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
    const script = [{ fault: { type: 'status' as const, status: 500 } }, { text: 'second try' }];
    const requestsOf = (events: Array<{ type: string }>) =>
      events.flatMap((e) => (e.type === 'model_request' ? [(e as unknown as { attempt: number }).attempt] : []));

    const waited = await setup(script, { retry: { sleep } });
    const run = waited.agent.run('hi');
    const seen: Array<{ type: string }> = [];
    for await (const event of run) {
      seen.push(event);
      if (event.type === 'retry_scheduled') {
        // Scheduled, not sent: the log says so only once the wait is over.
        expect(requestsOf(seen)).toEqual([1]);
        wake?.();
      }
    }
    expect(requestsOf(seen)).toEqual([1, 2]);
    const types = seen.map((e) => e.type);
    expect(types.indexOf('model_request', types.indexOf('retry_scheduled'))).toBeGreaterThan(types.indexOf('retry_scheduled'));
    expect((await run).text).toBe('second try');

    const aborted = await setup(script, { retry: { sleep } });
    const handle = aborted.agent.run('hi');
    const events: Array<{ type: string }> = [];
    for await (const event of handle) {
      events.push(event);
      if (event.type === 'retry_scheduled') handle.abort();
    }
    expect((await handle).reason).toBe('aborted');
    expect(requestsOf(events)).toEqual([1]);
    expect(aborted.server.requests).toHaveLength(1);
  });

  it('401 is not retried', async () => {
    const { agent, server } = await setup([{ fault: { type: 'status', status: 401 } }, { text: 'never' }]);
    const { events, result } = await collect(agent.run('hi'));
    expect(result.reason).toBe('fatal_error');
    expect(result.error?.code).toBe('auth');
    expect(server.requests).toHaveLength(1);
    expect(events.some((e) => e.type === 'retry_scheduled')).toBe(false);
  });
});

describe('hooks', () => {
  it('transformContext rewrites what the model sees without touching the history', async () => {
    const { agent, server } = await setup([{ text: 'ok' }], {
      hooks: { transformContext: (messages) => [{ role: 'user', content: 'rules: be brief' }, ...messages] },
    });
    const result = await agent.run('hi');
    expect(server.requests[0]!.messages.map((m) => m.content)).toEqual(['rules: be brief', 'hi']);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('beforeToolCall can block a call (it never runs) or patch its arguments', async () => {
    let ran = 0;
    const counted = defineTool({
      name: 'counted',
      description: 'x',
      parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      execute: ({ n }) => {
        ran++;
        return `n=${n}`;
      },
    });
    const { agent, server } = await setup([call('counted', { n: 1 }), call('counted', { n: 2 }), { text: 'ok' }], {
      tools: [counted],
      hooks: { beforeToolCall: (_c, args) => (args.n === 1 ? { block: true, reason: 'one is not allowed' } : { arguments: { n: 20 } }) },
    });
    await agent.run('go');
    expect(ran).toBe(1);
    expect(lastToolContent(server.requests[1]!.messages)).toMatch(/one is not allowed/);
    expect(lastToolContent(server.requests[2]!.messages)).toBe('n=20');
  });

  it('onConfirm denial reaches the model as an error and is recorded as approval events', async () => {
    let ran = false;
    const danger = defineTool({
      name: 'danger',
      description: 'x',
      parameters: { type: 'object', properties: {} },
      risk: 'execute',
      execute: () => {
        ran = true;
        return 'boom';
      },
    });
    const { agent, server } = await setup([call('danger', {}), { text: 'ok' }], {
      tools: [danger],
      hooks: { onConfirm: () => ({ allow: false, reason: 'not on a Friday' }) },
    });
    const { events } = await collect(agent.run('go'));
    expect(ran).toBe(false);
    expect(lastToolContent(server.requests[1]!.messages)).toMatch(/not on a Friday/);
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ approved: false, reason: 'not on a Friday' });
  });
});
