// Tool call ids are unique within the run even when a server reuses them (`call_0` every
// turn, as gateways and mocks do): events keyed by id must not merge two calls, and the
// Anthropic wire refuses a history whose `tool_use` ids repeat.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import type { AgentOptions } from '../../src/loop/options.js';
import { startScriptedServer, text, toolCall, toolCalls, type Script, type ScriptedServer } from '../../src/testing/index.js';
import type { Message, ModelApi } from '../../src/model/types.js';
import type { RunEvent } from '../../src/events.js';
import { addTool, collect } from './helpers.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(api: ModelApi, script: Script, options: Omit<AgentOptions, 'model'> = {}) {
  const server = await startScriptedServer({ script });
  servers.push(server);
  const agent = new Agent({ retry: { baseDelayMs: 5, jitter: false }, tools: [addTool], ...options, model: server.model('m', api) });
  return { server, agent };
}

function started(events: RunEvent[]): Array<{ toolCallId: string; idempotencyKey: string }> {
  return events.flatMap((e) => (e.type === 'tool_started' ? [{ toolCallId: e.toolCallId, idempotencyKey: e.idempotencyKey }] : []));
}

describe.each<ModelApi>(['openai-chat', 'anthropic-messages', 'openai-responses', 'gemini'])('tool call ids over the %s wire', (api) => {
  it('a server reusing call_0 on two turns: two distinct ids and keys, results tied to each, the run finishes', async () => {
    const script = [toolCall('add', { a: 1, b: 2 }, 'call_0'), toolCall('add', { a: 3, b: 4 }, 'call_0'), text('3 and 7.')];
    const { server, agent } = await setup(api, script);
    const { events, result } = await collect(agent.run('add twice'));
    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ reason: 'final_answer', text: '3 and 7.' });
    const calls = started(events);
    expect(calls).toHaveLength(2);
    // Gemini's wire carries no call id: its ids are made from the response id, unique anyway.
    if (api !== 'gemini') expect(calls[0]!.toolCallId).toBe('call_0');
    expect(new Set(calls.map((c) => c.toolCallId)).size).toBe(2);
    expect(new Set(calls.map((c) => c.idempotencyKey)).size).toBe(2);
    const finished = events.flatMap((e) => (e.type === 'tool_finished' ? [e.toolCallId] : []));
    expect(finished).toEqual(calls.map((c) => c.toolCallId));
    // The streamed start of each call names the id the run uses.
    const streamed = events.flatMap((e) => (e.type === 'tool_call_delta' && e.id !== undefined ? [e.id] : []));
    expect(streamed).toEqual(calls.map((c) => c.toolCallId));
    // Each result goes back tied to its own call, and the server accepted every request.
    const results = result.messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
    expect(results).toEqual(calls.map((c) => c.toolCallId));
    expect(server.received.every((r) => r.rejected === undefined)).toBe(true);
  });

  it('two calls with the same id in one response get distinct ids and keys', async () => {
    const script = [
      toolCalls({ name: 'add', arguments: { a: 1, b: 2 }, id: 'same' }, { name: 'add', arguments: { a: 3, b: 4 }, id: 'same' }),
      text('done'),
    ];
    const { server, agent } = await setup(api, script);
    const { events, result } = await collect(agent.run('add both'));
    expect(result.error).toBeUndefined();
    expect(result.reason).toBe('final_answer');
    const calls = started(events);
    expect(new Set(calls.map((c) => c.toolCallId)).size).toBe(2);
    expect(new Set(calls.map((c) => c.idempotencyKey)).size).toBe(2);
    expect(server.received.every((r) => r.rejected === undefined)).toBe(true);
  });

  it('a call repeating an id of the history the run starts from is renamed', async () => {
    const history: Message[] = [
      { role: 'user', content: 'add 1 and 2' },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'call_0', name: 'add', arguments: { a: 1, b: 2 }, rawArguments: '{"a":1,"b":2}' }],
        stopReason: 'tool_use',
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 },
        provider: 'scripted',
        model: 'm',
        api,
      },
      { role: 'tool', toolCallId: 'call_0', toolName: 'add', content: [{ type: 'text', text: '3' }], isError: false },
    ];
    const { server, agent } = await setup(api, [toolCall('add', { a: 3, b: 4 }, 'call_0'), text('7.')]);
    const { events, result } = await collect(agent.run('now 3 and 4', { history }));
    expect(result.error).toBeUndefined();
    const [call] = started(events);
    expect(call!.toolCallId).not.toBe('call_0');
    expect(server.received.every((r) => r.rejected === undefined)).toBe(true);
  });
});
