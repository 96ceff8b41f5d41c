// The loop over every provider's wire, through the real adapters, against the scripted
// server speaking that wire (and validating what the adapter sends like the real API).
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import type { AgentOptions } from '../../src/loop/options.js';
import {
  startScriptedServer,
  text,
  toolCall,
  toolCalls,
  type Fault,
  type Script,
  type ScriptedServer,
  type ScriptMessage,
} from '../../src/testing/index.js';
import type { ModelApi } from '../../src/model/types.js';
import { defineTool } from '../../src/tools/define.js';
import { addTool, collect, gateTool } from './helpers.js';

interface WireCase {
  api: ModelApi;
  /** A fault each provider really sends and rein must retry. */
  transient: Fault;
  /** The retry event it leads to (delay: 5 ms backoff, or what the server asked for). */
  retry: { code: string; delayMs: number };
}

const WIRES: WireCase[] = [
  { api: 'openai-chat', transient: { type: 'status', status: 500 }, retry: { code: 'server_error', delayMs: 5 } },
  { api: 'anthropic-messages', transient: { type: 'status', status: 529 }, retry: { code: 'overloaded', delayMs: 5 } },
  {
    api: 'openai-responses',
    transient: { type: 'error_in_stream', message: 'An error occurred while processing your request.', code: 'server_error' },
    retry: { code: 'server_error', delayMs: 5 },
  },
  // Gemini says how long to wait only in the body: RetryInfo { retryDelay: '1s' }.
  { api: 'gemini', transient: { type: 'status', status: 429, retryAfter: 1 }, retry: { code: 'rate_limited', delayMs: 1000 } },
];

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The neutral messages of the server's `n`-th request (asserting the server accepted it). */
function sent(server: ScriptedServer, n: number): ScriptMessage[] {
  const received = server.received[n];
  expect(received, `request ${n} was never made`).toBeDefined();
  expect(received!.rejected, `the server rejected request ${n}`).toBeUndefined();
  return received!.request!.messages;
}

function roles(messages: ScriptMessage[]): string {
  return messages.map((m) => m.role).join(',');
}

/** Resolves when `started` does, or when the run ends first (an adapter that failed): never hangs. */
async function startedOrEnded(started: Promise<void>, run: PromiseLike<unknown>): Promise<'started' | 'ended'> {
  return Promise.race([started.then(() => 'started' as const), Promise.resolve(run).then(() => 'ended' as const)]);
}

describe.each(WIRES)('the loop over the $api wire', ({ api, transient, retry }) => {
  async function setup(script: Script, options: Omit<AgentOptions, 'model'> = {}) {
    const server = await startScriptedServer({ script });
    servers.push(server);
    const agent = new Agent({ retry: { baseDelayMs: 5, jitter: false }, ...options, model: server.model('m', api) });
    return { server, agent };
  }

  it('a tool round trip: the call runs and its result goes back tied to the call', async () => {
    const { server, agent } = await setup([toolCall('add', { a: 2, b: 40 }), text('It is 42.')], { tools: [addTool], system: 'Be brief.' });
    const result = await agent.run('What is 2 + 40?');
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ reason: 'final_answer', text: 'It is 42.' });
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(server.received[0]!.request).toMatchObject({ api, model: 'm', system: 'Be brief.', toolNames: ['add'] });
    const second = sent(server, 1);
    expect(roles(second)).toBe('user,assistant,tool');
    const [, assistant, tool] = second;
    expect(assistant).toMatchObject({ role: 'assistant', toolCalls: [{ name: 'add' }] });
    expect(JSON.parse((assistant as Extract<ScriptMessage, { role: 'assistant' }>).toolCalls[0]!.arguments)).toEqual({ a: 2, b: 40 });
    expect(tool).toMatchObject({
      role: 'tool',
      content: '42',
      name: 'add',
      toolCallId: (assistant as Extract<ScriptMessage, { role: 'assistant' }>).toolCalls[0]!.id,
    });
  });

  it('parallel calls run concurrently and are written back in call order', async () => {
    const finished: string[] = [];
    let secondDone!: () => void;
    const second = new Promise<void>((resolve) => (secondDone = resolve));
    const tag = defineTool({
      name: 'tag',
      description: 'Returns its tag; "first" waits until "second" has finished.',
      parameters: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
      execute: async ({ tag: t }, ctx) => {
        // Only a concurrent run lets "first" finish: it waits for "second" (or the abort).
        if (t === 'first')
          await Promise.race([second, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))]);
        finished.push(String(t));
        if (t === 'second') secondDone();
        return String(t);
      },
    });
    const { server, agent } = await setup(
      [toolCalls({ name: 'tag', arguments: { tag: 'first' } }, { name: 'tag', arguments: { tag: 'second' } }), text('done')],
      { tools: [tag] },
    );
    const result = await agent.run('go');
    expect(result.error).toBeUndefined();
    expect(result.reason).toBe('final_answer');
    expect(finished).toEqual(['second', 'first']);
    const messages = sent(server, 1);
    expect(roles(messages)).toBe('user,assistant,tool,tool');
    const calls = (messages[1] as Extract<ScriptMessage, { role: 'assistant' }>).toolCalls;
    const results = messages.slice(2) as Array<Extract<ScriptMessage, { role: 'tool' }>>;
    expect(calls.map((c) => JSON.parse(c.arguments).tag)).toEqual(['first', 'second']);
    expect(results.map((r) => [r.toolCallId, r.content])).toEqual([
      [calls[0]!.id, 'first'],
      [calls[1]!.id, 'second'],
    ]);
  });

  it(`a transient fault (${transient.type === 'status' ? `HTTP ${transient.status}` : 'an error in the stream'}) is retried, then the run succeeds`, async () => {
    const failing: Script = [{ fault: transient, text: 'PARTIAL-GARBAGE' }, text('recovered')];
    const { server, agent } = await setup(failing);
    const { events, result } = await collect(agent.run('hi'));
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ reason: 'final_answer', text: 'recovered' });
    const retries = events.filter((e) => e.type === 'retry_scheduled');
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, delayMs: retry.delayMs, error: { code: retry.code, kind: 'transient' } });
    // What the failed attempt streamed is not in the answer.
    expect(result.messages.filter((m) => m.role === 'assistant')).toHaveLength(1);
    expect(server.received).toHaveLength(2);
  });

  it('a thinking turn goes back in a form the server accepts', async () => {
    const { server, agent } = await setup(
      [{ thinking: 'I should add these.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, text('3')],
      { tools: [addTool] },
    );
    const result = await agent.run('1 + 2?');
    expect(result.error).toBeUndefined();
    expect(result.reason).toBe('final_answer');
    const first = result.messages[1];
    expect(first?.role === 'assistant' && first.content.find((c) => c.type === 'thinking')).toMatchObject({
      thinking: 'I should add these.',
    });
    expect(roles(sent(server, 1))).toBe('user,assistant,tool');
  });

  it('abort mid-tool leaves a history the server then accepts', async () => {
    const gate = gateTool();
    const { server, agent } = await setup(
      [toolCalls({ name: 'wait', arguments: {} }, { name: 'add', arguments: { a: 1, b: 1 } }), text('continued')],
      {
        tools: [gate.tool, addTool],
      },
    );
    const handle = agent.run('start');
    expect(await startedOrEnded(gate.started, handle)).toBe('started');
    handle.abort();
    const result = await handle;
    expect(result).toMatchObject({ status: 'aborted', reason: 'aborted' });
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    const next = await agent.run('go on', { history: result.messages });
    expect(next.error).toBeUndefined();
    expect(next).toMatchObject({ reason: 'final_answer', text: 'continued' });
    const messages = sent(server, 1);
    expect(roles(messages)).toBe('user,assistant,tool,tool,user');
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'go on' });
  });
});
