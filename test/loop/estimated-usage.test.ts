// A server that reports no token usage (some OpenAI-compatible servers never do, or not
// without stream_options): each answer carries rein's estimate, marked `estimated`, so the
// token and cost budgets still stop the run. On a real local HTTP server.
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { Agent } from '../../src/loop/agent.js';
import type { AgentOptions } from '../../src/loop/options.js';
import { sseBody, startServer, type RecordedRequest, type ScriptedResponse, type TestServer } from '../model/fixture-server.js';
import { addTool, collect } from './helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SSE = { 'content-type': 'text/event-stream' };

/** Answers with an `add` call until `turns` tool results came back, then with text; never with usage unless `usage` is given. */
function script(turns: number, usage?: Record<string, number>) {
  return (request: RecordedRequest): ScriptedResponse => {
    const done = ((request.json as { messages: Array<{ role: string }> }).messages ?? []).filter((m) => m.role === 'tool').length;
    const delta =
      done < turns
        ? { tool_calls: [{ index: 0, id: `call_${done}`, type: 'function', function: { name: 'add', arguments: `{"a":${done},"b":1}` } }] }
        : { content: 'All the additions are done.' };
    const chunks: unknown[] = [
      { id: 'c', choices: [{ index: 0, delta, finish_reason: null }] },
      { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: done < turns ? 'tool_calls' : 'stop' }] },
    ];
    if (usage) chunks.push({ id: 'c', choices: [], usage });
    return { headers: SSE, body: sseBody(chunks) };
  };
}

async function agentFor(turns: number, options: Omit<AgentOptions, 'model'> = {}, usage?: Record<string, number>) {
  server = await startServer(script(turns, usage));
  return new Agent({
    ...options,
    tools: [addTool],
    model: { provider: 'local', id: 'some-model', api: 'openai-chat', baseUrl: server.baseUrl },
  });
}

const answers = (events: RunEvent[]) => events.flatMap((e) => (e.type === 'assistant_message' ? [e.message] : []));

describe('usage a server does not report', () => {
  it('is estimated for each answer, marked as such, and summed into the totals', async () => {
    const agent = await agentFor(2);
    const { events, result } = await collect(agent.run('add twice'));
    expect(result.reason).toBe('final_answer');
    const messages = answers(events);
    expect(messages).toHaveLength(3);
    for (const message of messages) {
      expect(message.usage.estimated).toBe(true);
      expect(message.usage.input).toBeGreaterThan(0);
      expect(message.usage.output).toBeGreaterThan(0);
      expect(message.usage.total).toBe(message.usage.input + message.usage.output);
    }
    // Each request carries the one before it, so the estimated input grows turn by turn.
    expect(messages[1]!.usage.input).toBeGreaterThan(messages[0]!.usage.input);
    expect(result.totals.usage.estimated).toBe(true);
    expect(result.totals.usage.total).toBe(messages.reduce((sum, m) => sum + m.usage.total, 0));
  });

  it('still stops the run at its token budget', async () => {
    const agent = await agentFor(50, { limits: { maxTokens: 200, maxSteps: 60 } });
    const result = await agent.run('add many times');
    expect(result).toMatchObject({ status: 'stopped', reason: 'budget' });
    expect(result.totals.usage.total).toBeGreaterThanOrEqual(200);
    expect(result.totals.steps).toBeLessThan(50);
  });

  it('is left alone when the server reports it', async () => {
    const agent = await agentFor(1, {}, { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    const { events, result } = await collect(agent.run('add once'));
    for (const message of answers(events)) {
      expect(message.usage).toMatchObject({ input: 12, output: 5, total: 17 });
      expect(message.usage.estimated).toBeUndefined();
    }
    expect(result.totals.usage.estimated).toBeUndefined();
  });

  it('is estimated with the context engine off (context: false) as well, and still stops the run at its budget', async () => {
    const agent = await agentFor(2, { context: false, system: 'You add numbers.' });
    const { events, result } = await collect(agent.run('add twice'));
    expect(result.reason).toBe('final_answer');
    const messages = answers(events);
    for (const message of messages)
      expect(message.usage).toMatchObject({ estimated: true, input: expect.any(Number), output: expect.any(Number) });
    expect(messages[0]!.usage.input).toBeGreaterThan(0);
    expect(messages[1]!.usage.input).toBeGreaterThan(messages[0]!.usage.input);
    expect(result.totals.usage.estimated).toBe(true);
    await server?.close();
    const capped = await agentFor(50, { context: false, limits: { maxTokens: 200, maxSteps: 60 } });
    const stopped = await capped.run('add many times');
    expect(stopped).toMatchObject({ status: 'stopped', reason: 'budget' });
    expect(stopped.totals.steps).toBeLessThan(50);
  });
});
