/**
 * Failure modes and wire shapes of the Anthropic adapter that the recordings do not show:
 * retries, aborts, cut streams, mid-stream errors, redacted thinking, cache writes, every
 * stop reason, unknown block / event / delta types. Streams built here are synthetic (the
 * documented event shapes), on a real local HTTP server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamAnthropic } from '../../src/model/providers/anthropic.js';
import { buildAnthropicRequest } from '../../src/model/providers/anthropic-request.js';
import { streamWithRetry } from '../../src/model/retry.js';
import type { RetryPolicy } from '../../src/model/retry.js';
import type { AssistantStreamEvent, ModelRef } from '../../src/model/types.js';
import { byteChunks, closedPortUrl, fixtureResponse, readFixture, startServer } from './fixture-server.js';
import type { ScriptedResponse, TestServer } from './fixture-server.js';
import { collect, expectWellFormed, lastError, testModel, textOf, thinkingOf, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SSE = { 'content-type': 'text/event-stream' };
const JSON_TYPE = { 'content-type': 'application/json' };
const CLAUDE: Partial<ModelRef> = { provider: 'anthropic', id: 'claude-sonnet-4-5', api: 'anthropic-messages', apiKey: 'sk-ant-test' };
const instant: Partial<RetryPolicy> = { sleep: () => Promise.resolve() };

/** Frames as Anthropic sends them: `event: <type>` then `data: <json>`. */
function frames(events: Array<Record<string, unknown>>): string {
  return events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

const start = (usage: Record<string, unknown> = { input_tokens: 10, output_tokens: 1 }) => ({
  type: 'message_start',
  message: { id: 'msg_synthetic', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5', stop_reason: null, usage },
});
const blockStart = (index: number, block: Record<string, unknown>) => ({ type: 'content_block_start', index, content_block: block });
const delta = (index: number, d: Record<string, unknown>) => ({ type: 'content_block_delta', index, delta: d });
const blockStop = (index: number) => ({ type: 'content_block_stop', index });
const messageDelta = (stopReason: string, usage: Record<string, unknown> = { output_tokens: 5 }) => ({
  type: 'message_delta',
  delta: { stop_reason: stopReason, stop_sequence: null },
  usage,
});
const STOP = { type: 'message_stop' };
const textBlock = (index: number, text: string) => [
  blockStart(index, { type: 'text', text: '' }),
  delta(index, { type: 'text_delta', text }),
  blockStop(index),
];

async function run(
  responses: ScriptedResponse[],
  options: { signal?: AbortSignal; stream?: boolean; toolCallIds?: ReadonlySet<string> } = {},
) {
  server = await startServer(responses);
  const result = await collect(
    streamAnthropic(testModel(server.baseUrl, CLAUDE), { messages: [{ role: 'user', content: 'hi' }] }, options),
  );
  expectWellFormed(result.events, result.message);
  return result;
}

describe('anthropic quirks', () => {
  it('redacted_thinking keeps its opaque data as the signature and goes back unchanged', async () => {
    const body = frames([
      start(),
      blockStart(0, { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' }),
      blockStop(0),
      ...textBlock(1, 'Done.'),
      messageDelta('end_turn'),
      STOP,
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: '', signature: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP', redacted: true },
      { type: 'text', text: 'Done.' },
    ]);
    const request = buildAnthropicRequest(testModel('http://127.0.0.1:1', CLAUDE), {
      messages: [{ role: 'user', content: 'hi' }, message, { role: 'user', content: 'more' }],
    });
    expect(request.messages[1]?.content[0]).toEqual({
      type: 'redacted_thinking',
      data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP',
    });
  });

  it('cache writes: cache_creation_input_tokens become cacheWrite, counted in total', async () => {
    const usage = { input_tokens: 12, cache_creation_input_tokens: 2048, cache_read_input_tokens: 0, output_tokens: 1 };
    const body = frames([start(usage), ...textBlock(0, 'ok'), messageDelta('end_turn', { output_tokens: 9 }), STOP]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(message.usage).toEqual({ input: 12, output: 9, cacheRead: 0, cacheWrite: 2048, reasoning: 0, total: 2069 });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['refusal', 'refusal'],
    ['tool_use', 'tool_use'],
    ['a_reason_from_the_future', 'stop'],
  ])('stop_reason %s → %s', async (reason, expected) => {
    const { message } = await run([{ headers: SSE, body: frames([start(), ...textBlock(0, 'x'), messageDelta(reason), STOP]) }]);
    expect(message.stopReason).toBe(expected);
  });

  it('unknown block, delta and event types are skipped without breaking the stream', async () => {
    const body = frames([
      start(),
      { type: 'a_new_event', payload: 1 },
      blockStart(0, { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'search', server_name: 's', input: {} }),
      delta(0, { type: 'input_json_delta', partial_json: '{"q":1}' }),
      blockStop(0),
      blockStart(1, { type: 'a_new_block', data: 'x' }),
      delta(1, { type: 'a_new_delta', value: 'y' }),
      blockStop(1),
      blockStart(2, { type: 'text', text: '' }),
      delta(2, { type: 'text_delta', text: 'visible' }),
      delta(2, { type: 'a_new_delta', value: 'ignored' }),
      delta(2, { type: 'citations_delta', citation: { type: 'char_location', cited_text: 'c' } }),
      blockStop(2),
      messageDelta('end_turn'),
      STOP,
    ]);
    const { message, events } = await run([{ headers: SSE, body }]);
    expect(message.content).toEqual([{ type: 'text', text: 'visible' }]);
    expect(events.map((e) => e.type)).toEqual(['start', 'text_start', 'text_delta', 'text_end', 'done']);
  });

  it('renames a tool_use id repeated within the response or from earlier in the run, in the start event too', async () => {
    const useBlock = (index: number, id: string, n: number) => [
      blockStart(index, { type: 'tool_use', id, name: 'add', input: {} }),
      delta(index, { type: 'input_json_delta', partial_json: `{"n":${n}}` }),
      blockStop(index),
    ];
    const body = frames([
      start(),
      ...useBlock(0, 'same', 1),
      ...useBlock(1, 'same', 2),
      ...useBlock(2, 'toolu_earlier', 3),
      messageDelta('tool_use'),
      STOP,
    ]);
    const { message, events } = await run([{ headers: SSE, body }], { toolCallIds: new Set(['toolu_earlier']) });
    const ids = toolCallsOf(message).map((c) => c.id);
    expect(ids[0]).toBe('same');
    expect(new Set([...ids, 'toolu_earlier']).size).toBe(4);
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(toolCallsOf(message).map((c) => c.arguments)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(events.flatMap((e) => (e.type === 'tool_call_start' ? [e.id] : []))).toEqual(ids);
  });

  it('decodes payload-only frames (no `event:` lines) the same way', async () => {
    const recorded = readFixture('anthropic/stream-tool-use.sse');
    const payloadOnly = recorded
      .split('\n')
      .filter((line) => !line.startsWith('event:'))
      .join('\n');
    const { message } = await run([{ headers: SSE, body: payloadOnly }]);
    expect(toolCallsOf(message).map((c) => [c.id, c.arguments])).toEqual([['toolu_01Lfr3kUnHMZApePPRWMv1uS', { city: 'San Francisco' }]]);
    expect(message.stopReason).toBe('tool_use');
  });

  it('decodes the same when the body arrives in tiny byte chunks that split UTF-8 characters', async () => {
    const file = 'anthropic/stream-thinking-tool-use-turn2.sse';
    const { message } = await run([{ ...fixtureResponse(file), body: byteChunks(readFixture(file), 3) }]);
    expect(textOf(message)).toContain('stable! 😄');
  });

  it('a body cut before any stop_reason is a transient stream_cut with the partial text and arguments', async () => {
    const body = frames([
      start(),
      ...textBlock(0, 'Reading'),
      blockStart(1, { type: 'tool_use', id: 'toolu_cut', name: 'read', input: {} }),
      delta(1, { type: 'input_json_delta', partial_json: '{"path": "a.t' }),
    ]);
    const { message, events } = await run([{ headers: SSE, body: [body], cut: true }]);
    const error = lastError(events);
    expect([error.code, error.kind]).toEqual(['stream_cut', 'transient']);
    expect(error.message).toContain('/v1/messages');
    expect(textOf(message)).toBe('Reading');
    expect(toolCallsOf(message)[0]).toMatchObject({ id: 'toolu_cut', rawArguments: '{"path": "a.t', arguments: {} });
    expect(message.stopReason).toBe('error');
  });

  it('a body that ends cleanly without message_stop: done if the stop_reason came, else stream_cut', async () => {
    const complete = await run([{ headers: SSE, body: frames([start(), ...textBlock(0, 'all'), messageDelta('end_turn')]) }]);
    expect(complete.message.stopReason).toBe('stop');
    await server?.close();
    const partial = await run([{ headers: SSE, body: frames([start(), ...textBlock(0, 'half')]) }]);
    expect(lastError(partial.events)).toMatchObject({ code: 'stream_cut', kind: 'transient' });
  });

  it('a frame that is not JSON ends the stream with invalid_response', async () => {
    const { events } = await run([{ headers: SSE, body: `${frames([start()])}event: content_block_start\ndata: {not json\n\n` }]);
    expect(lastError(events)).toMatchObject({ code: 'invalid_response', kind: 'transient' });
  });

  it('mid-stream errors are classified by error.type: invalid_request fatal, api_error transient, unknown transient', async () => {
    const stream = (type: string, message: string) => ({
      headers: SSE,
      body: `${frames([start(), ...textBlock(0, 'x')])}event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`,
    });
    const bad = await run([stream('invalid_request_error', 'messages.1: bad block')]);
    expect(lastError(bad.events)).toMatchObject({ code: 'bad_request', kind: 'fatal', status: undefined });
    await server?.close();
    const api = await run([stream('api_error', 'Internal server error')]);
    expect(lastError(api.events)).toMatchObject({ code: 'server_error', kind: 'transient' });
    await server?.close();
    const other = await run([stream('some_new_error', 'who knows')]);
    expect(lastError(other.events)).toMatchObject({ code: 'server_error', kind: 'transient' });
  });

  it('HTTP errors Anthropic words its own way', async () => {
    const respond = (status: number, type: string, message: string): ScriptedResponse => ({
      status,
      headers: JSON_TYPE,
      body: JSON.stringify({ type: 'error', error: { type, message } }),
    });
    const limit = await run([
      respond(
        400,
        'invalid_request_error',
        'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again',
      ),
    ]);
    expect(lastError(limit.events)).toMatchObject({ code: 'context_length', kind: 'fatal', status: 400 });
    await server?.close();
    const credit = await run([
      respond(
        400,
        'invalid_request_error',
        'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
      ),
    ]);
    expect(lastError(credit.events)).toMatchObject({ code: 'rate_limited', kind: 'fatal' });
    await server?.close();
    const forbidden = await run([respond(403, 'permission_error', 'Your API key does not have permission to use the specified resource.')]);
    expect(lastError(forbidden.events)).toMatchObject({ code: 'auth', kind: 'fatal', status: 403 });
    await server?.close();
    const path = await run([respond(404, 'not_found_error', 'Not Found')]);
    const notFound = lastError(path.events);
    expect(notFound).toMatchObject({ code: 'not_found', kind: 'fatal' });
    expect(notFound.message).toContain('<base>/v1/messages');
  });

  it('aborting mid-stream ends with stopReason aborted and the text so far', async () => {
    const controller = new AbortController();
    server = await startServer([
      {
        headers: SSE,
        body: [frames([start(), blockStart(0, { type: 'text', text: '' }), delta(0, { type: 'text_delta', text: 'streaming…' })])],
        hold: true,
      },
    ]);
    const stream = streamAnthropic(
      testModel(server.baseUrl, CLAUDE),
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
    const { message } = await collect(
      streamAnthropic(testModel(server.baseUrl, CLAUDE), { messages: [] }, { signal: AbortSignal.abort() }),
    );
    expect(message.stopReason).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });

  it('an unreachable server is a transient network error naming the URL', async () => {
    const baseUrl = await closedPortUrl();
    const { events, message } = await collect(streamAnthropic(testModel(baseUrl, CLAUDE), { messages: [] }));
    expectWellFormed(events, message);
    expect(lastError(events)).toMatchObject({ code: 'network', kind: 'transient' });
    expect(lastError(events).message).toContain(`${baseUrl}/messages`);
  });

  it('an HTML page answered with 200 is a fatal invalid_response', async () => {
    const { events } = await run([{ headers: { 'content-type': 'text/html' }, body: '<html><title>Login</title></html>' }]);
    expect(lastError(events)).toMatchObject({ code: 'invalid_response', kind: 'fatal' });
  });

  it('reads a JSON body when the server ignores stream: true', async () => {
    const { message } = await run([fixtureResponse('anthropic/nonstream-thinking-tool-use.json')]);
    expect(thinkingOf(message)).toMatch(/^The user is asking/);
    expect(message.stopReason).toBe('tool_use');
  });
});

describe('anthropic through streamWithRetry', () => {
  const model = () => testModel(server?.baseUrl ?? '', CLAUDE);
  const overloaded: ScriptedResponse = {
    status: 529,
    headers: { ...JSON_TYPE, 'retry-after': '2', 'x-should-retry': 'true' },
    body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
  };

  it('retries a 529 after its retry-after, then succeeds', async () => {
    server = await startServer([overloaded, overloaded, fixtureResponse('anthropic/stream-text.sse')]);
    const { events, message } = await collect(
      streamWithRetry(
        streamAnthropic,
        model(),
        { messages: [{ role: 'user', content: 'hi' }] },
        {},
        { ...instant, maxRetries: 2, baseDelayMs: 10, jitter: false },
      ),
    );
    const retries = events.filter((e): e is Extract<AssistantStreamEvent, { type: 'retry' }> => e.type === 'retry');
    expect(retries.map((r) => [r.attempt, r.delayMs, r.error.code, r.error.status])).toEqual([
      [1, 2000, 'overloaded', 529],
      [2, 2000, 'overloaded', 529],
    ]);
    expect(message.stopReason).toBe('stop');
    expect(textOf(message)).toBe('- Captain\n- Scoop');
    expect(server?.requests).toHaveLength(3);
  });

  it('retries an overloaded `event: error` mid-stream; the voided attempt’s text is not in the result', async () => {
    const failing = `${frames([start(), ...textBlock(0, 'PARTIAL')])}event: error\ndata: ${JSON.stringify({ type: 'error', error: { details: null, type: 'overloaded_error', message: 'Overloaded' }, request_id: 'req_1' })}\n\n`;
    server = await startServer([{ headers: SSE, body: failing }, fixtureResponse('anthropic/stream-text.sse')]);
    const { events, message } = await collect(
      streamWithRetry(streamAnthropic, model(), { messages: [{ role: 'user', content: 'hi' }] }, {}, { ...instant, maxRetries: 1 }),
    );
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(1);
    expect(textOf(message)).toBe('- Captain\n- Scoop');
    expect(JSON.stringify(message)).not.toContain('PARTIAL');
  });

  it('does not retry a mid-stream invalid_request_error', async () => {
    const failing = `${frames([start()])}event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'bad' } })}\n\n`;
    server = await startServer([{ headers: SSE, body: failing }, fixtureResponse('anthropic/stream-text.sse')]);
    const { events, message } = await collect(
      streamWithRetry(streamAnthropic, model(), { messages: [{ role: 'user', content: 'hi' }] }, {}, instant),
    );
    expect(events.some((e) => e.type === 'retry')).toBe(false);
    expect(message.error?.code).toBe('bad_request');
    expect(server?.requests).toHaveLength(1);
  });
});
