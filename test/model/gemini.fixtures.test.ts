/**
 * Every recording in ../shared/fixtures/gemini/, replayed by a real local HTTP server with
 * its recorded status and headers, decodes to the right events and final message, or to
 * the right typed error. Expected values are the ones in the recordings.
 */
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { streamGemini } from '../../src/model/providers/gemini.js';
import type { AssistantMessage, AssistantStreamEvent } from '../../src/model/types.js';
import { FIXTURES_DIR, fixtureResponse, readFixture, startServer } from './fixture-server.js';
import type { TestServer } from './fixture-server.js';
import { errorOf, geminiModel } from './gemini-helpers.js';
import { collect, expectWellFormed, textOf, thinkingOf, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function replay(
  file: string,
  id: string,
  options: { stream?: boolean } = {},
): Promise<{ events: AssistantStreamEvent[]; message: AssistantMessage }> {
  server = await startServer([fixtureResponse(`gemini/${file}`)]);
  const result = await collect(streamGemini(geminiModel(server.baseUrl, id), { messages: [{ role: 'user', content: 'hi' }] }, options));
  expectWellFormed(result.events, result.message);
  expect(server.requests).toHaveLength(1);
  return result;
}

/**
 * The recorded frames of a stream, parsed (`.sse`: the `data:` lines; `.jsonl`: the lines).
 * `any`: the tests reach deep into recorded JSON to compare with what was decoded.
 */
function frames(file: string): Array<Record<string, any>> {
  const text = readFixture(`gemini/${file}`);
  const lines = file.endsWith('.jsonl')
    ? text.split('\n')
    : text
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6));
  return lines.filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, any>);
}

describe('gemini recordings', () => {
  it('covers every Gemini fixture (a new recording needs a test here)', () => {
    const all = readdirSync(new URL('gemini/', FIXTURES_DIR)).filter((name) => /\.(sse|json|txt|jsonl)$/.test(name));
    expect(all.filter((file) => !TESTED.includes(file))).toEqual([]);
  });

  it('a text stream split over frames with CRLF separators; the request goes to streamGenerateContent with the key in a header', async () => {
    const { message, events } = await replay('stream-text.sse', 'gemini-2.0-flash-exp');
    expect(textOf(message)).toBe('The capital of France is Paris.\n');
    expect(events.map((e) => e.type)).toEqual(['start', 'text_start', 'text_delta', 'text_delta', 'text_delta', 'text_end', 'done']);
    expect(message.stopReason).toBe('stop');
    // The last frame's usage counts (earlier frames carry provisional counts).
    expect(message.usage).toEqual({ input: 13, output: 8, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 21 });
    expect([message.api, message.responseId, message.provider, message.model]).toEqual([
      'gemini',
      'w1peaMz6INOvnvgPgYfPiQY',
      'gemini',
      'gemini-2.0-flash-exp',
    ]);
    const request = server?.requests[0];
    expect(request?.url).toBe('/v1beta/models/gemini-2.0-flash-exp:streamGenerateContent?alt=sse');
    expect(request?.headers['x-goog-api-key']).toBe('test-key');
    expect(request?.url).not.toContain('key=');
    expect(request?.json).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  });

  it('thought parts become one thinking block, then the answer text', async () => {
    const { message, events } = await replay('stream-thinking.sse', 'gemini-2.5-flash');
    const recorded = frames('stream-thinking.sse').map((f) => f.candidates[0].content.parts[0]);
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(thinkingOf(message)).toBe(
      recorded
        .filter((p) => p.thought)
        .map((p) => p.text)
        .join(''),
    );
    expect(thinkingOf(message)).toMatch(/^\*\*Initiating Calculations\*\*/);
    expect(textOf(message)).toBe(
      recorded
        .filter((p) => !p.thought)
        .map((p) => p.text)
        .join(''),
    );
    expect(textOf(message)).toMatch(/Therefore, 2 \+ 2 equals \*\*4\*\*\.$/);
    const types = events.map((e) => e.type);
    expect(types.indexOf('thinking_end')).toBeLessThan(types.indexOf('text_start'));
    expect(message.usage).toEqual({ input: 14, output: 139 + 436, cacheRead: 0, cacheWrite: 0, reasoning: 436, total: 589 });
    expect(message.responseId).toBe('S6p5aaGCFObpz7IP7o-6qQ4');
    expect(message.stopReason).toBe('stop');
  });

  it('MAX_TOKENS → length, thoughts counted as output and reasoning', async () => {
    const { message } = await replay('stream-max-tokens.sse', 'gemini-2.5-flash');
    expect(textOf(message)).toBe('## The');
    expect(message.stopReason).toBe('length');
    expect(message.usage).toEqual({ input: 40, output: 2 + 44, cacheRead: 0, cacheWrite: 0, reasoning: 44, total: 86 });
  });

  it('a function call with its thought signature (Gemini 3); the empty closing text part adds nothing', async () => {
    const { message, events } = await replay('stream-function-call-thought-signature.sse', 'gemini-3-pro-preview');
    const recorded = frames('stream-function-call-thought-signature.sse')[0]?.candidates[0].content.parts[0];
    expect(message.content).toHaveLength(1);
    const [call] = toolCallsOf(message);
    expect([call?.id, call?.name, call?.arguments, call?.rawArguments]).toEqual([
      'call_QUVVadTSNJ6_qtsPvN7J8Q0_0',
      'get_country',
      {},
      '{}',
    ]);
    expect(call?.signature).toBe(recorded.thoughtSignature);
    expect(call?.signature).toMatch(/^EpwICpkIAXLI2nxlU6gsWZaZ/);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual({ input: 29, output: 10 + 202, cacheRead: 0, cacheWrite: 0, reasoning: 202, total: 241 });
    expect(events.map((e) => e.type)).toEqual(['start', 'tool_call_start', 'tool_call_delta', 'tool_call_end', 'done']);
  });

  it('the turn after the tool result: text', async () => {
    const { message } = await replay('stream-function-call-turn2-text.sse', 'gemini-3-pro-preview');
    expect(textOf(message)).toBe('The capital of Mexico is Mexico City.');
    expect(message.content).toHaveLength(1);
    expect(message.stopReason).toBe('stop');
    expect(message.usage).toEqual({ input: 257, output: 8, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 265 });
    expect(message.responseId).toBe('REVVabaiCdq4qtsPnZu96Qo');
  });

  it('parallel function calls in one frame (Gemini 2.0): two calls, unique stable ids, no signatures', async () => {
    const { message } = await replay('stream-parallel-function-calls.sse', 'gemini-2.0-flash');
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments, c.signature])).toEqual([
      ['call_h99baZTLOoSShMIPgYaAgQw_0', 'get_current_temperature', { city: 'Paris' }, undefined],
      ['call_h99baZTLOoSShMIPgYaAgQw_1', 'get_current_temperature', { city: 'London' }, undefined],
    ]);
    expect(toolCallsOf(message).map((c) => c.rawArguments)).toEqual(['{"city":"Paris"}', '{"city":"London"}']);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual({ input: 37, output: 14, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 51 });
  });

  it('calls streamed as partialArgs with willContinue (Gemini 3.1): assembled, argument deltas growing', async () => {
    const { message, events } = await replay('stream-function-call-partial-args.chunks.jsonl', 'gemini-3.1-pro-preview');
    const recorded = frames('stream-function-call-partial-args.chunks.jsonl');
    const calls = toolCallsOf(message);
    expect(calls.map((c) => [c.id, c.name, c.arguments, c.rawArguments])).toEqual([
      ['call_dqHOab6xGLzWodAPkPuViA4_0', 'getWeather', { location: 'Boston' }, '{"location":"Boston"}'],
      ['call_dqHOab6xGLzWodAPkPuViA4_1', 'getWeather', { location: 'San Francisco' }, '{"location":"San Francisco"}'],
    ]);
    // Only the first of the parallel calls is signed, as recorded.
    expect(calls[0]?.signature).toBe(recorded[0]?.candidates[0].content.parts[0].thoughtSignature);
    expect(calls[1]?.signature).toBeUndefined();
    const deltas = events.filter((e) => e.type === 'tool_call_delta' && e.index === 0);
    expect(deltas.map((e) => e.type === 'tool_call_delta' && e.partialArguments)).toEqual([
      { location: 'Boston' },
      { location: 'Boston' },
      { location: 'Boston' },
    ]);
    // Each call ends when its last piece (no willContinue) arrives, before the next starts.
    const types = events.map((e) => (e.type.startsWith('tool_call') ? `${e.type}:${'index' in e ? e.index : ''}` : e.type));
    expect(types.indexOf('tool_call_end:0')).toBeLessThan(types.indexOf('tool_call_start:1'));
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual({ input: 26, output: 23 + 132, cacheRead: 0, cacheWrite: 0, reasoning: 132, total: 181 });
    expect(message.responseId).toBe('dqHOab6xGLzWodAPkPuViA4');
  });

  it('non-streaming generateContent with three parallel calls, the first signed', async () => {
    const { message, events } = await replay('nonstream-parallel-function-calls.json', 'gemini-2.5-flash', { stream: false });
    expect(server?.requests[0]?.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_alKWacytCLi5jMcPhISaoAI_0', 'parallel_local_search_one', { query: 'latest OpenAI model release notes' }],
      ['call_alKWacytCLi5jMcPhISaoAI_1', 'parallel_local_search_two', { query: 'latest Anthropic model release notes' }],
      ['call_alKWacytCLi5jMcPhISaoAI_2', 'parallel_local_search_three', { query: 'latest Gemini model release notes' }],
    ]);
    expect(toolCallsOf(message).map((c) => c.signature?.slice(0, 20))).toEqual(['CrICAb4+9vtrrkiSatPy', undefined, undefined]);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual({ input: 291, output: 70 + 67, cacheRead: 0, cacheWrite: 0, reasoning: 67, total: 428 });
    expect(events.filter((e) => e.type === 'tool_call_end')).toHaveLength(3);
  });

  it('400 INVALID_ARGUMENT with reason API_KEY_INVALID → auth (fatal), not bad_request', async () => {
    const { message, events } = await replay('error-400-api-key-invalid.json', 'gemini-2.5-flash');
    const error = errorOf(events);
    expect(events).toHaveLength(1);
    expect([error.code, error.kind, error.status]).toEqual(['auth', 'fatal', 400]);
    expect(error.message).toContain('API key not valid. Please pass a valid API key.');
    expect(error.message).toContain('GEMINI_API_KEY');
    expect(error.details).toEqual({ status: 'INVALID_ARGUMENT', reason: 'API_KEY_INVALID' });
    expect(message.stopReason).toBe('error');
    expect(message.error?.code).toBe('auth');
  });

  it('404 NOT_FOUND for the model → model_not_found (fatal)', async () => {
    const { events } = await replay('error-404-model-not-found.json', 'this-model-does-not-exist-12345');
    const error = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['model_not_found', 'fatal', 404]);
    expect(error.message).toContain('models/this-model-does-not-exist-12345 is not found for API version v1beta');
  });

  it('429 RESOURCE_EXHAUSTED → transient rate_limited (no RetryInfo recorded: no retryAfterMs)', async () => {
    const { events } = await replay('error-429-resource-exhausted.json', 'gemini-2.0-flash');
    const error = errorOf(events);
    expect([error.code, error.kind, error.status, error.retryAfterMs]).toEqual(['rate_limited', 'transient', 429, undefined]);
    expect(error.message).toContain('Resource exhausted. Please try again later.');
    expect(error.details).toEqual({ status: 'RESOURCE_EXHAUSTED' });
  });
});

const TESTED = [
  'stream-text.sse',
  'stream-thinking.sse',
  'stream-max-tokens.sse',
  'stream-function-call-thought-signature.sse',
  'stream-function-call-turn2-text.sse',
  'stream-parallel-function-calls.sse',
  'stream-function-call-partial-args.chunks.jsonl',
  'nonstream-parallel-function-calls.json',
  'error-400-api-key-invalid.json',
  'error-404-model-not-found.json',
  'error-429-resource-exhausted.json',
];
