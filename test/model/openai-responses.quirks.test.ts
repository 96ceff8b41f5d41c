/**
 * Server quirks and failure modes of the Responses adapter that the recordings do not show
 * (or show only once), on a real local HTTP server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamOpenAIResponses } from '../../src/model/providers/openai-responses.js';
import type { AssistantStreamEvent, ModelRef, StreamOptions } from '../../src/model/types.js';
import { byteChunks, closedPortUrl, fixtureResponse, readFixture, startServer } from './fixture-server.js';
import type { ScriptedResponse, TestServer } from './fixture-server.js';
import { collect, expectWellFormed, lastError, testModel, textOf, thinkingOf, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Json = Record<string, unknown>;
const SSE = { 'content-type': 'text/event-stream' };

function model(baseUrl: string, overrides: Partial<ModelRef> = {}): ModelRef {
  return testModel(baseUrl, { provider: 'openai-responses', api: 'openai-responses', id: 'gpt-5', ...overrides });
}

/** Events framed as the Responses API sends them. */
function sse(events: Json[]): string {
  return events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

const created = { type: 'response.created', response: { id: 'resp_q', status: 'in_progress', output: [] } };
const message = (i: number, id = `msg_${i}`): Json => ({
  type: 'response.output_item.added',
  output_index: i,
  item: { id, type: 'message', role: 'assistant', content: [] },
});
const text = (i: number, delta: string): Json => ({
  type: 'response.output_text.delta',
  output_index: i,
  content_index: 0,
  item_id: `msg_${i}`,
  delta,
});
const completed = (extra: Json = {}): Json => ({
  type: 'response.completed',
  response: { id: 'resp_q', status: 'completed', usage: null, ...extra },
});

async function run(responses: ScriptedResponse[], options: StreamOptions = {}) {
  server = await startServer(responses);
  const result = await collect(streamOpenAIResponses(model(server.baseUrl), { messages: [{ role: 'user', content: 'hi' }] }, options));
  expectWellFormed(result.events, result.message);
  return result;
}

describe('openai-responses quirks', () => {
  it('ignores unknown events and output items that are not ours (web search calls)', async () => {
    const body = sse([
      created,
      { type: 'response.output_item.added', output_index: 0, item: { id: 'ws_1', type: 'web_search_call', status: 'in_progress' } },
      { type: 'response.web_search_call.searching', output_index: 0, item_id: 'ws_1' },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'ws_1', type: 'web_search_call', status: 'completed' } },
      { type: 'response.some_future_event', anything: true },
      message(1),
      text(1, 'Found it.'),
      { type: 'response.output_text.annotation.added', output_index: 1, item_id: 'msg_1', annotation: { type: 'url_citation' } },
      completed(),
    ]);
    const { message: result } = await run([{ headers: SSE, body }]);
    expect(result.content).toEqual([{ type: 'text', text: 'Found it.', signature: '{"id":"msg_1"}' }]);
    expect(result.stopReason).toBe('stop');
  });

  it('decodes deltas whose item was never announced, and events without an SSE event line', async () => {
    const body = [text(0, 'no '), text(0, 'header'), completed()].map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
    const { message: result } = await run([{ headers: SSE, body }]);
    expect(textOf(result)).toBe('no header');
  });

  it('decodes the output of response.completed when no item events came', async () => {
    const output = [
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Think.' }], encrypted_content: 'gAAA' },
      { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] },
    ];
    const { message: result, events } = await run([{ headers: SSE, body: sse([created, completed({ output })]) }]);
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
    expect(thinkingOf(result)).toBe('Think.');
    expect(result.content[0]).toMatchObject({ signature: JSON.stringify(output[0]) });
    expect(result.content[0]).not.toHaveProperty('redacted');
    expect(textOf(result)).toBe('Done.');
  });

  it('separates reasoning summary parts by a blank line', async () => {
    const reasoning = (type: string, extra: Json): Json => ({ type, output_index: 0, item_id: 'rs_1', ...extra });
    const body = sse([
      created,
      { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
      reasoning('response.reasoning_summary_text.delta', { summary_index: 0, delta: 'First.' }),
      reasoning('response.reasoning_summary_text.delta', { summary_index: 1, delta: 'Sec' }),
      reasoning('response.reasoning_summary_text.delta', { summary_index: 1, delta: 'ond.' }),
      reasoning('response.reasoning_summary_text.done', { summary_index: 1, text: 'Second.' }),
      // Only the done event of a third part: its text arrives as one delta.
      reasoning('response.reasoning_summary_text.done', { summary_index: 2, text: 'Third.' }),
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { id: 'rs_1', type: 'reasoning', summary: ['First.', 'Second.', 'Third.'].map((t) => ({ type: 'summary_text', text: t })) },
      },
      completed(),
    ]);
    const { message: result } = await run([{ headers: SSE, body }]);
    expect(thinkingOf(result)).toBe('First.\n\nSecond.\n\nThird.');
  });

  it('completes arguments that only the done events carry, after a partial stream of deltas', async () => {
    const body = sse([
      created,
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'ls', arguments: '' },
      },
      { type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc_1', delta: '{"dir":' },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'ls', arguments: '{"dir":"src"}' },
      },
      completed(),
    ]);
    const { message: result } = await run([{ headers: SSE, body }]);
    expect(toolCallsOf(result)).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'ls', arguments: { dir: 'src' }, rawArguments: '{"dir":"src"}', signature: 'fc_1' },
    ]);
  });

  it('keeps raw arguments that are not a JSON object and generates a missing call_id', async () => {
    const body = sse([
      created,
      { type: 'response.output_item.added', output_index: 0, item: { id: 'fc_1', type: 'function_call', name: 'ls', arguments: '' } },
      { type: 'response.function_call_arguments.done', output_index: 0, item_id: 'fc_1', arguments: '[1, 2' },
      completed(),
    ]);
    const { message: result } = await run([{ headers: SSE, body }]);
    const [call] = toolCallsOf(result);
    expect(call?.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(call).toMatchObject({ arguments: {}, rawArguments: '[1, 2' });
    expect(result.stopReason).toBe('tool_use');
  });

  it('maps cached input tokens and an incomplete response cut by the content filter', async () => {
    const usage = {
      input_tokens: 1200,
      input_tokens_details: { cached_tokens: 1024 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 20 },
      total_tokens: 1230,
    };
    const incomplete = {
      type: 'response.incomplete',
      response: { id: 'resp_q', status: 'incomplete', incomplete_details: { reason: 'content_filter' }, usage },
    };
    const { message: result } = await run([{ headers: SSE, body: sse([created, message(0), text(0, 'Part'), incomplete]) }]);
    expect(result.stopReason).toBe('content_filter');
    expect(textOf(result)).toBe('Part');
    expect(result.usage).toEqual({ input: 176, output: 30, cacheRead: 1024, cacheWrite: 0, reasoning: 20, total: 1230 });
  });

  it('an error event with code and message at the top level (the documented shape) is classified too', async () => {
    const error = {
      type: 'error',
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached. Please try again in 2s.',
      param: null,
      sequence_number: 4,
    };
    const { events } = await run([{ headers: SSE, body: sse([created, error]) }]);
    expect(lastError(events)).toMatchObject({ code: 'rate_limited', kind: 'transient', retryAfterMs: 2000 });
  });

  it('response.failed carries the error; without one it is a transient server_error', async () => {
    const failed = (error: Json | null): Json => ({ type: 'response.failed', response: { id: 'resp_q', status: 'failed', error } });
    const context = await run([
      {
        headers: SSE,
        body: sse([created, failed({ code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.' })]),
      },
    ]);
    expect(lastError(context.events)).toMatchObject({ code: 'context_length', kind: 'fatal' });
    await server?.close();
    const unknown = await run([{ headers: SSE, body: sse([created, message(0), text(0, 'so far'), failed(null)]) }]);
    expect(lastError(unknown.events)).toMatchObject({ code: 'server_error', kind: 'transient' });
    expect(textOf(unknown.message)).toBe('so far');
  });

  it('a body that ends without a terminal event is a transient stream_cut carrying the partial text', async () => {
    const { message: result, events } = await run([{ headers: SSE, body: sse([created, message(0), text(0, 'Hal'), text(0, 'f')]) }]);
    const error = lastError(events);
    expect([error.code, error.kind]).toEqual(['stream_cut', 'transient']);
    expect(error.message).toContain('no response.completed event');
    expect(textOf(result)).toBe('Half');
  });

  it('a connection cut mid-stream is a transient stream_cut', async () => {
    const { message: result, events } = await run([
      { headers: SSE, body: [sse([created, message(0), text(0, 'before the cut')])], cut: true },
    ]);
    expect(lastError(events)).toMatchObject({ code: 'stream_cut', kind: 'transient' });
    expect(lastError(events).message).toContain(`${server?.baseUrl}/responses`);
    expect(textOf(result)).toBe('before the cut');
  });

  it('decodes a last event that lacks its blank line', async () => {
    const body = `${sse([created, message(0), text(0, 'x')])}event: response.completed\ndata: ${JSON.stringify(completed())}`;
    const { message: result } = await run([{ headers: SSE, body }]);
    expect(result.stopReason).toBe('stop');
  });

  it('a frame that is not JSON ends the stream with invalid_response', async () => {
    const { events } = await run([{ headers: SSE, body: `${sse([created])}event: response.output_text.delta\ndata: {not json\n\n` }]);
    expect(lastError(events)).toMatchObject({ code: 'invalid_response' });
  });

  it('decodes the same when the body arrives in tiny byte chunks that split UTF-8 characters', async () => {
    const file = 'openai-responses/stream-reasoning-summary.sse';
    const { message: result } = await run([{ ...fixtureResponse(file), body: byteChunks(readFixture(file), 7) }]);
    expect(thinkingOf(result)).toContain('I’ll aim to keep the response clear');
    expect(textOf(result)).toBe('2 + 2 = 4.');
  });

  it('reads a JSON body when the server ignores stream: true', async () => {
    const { message: result } = await run([fixtureResponse('openai-responses/nonstream-parallel-function-calls.json')]);
    expect(toolCallsOf(result).map((c) => c.arguments)).toEqual([{ loc_name: 'Londos' }, { loc_name: 'London' }]);
  });

  it('an HTML page answered with 200 is a fatal invalid_response pointing at the base URL', async () => {
    const { events } = await run([{ headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>LM Studio</title>' }]);
    expect(lastError(events)).toMatchObject({ code: 'invalid_response', kind: 'fatal' });
    expect(lastError(events).message).toContain('check the base URL');
  });

  it('HTTP errors: 429 honours retry-after, 500 is transient, context_length_exceeded is fatal', async () => {
    const json = { 'content-type': 'application/json' };
    const limited = await run([
      {
        status: 429,
        headers: { ...json, 'retry-after': '3' },
        body: '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}',
      },
    ]);
    expect(lastError(limited.events)).toMatchObject({ code: 'rate_limited', kind: 'transient', retryAfterMs: 3000, status: 429 });
    await server?.close();
    const failed = await run([
      { status: 500, headers: json, body: '{"error":{"message":"The server had an error","type":"server_error"}}' },
    ]);
    expect(lastError(failed.events)).toMatchObject({ code: 'server_error', kind: 'transient', status: 500 });
    await server?.close();
    const body =
      '{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","code":"context_length_exceeded"}}';
    const overflow = await run([{ status: 400, headers: json, body }]);
    expect(lastError(overflow.events)).toMatchObject({ code: 'context_length', kind: 'fatal', status: 400 });
  });

  it('aborting mid-stream ends with stopReason aborted and the text so far', async () => {
    const controller = new AbortController();
    server = await startServer([{ headers: SSE, body: [sse([created, message(0), text(0, 'streaming…')])], hold: true }]);
    const stream = streamOpenAIResponses(
      model(server.baseUrl),
      { messages: [{ role: 'user', content: 'hi' }] },
      { signal: controller.signal },
    );
    const events: AssistantStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'text_delta') controller.abort();
    }
    const result = await stream.result();
    expectWellFormed(events, result);
    expect(result.stopReason).toBe('aborted');
    expect(result.error?.code).toBe('aborted');
    expect(textOf(result)).toBe('streaming…');
  });

  it('an already aborted signal sends no request', async () => {
    server = await startServer([]);
    const { message: result } = await collect(
      streamOpenAIResponses(model(server.baseUrl), { messages: [] }, { signal: AbortSignal.abort() }),
    );
    expect(result.stopReason).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });

  it('an unreachable server is a transient network error naming the URL', async () => {
    const baseUrl = await closedPortUrl();
    const { events, message: result } = await collect(streamOpenAIResponses(model(baseUrl), { messages: [] }));
    expectWellFormed(events, result);
    expect(lastError(events)).toMatchObject({ code: 'network', kind: 'transient' });
    expect(lastError(events).message).toContain(`${baseUrl}/responses`);
    expect(result.api).toBe('openai-responses');
  });
});
