/**
 * Gemini stream shapes and failure modes the recordings do not show (or show once), on a
 * real local HTTP server. Bodies written here are hand-made in the documented shapes and
 * say so; recorded ones come from ../shared/fixtures/gemini/.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamGemini } from '../../src/model/providers/gemini.js';
import { PartialArgsWriter, parsePath } from '../../src/model/providers/gemini-partial-args.js';
import type { AssistantStreamEvent } from '../../src/model/types.js';
import { byteChunks, closedPortUrl, fixtureResponse, readFixture, startServer } from './fixture-server.js';
import type { ScriptedResponse, TestServer } from './fixture-server.js';
import { candidate, errorOf, geminiModel, geminiSse } from './gemini-helpers.js';
import { collect, expectWellFormed, textOf, thinkingOf, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SSE = { 'content-type': 'text/event-stream' };
const JSON_TYPE = { 'content-type': 'application/json; charset=UTF-8' };

async function run(responses: ScriptedResponse[], options: { signal?: AbortSignal; stream?: boolean } = {}, id = 'gemini-2.5-flash') {
  server = await startServer(responses);
  const result = await collect(streamGemini(geminiModel(server.baseUrl, id), { messages: [{ role: 'user', content: 'hi' }] }, options));
  expectWellFormed(result.events, result.message);
  return result;
}

/** A google.rpc.Status error body (hand-made, in the documented shape). */
function status(code: number, rpcStatus: string, message: string, details?: unknown[]): string {
  return JSON.stringify({ error: { code, message, status: rpcStatus, ...(details ? { details } : {}) } });
}

describe('gemini thought signatures in the stream', () => {
  it('an empty text part carrying only a signature signs the text before it', async () => {
    const body = geminiSse([
      candidate([{ text: 'Paris' }]),
      candidate([{ text: '.' }]),
      candidate([{ text: '', thoughtSignature: 'c2lnLXRleHQ=' }], 'STOP'),
    ]);
    const { message, events } = await run([{ headers: SSE, body }]);
    expect(message.content).toEqual([{ type: 'text', text: 'Paris.', signature: 'c2lnLXRleHQ=' }]);
    expect(events.filter((e) => e.type === 'text_start')).toHaveLength(1);
  });

  it('a signed thought keeps its signature; a signature after a call, with no text yet, gets its own empty text block', async () => {
    const body = geminiSse([
      candidate([{ text: 'Thinking…', thought: true, thoughtSignature: 'dGhvdWdodA==' }]),
      candidate([{ functionCall: { name: 'ls', args: {} } }]),
      candidate([{ text: '', thoughtSignature: 'bGF0ZQ==' }], 'STOP'),
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Thinking…', signature: 'dGhvdWdodA==' },
      expect.objectContaining({ type: 'tool_call', name: 'ls' }),
      { type: 'text', text: '', signature: 'bGF0ZQ==' },
    ]);
    expect(message.stopReason).toBe('tool_use');
  });

  it('a second, different signature starts a new text block instead of being merged away', async () => {
    const body = geminiSse([
      candidate([{ text: 'one', thoughtSignature: 'b25l' }]),
      candidate([{ text: 'two', thoughtSignature: 'dHdv' }], 'STOP'),
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(message.content).toEqual([
      { type: 'text', text: 'one', signature: 'b25l' },
      { type: 'text', text: 'two', signature: 'dHdv' },
    ]);
  });
});

describe('gemini function calls in the stream', () => {
  it('assembles nested partialArgs: objects, arrays of objects, numbers, booleans, null, a string in three escaped pieces', async () => {
    const piece = (jsonPath: string, value: Record<string, unknown>, willContinue = false) => ({
      jsonPath,
      ...value,
      ...(willContinue ? { willContinue } : {}),
    });
    const fc = (functionCall: Record<string, unknown>) => candidate([{ functionCall }]);
    const body = geminiSse([
      fc({ name: 'plan', willContinue: true }),
      fc({ partialArgs: [piece('$.title', { stringValue: 'Say "hi"' }, true)], willContinue: true }),
      fc({ partialArgs: [piece('$.title', { stringValue: '\n\\ to 世界' }, true)], willContinue: true }),
      fc({ partialArgs: [piece('$.title', { stringValue: '' })], willContinue: true }),
      fc({ partialArgs: [piece('$.steps[0].n', { numberValue: 1 }), piece('$.steps[0].done', { boolValue: true })], willContinue: true }),
      fc({
        partialArgs: [piece('$.steps[1].n', { numberValue: 2.5 }), piece('$.steps[1].note', { nullValue: 'NULL_VALUE' })],
        willContinue: true,
      }),
      fc({ partialArgs: [piece("$.meta['owner name']", { stringValue: 'Ada' })], willContinue: true }),
      // The last piece ends the call: no willContinue on the functionCall.
      fc({ partialArgs: [piece('$.tags[0]', { stringValue: 'x' }), piece('$.tags[1]', { stringValue: 'y' })] }),
      candidate([{ text: '' }], 'STOP'),
    ]);
    const { message, events } = await run([{ headers: SSE, body }], {}, 'gemini-3-pro-preview');
    const [call] = toolCallsOf(message);
    const expected = {
      title: 'Say "hi"\n\\ to 世界',
      steps: [
        { n: 1, done: true },
        { n: 2.5, note: null },
      ],
      meta: { 'owner name': 'Ada' },
      tags: ['x', 'y'],
    };
    expect(call?.arguments).toEqual(expected);
    expect(JSON.parse(call?.rawArguments ?? '')).toEqual(expected);
    const partial = events.flatMap((e) => (e.type === 'tool_call_delta' ? [e.partialArguments] : []));
    expect(partial[0]).toEqual({ title: 'Say "hi"' });
    expect(partial[partial.length - 1]).toEqual(expected);
    expect(message.stopReason).toBe('tool_use');
  });

  it('uses a call id the server sends; makes unique ones otherwise', async () => {
    const body = geminiSse([
      candidate(
        [
          { functionCall: { id: 'srv_1', name: 'a', args: {} } },
          { functionCall: { id: 'srv_1', name: 'b', args: {} } },
          { functionCall: { name: 'c', args: {} } },
        ],
        'STOP',
      ),
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    const ids = toolCallsOf(message).map((c) => c.id);
    expect(ids[0]).toBe('srv_1');
    expect(new Set(ids).size).toBe(3);
    expect(ids[2]).toBe('call_resp-test_2');
  });

  it('text before a call is closed before the call starts', async () => {
    const body = geminiSse([candidate([{ text: 'Let me look.' }, { functionCall: { name: 'ls', args: { dir: '.' } } }], 'STOP')]);
    const { events } = await run([{ headers: SSE, body }]);
    expect(events.map((e) => e.type)).toEqual([
      'start',
      'text_start',
      'text_delta',
      'text_end',
      'tool_call_start',
      'tool_call_delta',
      'tool_call_end',
      'done',
    ]);
  });

  it('the partial-args writer: paths, and a call that never got arguments', () => {
    expect(parsePath('$.a.b[12][\'c d\']["e"]')).toEqual(['a', 'b', 12, 'c d', 'e']);
    expect(parsePath('a.b')).toBeUndefined();
    expect(parsePath('$.a[x]')).toBeUndefined();
    const empty = new PartialArgsWriter();
    expect(empty.end()).toBe('{}');
    const whole = new PartialArgsWriter();
    expect(whole.whole({ a: 1 }) + whole.partial({ jsonPath: '$.b', numberValue: 2 }) + whole.end()).toBe('{"a":1}');
  });
});

describe('gemini finish reasons and blocks', () => {
  it('SAFETY → content_filter, keeping the partial text', async () => {
    const { message } = await run([{ headers: SSE, body: geminiSse([candidate([{ text: 'Once upon' }]), candidate([], 'SAFETY')]) }]);
    expect([message.stopReason, textOf(message)]).toEqual(['content_filter', 'Once upon']);
  });

  it('a blocked prompt (promptFeedback.blockReason, no candidates) → content_filter', async () => {
    const blocked = {
      promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
      usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 },
      responseId: 'r1',
    };
    const { message } = await run([{ headers: SSE, body: geminiSse([blocked]) }]);
    expect(message.stopReason).toBe('content_filter');
    expect(message.content).toEqual([]);
    expect(message.usage).toMatchObject({ input: 7, total: 7 });
  });

  it('MALFORMED_FUNCTION_CALL → a transient invalid_response quoting the finish message (another sample usually works)', async () => {
    const body = geminiSse([
      candidate([], 'MALFORMED_FUNCTION_CALL', {
        candidates: [{ finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: 'Malformed function call: print(default_api.ls(' }],
      }),
    ]);
    const { message, events } = await run([{ headers: SSE, body }]);
    expect(errorOf(events)).toMatchObject({ code: 'invalid_response', kind: 'transient' });
    expect(errorOf(events).message).toContain('Malformed function call: print(default_api.ls(');
    expect(message.stopReason).toBe('error');
  });

  it('finishReason OTHER → a transient invalid_response', async () => {
    const { events } = await run([{ headers: SSE, body: geminiSse([candidate([{ text: 'x' }], 'OTHER')]) }]);
    expect(errorOf(events)).toMatchObject({ code: 'invalid_response', kind: 'transient' });
  });

  it('cached prompt tokens become cacheRead and leave input', async () => {
    const usageMetadata = {
      promptTokenCount: 1200,
      cachedContentTokenCount: 1000,
      candidatesTokenCount: 5,
      thoughtsTokenCount: 20,
      totalTokenCount: 1225,
    };
    const { message } = await run([{ headers: SSE, body: geminiSse([candidate([{ text: 'ok' }], 'STOP', { usageMetadata })]) }]);
    expect(message.usage).toEqual({ input: 200, output: 25, cacheRead: 1000, cacheWrite: 0, reasoning: 20, total: 1225 });
  });
});

describe('gemini errors', () => {
  it('429 with RetryInfo → retryAfterMs from retryDelay', async () => {
    const body = status(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota.', [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests' }],
      },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' },
    ]);
    const { events } = await run([{ status: 429, headers: JSON_TYPE, body }]);
    expect(errorOf(events)).toMatchObject({ code: 'rate_limited', kind: 'transient', status: 429, retryAfterMs: 37_000 });
  });

  it('503 UNAVAILABLE overloaded → transient overloaded; 500 INTERNAL → transient server_error', async () => {
    const overloaded = await run([
      { status: 503, headers: JSON_TYPE, body: status(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.') },
    ]);
    expect(errorOf(overloaded.events)).toMatchObject({ code: 'overloaded', kind: 'transient', status: 503 });
    await server?.close();
    const internal = await run([{ status: 500, headers: JSON_TYPE, body: status(500, 'INTERNAL', 'An internal error has occurred.') }]);
    expect(errorOf(internal.events)).toMatchObject({ code: 'server_error', kind: 'transient', status: 500 });
  });

  it('400 "exceeds the maximum number of tokens" → fatal context_length', async () => {
    const body = status(400, 'INVALID_ARGUMENT', 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).');
    const { events } = await run([{ status: 400, headers: JSON_TYPE, body }]);
    expect(errorOf(events)).toMatchObject({ code: 'context_length', kind: 'fatal', status: 400 });
  });

  it('403 PERMISSION_DENIED → auth; another 400 → bad_request', async () => {
    const denied = await run([
      { status: 403, headers: JSON_TYPE, body: status(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers.") },
    ]);
    expect(errorOf(denied.events)).toMatchObject({ code: 'auth', kind: 'fatal' });
    await server?.close();
    const bad = await run([
      { status: 400, headers: JSON_TYPE, body: status(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unknown name "foo"') },
    ]);
    expect(errorOf(bad.events)).toMatchObject({ code: 'bad_request', kind: 'fatal' });
  });

  it('an error object inside a 200 stream ends it with that typed error and the partial message', async () => {
    const body = geminiSse([
      candidate([{ text: 'Half' }]),
      { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } },
    ]);
    const { message, events } = await run([{ headers: SSE, body }]);
    expect(errorOf(events)).toMatchObject({ code: 'overloaded', kind: 'transient' });
    expect([message.stopReason, textOf(message)]).toEqual(['error', 'Half']);
  });

  it('a body that ends without a finishReason, or a cut connection, is a transient stream_cut with the partial text', async () => {
    const ended = await run([{ headers: SSE, body: geminiSse([candidate([{ text: 'Hal' }])]) }]);
    expect(errorOf(ended.events)).toMatchObject({ code: 'stream_cut', kind: 'transient' });
    await server?.close();
    const cut = await run([{ headers: SSE, body: [geminiSse([candidate([{ text: 'before the cut' }])])], cut: true }]);
    expect(errorOf(cut.events)).toMatchObject({ code: 'stream_cut', kind: 'transient' });
    expect(textOf(cut.message)).toBe('before the cut');
  });

  it('a frame that is not JSON → invalid_response; an HTML page → fatal invalid_response naming the base URL', async () => {
    const broken = await run([{ headers: SSE, body: `${geminiSse([candidate([{ text: 'x' }])])}data: {not json\r\n\r\n` }]);
    expect(errorOf(broken.events)).toMatchObject({ code: 'invalid_response' });
    await server?.close();
    const html = await run([{ headers: { 'content-type': 'text/html' }, body: '<html><title>Login</title></html>' }]);
    expect(errorOf(html.events)).toMatchObject({ code: 'invalid_response', kind: 'fatal' });
    expect(errorOf(html.events).message).toContain('check the base URL');
  });

  it('an unreachable server is a transient network error naming the URL, never the key', async () => {
    const baseUrl = await closedPortUrl();
    const { events, message } = await collect(
      streamGemini(geminiModel(baseUrl, 'gemini-2.5-flash', { apiKey: 'secret-key-123' }), { messages: [] }),
    );
    expectWellFormed(events, message);
    const error = errorOf(events);
    expect([error.code, error.kind]).toEqual(['network', 'transient']);
    expect(error.message).toContain('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(JSON.stringify(message)).not.toContain('secret-key-123');
  });
});

describe('gemini transport', () => {
  it('decodes a recording delivered in 7-byte pieces that split CRLFs and UTF-8 characters', async () => {
    const file = 'gemini/stream-thinking.sse';
    const whole = await run([fixtureResponse(file)]);
    await server?.close();
    const pieces = await run([{ ...fixtureResponse(file), body: byteChunks(readFixture(file), 7) }]);
    expect(pieces.message).toEqual(whole.message);
    expect(thinkingOf(pieces.message).length).toBeGreaterThan(0);
  });

  it('reads a JSON body when a streaming request is answered with one', async () => {
    const { message } = await run([fixtureResponse('gemini/nonstream-parallel-function-calls.json')]);
    expect(toolCallsOf(message)).toHaveLength(3);
  });

  it('aborting mid-stream ends with stopReason aborted and the text so far', async () => {
    const controller = new AbortController();
    server = await startServer([{ headers: SSE, body: [geminiSse([candidate([{ text: 'streaming…' }])])], hold: true }]);
    const stream = streamGemini(
      geminiModel(server.baseUrl),
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
    expect([message.stopReason, message.error?.code, textOf(message)]).toEqual(['aborted', 'aborted', 'streaming…']);
  });

  it('an already aborted signal sends no request', async () => {
    server = await startServer([]);
    const { message } = await collect(streamGemini(geminiModel(server.baseUrl), { messages: [] }, { signal: AbortSignal.abort() }));
    expect(message.stopReason).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });
});
