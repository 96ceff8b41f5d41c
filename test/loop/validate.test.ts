/** What the agent refuses up front, and the history it makes whole before a run. */
import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import type { AgentOptions } from '../../src/loop/options.js';
import { ReinError } from '../../src/errors.js';
import type { Message } from '../../src/model/types.js';
import { addTool, roles, setup } from './helpers.js';

const model = {
  provider: 'openai',
  id: 'scripted',
  api: 'openai-chat',
  baseUrl: 'http://127.0.0.1:1/v1',
} as unknown as AgentOptions['model'];

function refusal(options: Record<string, unknown>): string {
  try {
    new Agent({ model, ...options } as AgentOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(ReinError);
    expect((error as ReinError).code).toBe('config');
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('agent options are checked in the constructor', () => {
  it.each([
    [{ limits: { maxSteps: Number.NaN } }, /limits\.maxSteps: expected a whole number.*got NaN/],
    [{ limits: { maxSteps: null } }, /limits\.maxSteps.*got null/],
    [{ limits: { maxSteps: -1 } }, /limits\.maxSteps.*got -1/],
    [{ limits: { timeoutMs: -5 } }, /limits\.timeoutMs: expected a positive number of milliseconds.*, got -5/],
    // A Node timer waits at most 2^31-1 ms; a longer one fires at once.
    [
      { limits: { timeoutMs: 2_147_483_648 } },
      /limits\.timeoutMs: expected a positive number of milliseconds, at most 2147483647 \(about 24\.8 days; leave timeoutMs out for no time limit\), got 2147483648/,
    ],
    [{ limits: { timeoutMs: Infinity } }, /limits\.timeoutMs.*got Infinity/],
    [{ toolTimeoutMs: 3e9 }, /toolTimeoutMs: expected a number of milliseconds from 0 to 2147483647.*got 3000000000/],
    [{ limits: { maxTokens: -1 } }, /limits\.maxTokens.*got -1/],
    [{ limits: { maxStep: 3 } }, /limits\.maxStep is not an option: did you mean limits\.maxSteps\?/],
    [{ limits: null }, /limits: expected an object.*got null/],
    [{ toolExecution: 'serial' }, /toolExecution: expected 'parallel' or 'sequential', got "serial"/],
    [{ toolTimeoutMs: -1 }, /toolTimeoutMs.*got -1/],
    [{ maxToolOutputChars: Number.NaN }, /maxToolOutputChars.*got NaN/],
    [{ maxToolOutputChars: 0 }, /maxToolOutputChars.*got 0/],
    [{ tools: addTool }, /tools: expected an array of tools/],
    [{ tools: [null] }, /tools\[0\]: expected a tool.*got null/],
    [{ hooks: { transformContext: 'x' } }, /hooks\.transformContext: expected a function, got "x"/],
    [
      { hooks: { shouldStopAfterTrun: () => true } },
      /hooks\.shouldStopAfterTrun is not an option: did you mean hooks\.shouldStopAfterTurn\?/,
    ],
    [{ model: undefined }, /model: expected a 'provider\/model' string.*got undefined/],
    [{ model: 42 }, /model: expected.*got 42/],
    [{ model: '' }, /model: expected/],
    [{ tols: [] }, /options\.tols is not an option: did you mean options\.tools\?/],
    [{ retry: { maxDelay: 10 } }, /retry\.maxDelay is not an option: did you mean retry\.maxDelayMs\?/],
    [{ retry: { maxRetries: 'x' } }, /retry\.maxRetries: expected a whole number of retries, 0 or more, got "x"/],
    [{ retry: { maxRetries: -1 } }, /retry\.maxRetries.*got -1/],
    [{ retry: { baseDelayMs: Number.NaN } }, /retry\.baseDelayMs.*got NaN/],
    [{ modelOptions: { idleTimeoutMs: -1 } }, /modelOptions\.idleTimeoutMs: expected a positive number of milliseconds.*got -1/],
    [{ modelOptions: { idleTimeout: 5 } }, /modelOptions\.idleTimeout is not an option: did you mean modelOptions\.idleTimeoutMs\?/],
    [{ modelOptions: { thinking: 'max' } }, /modelOptions\.thinking: expected 'off', 'low', 'medium' or 'high', got "max"/],
  ])('%j is refused', (options, message) => {
    expect(refusal(options)).toMatch(message);
  });

  it('an agent with its own streamFn (a replay) needs no API key for a hosted provider', () => {
    const key = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      expect(() => new Agent({ model: 'openai/gpt-4o-mini' })).toThrow(/OPENAI_API_KEY is not set/);
      const replaying = new Agent({ model: 'openai/gpt-4o-mini', streamFn: () => ({}) as never });
      expect(replaying.model).toMatchObject({ provider: 'openai', id: 'gpt-4o-mini' });
      expect(replaying.model.apiKey).toBeUndefined();
    } finally {
      if (key !== undefined) process.env.OPENAI_API_KEY = key;
    }
  });

  it('accepts the documented special values', () => {
    expect(
      () =>
        new Agent({
          model,
          limits: { maxSteps: Infinity, noProgressRepeats: 0, maxConsecutiveToolErrors: 0, timeoutMs: undefined },
          toolTimeoutMs: 0,
        }),
    ).not.toThrow();
    expect(() => new Agent({ model, toolTimeoutMs: Infinity, toolExecution: 'sequential', maxToolOutputChars: 100 })).not.toThrow();
    expect(() => new Agent({ model, limits: { timeoutMs: 2_147_483_647 }, toolTimeoutMs: 2_147_483_647 })).not.toThrow();
  });
});

describe('a run refuses input it cannot start from, synchronously', () => {
  it.each([
    ['run(undefined)', (agent: Agent) => agent.run(undefined as never), /run\(input\): expected a string or a user message.*got undefined/],
    ['run(null)', (agent: Agent) => agent.run(null as never), /run\(input\).*got null/],
    [
      'history: [null]',
      (agent: Agent) => agent.run('x', { history: [null as never] }),
      /history\[0\]: expected a message object, got null/,
    ],
    ['history of a bad role', (agent: Agent) => agent.run('x', { history: [{ role: 'bogus' } as never] }), /history\[0\]\.role/],
    [
      'steer(undefined)',
      (agent: Agent) => agent.run('x').steer(undefined as never),
      /steer: expected a string or a user message.*got undefined/,
    ],
    ['followUp(42)', (agent: Agent) => agent.run('x').followUp(42 as never), /followUp: expected.*got 42/],
  ])('%s', async (_label, start, message) => {
    const { agent } = await setup([{ text: 'hi' }, { text: 'hi' }]);
    expect(() => start(agent)).toThrow(message);
  });
});

describe('the starting history is made whole', () => {
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 };
  const asking = (call: Record<string, unknown>): Message =>
    ({
      role: 'assistant',
      content: [{ type: 'tool_call', id: 'c1', name: 'add', ...call }],
      stopReason: 'tool_use',
      usage,
      provider: 'openai',
      model: 'x',
    }) as Message;

  it('a call without a result gets the error result the wire gets, in the run history and its events', async () => {
    const history = [{ role: 'user', content: 'earlier' } as Message, asking({ arguments: { a: 1, b: 2 }, rawArguments: '{"a":1,"b":2}' })];
    const { agent, server } = await setup([{ text: 'ok' }], { tools: [addTool] });
    const handle = agent.run('now', { history });
    const events: Array<{ type: string; history?: Message[] }> = [];
    handle.subscribe((e) => events.push(e));
    const result = await handle;
    expect(result.reason).toBe('final_answer');
    expect(roles(result.messages)).toBe('user,assistant,tool,user,assistant');
    const synthetic = result.messages[2] as Extract<Message, { role: 'tool' }>;
    expect(synthetic).toMatchObject({ toolCallId: 'c1', isError: true });
    // The same result the model layer sends on the wire.
    expect(server.requests[0]!.messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
    expect(String(server.requests[0]!.messages[2]!.content)).toContain((synthetic.content[0] as { text: string }).text);
    expect(events[0]!.history).toEqual(result.messages.slice(0, 3));
    // The caller's array is left as it was.
    expect(history).toHaveLength(2);
  });

  it('a call without rawArguments gets the JSON of its arguments', async () => {
    const { agent, server } = await setup([{ text: 'ok' }], { tools: [addTool] });
    const result = await agent.run('now', { history: [{ role: 'user', content: 'earlier' }, asking({ arguments: { a: 1 } })] });
    expect(result.reason).toBe('final_answer');
    expect(result.messages[1]).toMatchObject({ content: [{ type: 'tool_call', arguments: { a: 1 }, rawArguments: '{"a":1}' }] });
    expect(
      (server.requests[0]!.messages[1] as { tool_calls: Array<{ function: { arguments: string } }> }).tool_calls[0]!.function.arguments,
    ).toBe('{"a":1}');
  });

  it('a whole history is used as given (the same array)', async () => {
    const { agent } = await setup([{ text: 'ok' }]);
    const history: Message[] = [{ role: 'user', content: 'earlier' }];
    const handle = agent.run('now', { history });
    let started: unknown;
    handle.subscribe((e) => {
      if (e.type === 'run_started') started = e.history;
    });
    await handle;
    expect(started).toBe(history);
  });
});
