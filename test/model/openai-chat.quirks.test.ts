/**
 * Server quirks and failure modes of the Chat Completions adapter that the recordings do
 * not show (or show only once), on a real local HTTP server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import type { AssistantStreamEvent } from '../../src/model/types.js';
import { byteChunks, closedPortUrl, fixtureResponse, readFixture, sseBody, startServer } from './fixture-server.js';
import type { ScriptedResponse, TestServer } from './fixture-server.js';
import { collect, expectWellFormed, lastError, testModel, textOf, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SSE = { 'content-type': 'text/event-stream' };

function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'chatcmpl-quirk', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extra };
}

function tool(
  index: number | undefined,
  id: string | undefined,
  name: string | undefined,
  args: string | undefined,
): Record<string, unknown> {
  const fn: Record<string, unknown> = {};
  if (name !== undefined) fn.name = name;
  if (args !== undefined) fn.arguments = args;
  const call: Record<string, unknown> = { type: 'function', function: fn };
  if (index !== undefined) call.index = index;
  if (id !== undefined) call.id = id;
  return call;
}

async function run(
  responses: ScriptedResponse[],
  options: { signal?: AbortSignal; stream?: boolean; toolCallIds?: ReadonlySet<string> } = {},
) {
  server = await startServer(responses);
  const result = await collect(streamOpenAIChat(testModel(server.baseUrl), { messages: [{ role: 'user', content: 'hi' }] }, options));
  expectWellFormed(result.events, result.message);
  return result;
}

describe('openai-chat quirks', () => {
  it('ignores an empty choices array (Azure first chunk) and content null', async () => {
    const body = sseBody([
      { id: 'x', choices: [], prompt_filter_results: [{ prompt_index: 0 }] },
      chunk({ role: 'assistant', content: null }),
      chunk({ content: 'Hello' }),
      chunk({}, 'stop'),
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(textOf(message)).toBe('Hello');
    expect(message.content).toHaveLength(1);
  });

  it('generates unique ids when they are missing, numeric ("0") or repeated, and accepts indices from 1', async () => {
    const body = sseBody([
      chunk({ tool_calls: [tool(1, '0', 'a', '{"n":1}')] }),
      chunk({ tool_calls: [tool(2, undefined, 'b', '{"n":2}')] }),
      chunk({ tool_calls: [tool(3, 'call_same', 'c', '{"n":3}')] }),
      chunk({ tool_calls: [tool(4, 'call_same', 'd', '{"n":4}')] }),
      chunk({}, 'tool_calls'),
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    const calls = toolCallsOf(message);
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([
      ['a', { n: 1 }],
      ['b', { n: 2 }],
      ['c', { n: 3 }],
      ['d', { n: 4 }],
    ]);
    const ids = calls.map((c) => c.id);
    expect(new Set(ids).size).toBe(4);
    expect(ids[2]).toBe('call_same');
    for (const id of ids) expect(id).toMatch(/^call_\w+$/);
    expect(ids[0]).not.toBe('0');
  });

  it('renames a tool call id the run already holds (a server that sends call_0 every turn), in the start event too', async () => {
    const body = sseBody([chunk({ tool_calls: [tool(0, 'call_0', 'a', '{"n":1}')] }), chunk({}, 'tool_calls')]);
    const { message, events } = await run([{ headers: SSE, body }], { toolCallIds: new Set(['call_0']) });
    const [call] = toolCallsOf(message);
    expect(call).toMatchObject({ name: 'a', arguments: { n: 1 } });
    expect(call!.id).not.toBe('call_0');
    expect(events.find((e) => e.type === 'tool_call_start')).toMatchObject({ id: call!.id });
  });

  it('tool calls without an index: a name starts a call, fragments continue the last one', async () => {
    const body = sseBody([
      chunk({ tool_calls: [tool(undefined, 'call_1', 'first', '{"a":')] }),
      chunk({ tool_calls: [tool(undefined, undefined, undefined, '1}')] }),
      chunk({ tool_calls: [tool(undefined, 'call_2', 'second', '{}')] }),
      chunk({}, 'tool_calls'),
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_1', 'first', { a: 1 }],
      ['call_2', 'second', {}],
    ]);
  });

  it('assembles interleaved parallel argument deltas by index', async () => {
    const body = sseBody([
      chunk({ tool_calls: [tool(0, 'call_a', 'read', '{"path":')] }),
      chunk({ tool_calls: [tool(1, 'call_b', 'read', '{"path":')] }),
      chunk({ tool_calls: [tool(0, undefined, undefined, '"a.txt"}')] }),
      chunk({ tool_calls: [tool(1, undefined, undefined, '"b.txt"}')] }),
      chunk({}, 'tool_calls'),
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(toolCallsOf(message).map((c) => c.arguments)).toEqual([{ path: 'a.txt' }, { path: 'b.txt' }]);
  });

  it('ends the text block when a tool call starts, keeping the order of first appearance', async () => {
    const body = sseBody([
      chunk({ content: 'Let me look.' }),
      chunk({ tool_calls: [tool(0, 'call_x', 'ls', '{}')] }),
      chunk({}, 'tool_calls'),
    ]);
    const { message, events } = await run([{ headers: SSE, body }]);
    expect(message.content.map((b) => b.type)).toEqual(['text', 'tool_call']);
    const types = events.map((e) => e.type);
    expect(types).toEqual(['start', 'text_start', 'text_delta', 'text_end', 'tool_call_start', 'tool_call_delta', 'tool_call_end', 'done']);
  });

  it('keeps raw arguments that are not a JSON object and sets arguments to {}', async () => {
    const body = sseBody([
      chunk({ tool_calls: [tool(0, 'call_1', 'a', '[1, 2]')] }),
      chunk({ tool_calls: [tool(1, 'call_2', 'b', '{"unterminated": "x')] }),
      chunk({ tool_calls: [tool(2, 'call_3', 'c', '')] }),
      chunk({}, 'tool_calls'),
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(toolCallsOf(message).map((c) => [c.rawArguments, c.arguments])).toEqual([
      ['[1, 2]', {}],
      ['{"unterminated": "x', {}],
      ['', {}],
    ]);
  });

  it('infers the stop reason when no finish_reason came before [DONE]', async () => {
    const text = await run([{ headers: SSE, body: sseBody([chunk({ content: 'ok' })]) }]);
    expect(text.message.stopReason).toBe('stop');
    await server?.close();
    const tools = await run([{ headers: SSE, body: sseBody([chunk({ tool_calls: [tool(0, 'call_1', 'a', '{}')] })]) }]);
    expect(tools.message.stopReason).toBe('tool_use');
  });

  it('maps content_filter, and finish_reason "error" to an error event', async () => {
    const filtered = await run([{ headers: SSE, body: sseBody([chunk({ content: 'partial' }), chunk({}, 'content_filter')]) }]);
    expect(filtered.message.stopReason).toBe('content_filter');
    await server?.close();
    const failed = await run([{ headers: SSE, body: sseBody([chunk({ content: 'partial' }), chunk({}, 'error')]) }]);
    expect(lastError(failed.events)).toMatchObject({ code: 'server_error', kind: 'transient' });
  });

  it('a body that ends with neither [DONE] nor a finish_reason is a transient stream_cut', async () => {
    const { message, events } = await run([{ headers: SSE, body: sseBody([chunk({ content: 'Hal' }), chunk({ content: 'f' })], false) }]);
    expect(lastError(events)).toMatchObject({ code: 'stream_cut', kind: 'transient' });
    expect(message.stopReason).toBe('error');
    expect(textOf(message)).toBe('Half');
  });

  it('a connection cut mid-stream is a transient stream_cut carrying the partial text', async () => {
    const { message, events } = await run([{ headers: SSE, body: [sseBody([chunk({ content: 'before the cut' })], false)], cut: true }]);
    const error = lastError(events);
    expect([error.code, error.kind]).toEqual(['stream_cut', 'transient']);
    expect(error.message).toContain(server?.baseUrl);
    expect(textOf(message)).toBe('before the cut');
  });

  it('decodes a last event that lacks its blank line', async () => {
    const body = sseBody([chunk({ content: 'x' })], false) + `data: ${JSON.stringify(chunk({}, 'stop'))}`;
    const { message } = await run([{ headers: SSE, body }]);
    expect(message.stopReason).toBe('stop');
  });

  it('a frame that is not JSON ends the stream with invalid_response', async () => {
    const { events } = await run([{ headers: SSE, body: `${sseBody([chunk({ content: 'x' })], false)}data: {not json\n\n` }]);
    expect(lastError(events)).toMatchObject({ code: 'invalid_response' });
  });

  it('decodes the same when the body arrives in tiny byte chunks that split UTF-8 characters', async () => {
    const text = 'Grüße, 世界 😀 — done';
    const body = sseBody([...text].map((ch) => chunk({ content: ch })).concat([chunk({}, 'stop')]));
    const { message } = await run([{ headers: SSE, body: byteChunks(body, 5) }]);
    expect(textOf(message)).toBe(text);
    await server?.close();
    const recorded = await run([
      {
        ...fixtureResponse('openai-chat/stream-parallel-tool-calls.sse'),
        body: byteChunks(readFixture('openai-chat/stream-parallel-tool-calls.sse'), 3),
      },
    ]);
    expect(toolCallsOf(recorded.message).map((c) => c.arguments)).toEqual([{ password: 'mellon' }, { password: 'radiance' }]);
  });

  it('an HTML page answered with 200 is a fatal invalid_response pointing at the base URL', async () => {
    const { events } = await run([
      { headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<!doctype html>\n<html><title>Open WebUI</title></html>' },
    ]);
    const error = lastError(events);
    expect([error.code, error.kind]).toEqual(['invalid_response', 'fatal']);
    expect(error.message).toContain('check the base URL');
    expect(error.message).toContain('<title>Open WebUI</title>');
  });

  it('a redirect is not followed: one request, a fatal config error naming where the server points', async () => {
    const { events } = await run([{ status: 308, headers: { location: '/v1/chat/completions/' }, body: '' }]);
    const error = lastError(events);
    expect([error.code, error.kind, error.status]).toEqual(['config', 'fatal', 308]);
    expect(error.message).toContain(`redirected the request to ${server?.baseUrl}/chat/completions/ (HTTP 308)`);
    expect(error.message).toContain('set the base URL');
    expect(server?.requests).toHaveLength(1);
  });

  it('reads a JSON body when the server ignores stream: true', async () => {
    const { message } = await run([fixtureResponse('openai-compatible/ollama-nonstream-text.json')]);
    expect(textOf(message)).toBe('4200 + 42 = 4242\n');
  });

  it('reads prompt_cache_hit_tokens when there are no prompt_tokens_details', async () => {
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 5,
      total_tokens: 105,
      prompt_cache_hit_tokens: 64,
      prompt_cache_miss_tokens: 36,
    };
    const { message } = await run([{ headers: SSE, body: sseBody([chunk({ content: 'x' }, 'stop', { usage })]) }]);
    expect(message.usage).toEqual({ input: 36, output: 5, cacheRead: 64, cacheWrite: 0, reasoning: 0, total: 105 });
  });

  it('reads content sent as an array of thinking and text parts (Mistral reasoning models), streamed and not', async () => {
    const thinkingPart = (text: string) => ({ type: 'thinking', thinking: [{ type: 'text', text }] });
    const body = sseBody([
      chunk({ role: 'assistant', content: [thinkingPart('The user greets')] }),
      chunk({ content: [thinkingPart(', so I greet back.')] }),
      chunk({ content: [{ type: 'text', text: 'Hello' }] }),
      chunk({
        content: [
          { type: 'text', text: ' there' },
          { type: 'reference', reference_ids: [1] },
        ],
      }),
      chunk({}, 'stop'),
    ]);
    const streamed = await run([{ headers: SSE, body }]);
    expect(streamed.message.content).toEqual([
      { type: 'thinking', thinking: 'The user greets, so I greet back.' },
      { type: 'text', text: 'Hello there' },
    ]);
    expect(streamed.events.filter((e) => e.type === 'thinking_delta').map((e) => (e as { delta: string }).delta)).toEqual([
      'The user greets',
      ', so I greet back.',
    ]);
    await server?.close();
    const completion = {
      id: 'x',
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: [thinkingPart('Short.'), { type: 'text', text: 'Hi!' }] },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    };
    const whole = await run([{ headers: { 'content-type': 'application/json' }, body: JSON.stringify(completion) }], { stream: false });
    expect(whole.message.content).toEqual([
      { type: 'thinking', thinking: 'Short.' },
      { type: 'text', text: 'Hi!' },
    ]);
    expect(whole.message.usage.output).toBe(3);
  });

  it('<think>…</think> at the start of content is thinking, the rest text; tags split anywhere over chunks', async () => {
    const body = sseBody([
      chunk({ role: 'assistant', content: '<th' }),
      chunk({ content: 'ink>\nuser wants hi\n</thi' }),
      chunk({ content: 'nk>\n\n' }),
      chunk({ content: 'Hello!' }),
      chunk({}, 'stop'),
    ]);
    const { message, events } = await run([{ headers: SSE, body }]);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: '\nuser wants hi\n' },
      { type: 'text', text: 'Hello!' },
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'start',
      'thinking_start',
      'thinking_delta',
      'thinking_end',
      'text_start',
      'text_delta',
      'text_end',
      'done',
    ]);
    await server?.close();
    // A <think> later in the answer is part of the answer.
    const later = await run([
      { headers: SSE, body: sseBody([chunk({ content: 'Use ' }), chunk({ content: '<think> tags</think>.' }), chunk({}, 'stop')]) },
    ]);
    expect(later.message.content).toEqual([{ type: 'text', text: 'Use <think> tags</think>.' }]);
  });

  it('an unclosed <think> stays thinking and ends cleanly with an empty answer', async () => {
    const { message } = await run([
      {
        headers: SSE,
        body: sseBody([chunk({ content: '<think>I ran out' }), chunk({ content: ' of tokens </thi' }), chunk({}, 'length')]),
      },
    ]);
    expect(message.content).toEqual([{ type: 'thinking', thinking: 'I ran out of tokens </thi' }]);
    expect(message.stopReason).toBe('length');
    await server?.close();
    // Held back "<thi" at the end is text, not lost, even without a finish_reason.
    const cut = await run([{ headers: SSE, body: sseBody([chunk({ content: '<thi' })]) }]);
    expect(cut.message.content).toEqual([{ type: 'text', text: '<thi' }]);
  });

  it('a non-streamed message.content starting with <think> is split the same way', async () => {
    const completion = {
      id: 'x',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: '<think>\nShort.\n</think>\n\nHi!' }, finish_reason: 'stop' }],
    };
    const { message } = await run([{ headers: { 'content-type': 'application/json' }, body: JSON.stringify(completion) }], {
      stream: false,
    });
    expect(message.content).toEqual([
      { type: 'thinking', thinking: '\nShort.\n' },
      { type: 'text', text: 'Hi!' },
    ]);
  });

  it('finish_reason model_length (Mistral) is a length stop; eos_token (TGI) a normal one', async () => {
    const cut = await run([{ headers: SSE, body: sseBody([chunk({ content: 'This answer is cut' }), chunk({}, 'model_length')]) }]);
    expect(cut.message.stopReason).toBe('length');
    await server?.close();
    const eos = await run([{ headers: SSE, body: sseBody([chunk({ content: 'Done.' }), chunk({}, 'eos_token')]) }]);
    expect(eos.message.stopReason).toBe('stop');
  });

  it('finish_reason insufficient_system_resource (DeepSeek) is a transient server_error saying the provider lacked resources', async () => {
    const { events, message } = await run([
      {
        headers: SSE,
        body: sseBody([chunk({ content: 'The first three steps are: 1) open the' }), chunk({}, 'insufficient_system_resource')]),
      },
    ]);
    const error = lastError(events);
    expect([error.code, error.kind]).toEqual(['server_error', 'transient']);
    expect(error.message).toContain('for lack of resources');
    expect(message.stopReason).toBe('error');
  });

  it("a finish_reason naming an error type (a gateway translating Anthropic's in-stream error) ends in that error, not an answer", async () => {
    // Portkey turns Anthropic's `event: error` {type: overloaded_error} into this finish reason.
    const { events, message } = await run([
      {
        headers: SSE,
        body: sseBody([chunk({ content: 'The answer is definitely not finished because' }), chunk({ content: '' }, 'overloaded_error')]),
      },
    ]);
    const error = lastError(events);
    expect([error.code, error.kind]).toEqual(['overloaded', 'transient']);
    expect(error.message).toContain('finish_reason "overloaded_error": the answer is incomplete');
    expect(message.stopReason).toBe('error');
    await server?.close();
    const other = await run([{ headers: SSE, body: sseBody([chunk({ content: 'x' }), chunk({}, 'api_error')]) }]);
    expect([lastError(other.events).code, lastError(other.events).kind]).toEqual(['server_error', 'transient']);
  });

  it('data: [DONE] with trailing blanks ends the stream', async () => {
    const body = `${sseBody([chunk({ content: 'Hi there' }), chunk({}, 'stop')], false)}data: [DONE] \n\n`;
    const { message } = await run([{ headers: SSE, body }]);
    expect([message.stopReason, textOf(message)]).toEqual(['stop', 'Hi there']);
    await server?.close();
    // Even without a finish_reason: the [DONE] is what ends it, not a bad frame.
    const bare = await run([{ headers: SSE, body: `${sseBody([chunk({ content: 'x' })], false)}data: [DONE]\t \n\n` }]);
    expect(bare.message.stopReason).toBe('stop');
  });

  it('an empty reasoning_content beside the text in reasoning keeps the text', async () => {
    const body = sseBody([
      chunk({ role: 'assistant', content: '', reasoning_content: '', reasoning: 'Let me think.' }),
      chunk({ content: '', reasoning_content: null, reasoning: ' Done thinking.' }),
      chunk({ content: 'The answer.' }),
      chunk({}, 'stop'),
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think. Done thinking.' },
      { type: 'text', text: 'The answer.' },
    ]);
  });

  it('choices of other completions (index ≠ 0, n > 1) are ignored', async () => {
    const choice = (index: number, delta: Record<string, unknown>, finish: string | null = null) => ({
      index,
      delta,
      finish_reason: finish,
    });
    const body = sseBody([
      { id: 'c', choices: [choice(1, { role: 'assistant', content: 'B1' }), choice(0, { role: 'assistant', content: 'A1' })] },
      { id: 'c', choices: [choice(1, { content: ' B2' })] },
      { id: 'c', choices: [choice(0, { content: ' A2' }, 'stop')] },
      { id: 'c', choices: [choice(1, {}, 'length')] },
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect([textOf(message), message.stopReason]).toEqual(['A1 A2', 'stop']);
    await server?.close();
    // A server whose one choice is numbered 1 from the start is still read.
    const fromOne = await run([
      { headers: SSE, body: sseBody([{ choices: [choice(1, { content: 'one' })] }, { choices: [choice(1, {}, 'stop')] }]) },
    ]);
    expect(textOf(fromOne.message)).toBe('one');
  });

  it('aborting mid-stream ends with stopReason aborted and the text so far', async () => {
    const controller = new AbortController();
    server = await startServer([{ headers: SSE, body: [sseBody([chunk({ content: 'streaming…' })], false)], hold: true }]);
    const stream = streamOpenAIChat(
      testModel(server.baseUrl),
      { messages: [{ role: 'user', content: 'hi' }] },
      { signal: controller.signal },
    );
    const events: AssistantStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'text_delta') controller.abort();
    }
    const message = await stream.result();
    expectWellFormed(events, message);
    expect(message.stopReason).toBe('aborted');
    expect(message.error?.code).toBe('aborted');
    expect(textOf(message)).toBe('streaming…');
  });

  it('an already aborted signal sends no request', async () => {
    server = await startServer([]);
    const { message } = await collect(streamOpenAIChat(testModel(server.baseUrl), { messages: [] }, { signal: AbortSignal.abort() }));
    expect(message.stopReason).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });

  it('an unreachable server is a transient network error naming the URL', async () => {
    const baseUrl = await closedPortUrl();
    const { events, message } = await collect(streamOpenAIChat(testModel(baseUrl), { messages: [] }));
    expectWellFormed(events, message);
    const error = lastError(events);
    expect([error.code, error.kind]).toEqual(['network', 'transient']);
    expect(error.message).toContain(`${baseUrl}/chat/completions`);
    expect(error.message).toContain('connection refused');
  });
});
