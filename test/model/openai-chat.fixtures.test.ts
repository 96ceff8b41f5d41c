/**
 * Every Chat Completions recording in ../shared/fixtures (openai-chat/ and the
 * Chat-Completions ones in openai-compatible/), replayed by a real local HTTP server,
 * decodes to the right events and final message, or to the right typed error.
 * Expected values are the ones in the recordings.
 */
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import type { AssistantMessage, AssistantStreamEvent, ModelRef } from '../../src/model/types.js';
import { FIXTURES_DIR, fixtureResponse, startServer } from './fixture-server.js';
import type { TestServer } from './fixture-server.js';
import { collect, expectWellFormed, testModel, textOf, thinkingOf, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function replay(
  file: string,
  options: { stream?: boolean; model?: Partial<ModelRef> } = {},
): Promise<{ events: AssistantStreamEvent[]; message: AssistantMessage }> {
  server = await startServer([fixtureResponse(file)]);
  const model = testModel(server.baseUrl, options.model);
  const result = await collect(streamOpenAIChat(model, { messages: [{ role: 'user', content: 'hi' }] }, { stream: options.stream }));
  expectWellFormed(result.events, result.message);
  expect(server.requests).toHaveLength(1);
  return result;
}

function errorOf(events: AssistantStreamEvent[]): Extract<AssistantStreamEvent, { type: 'error' }> {
  const last = events[events.length - 1];
  if (last?.type !== 'error') throw new Error(`expected an error event, got ${last?.type}`);
  return last;
}

describe('openai-chat recordings', () => {
  it('covers every Chat Completions fixture (a new recording needs a test here)', () => {
    const covered = new Set(TESTED);
    const all = ['openai-chat', 'openai-compatible'].flatMap((dir) =>
      readdirSync(new URL(`${dir}/`, FIXTURES_DIR))
        .filter((name) => /\.(sse|json|txt|jsonl)$/.test(name) && !name.startsWith('lmstudio-responses-'))
        .map((name) => `${dir}/${name}`),
    );
    expect(all.filter((file) => !covered.has(file))).toEqual([]);
  });

  it('plain text stream with a usage chunk', async () => {
    const { message, events } = await replay('openai-chat/stream-text-usage.sse');
    expect(textOf(message)).toBe('4200 + 42 equals 4242.');
    expect(message.stopReason).toBe('stop');
    expect(message.usage).toEqual({ input: 16, output: 10, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 26 });
    expect(message.responseId).toBe('chatcmpl-CoDWl5rS0pF10P0W0TDVgY3NA26dk');
    expect(events.filter((e) => e.type === 'text_delta')).toHaveLength(10);
    expect(server?.requests[0]?.json).toMatchObject({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true } });
  });

  it('cached prompt tokens become cacheRead and leave input', async () => {
    const { message } = await replay('openai-chat/stream-text-usage-cached-tokens.sse');
    expect(textOf(message)).toBe('Farewell.');
    expect(message.usage).toEqual({ input: 120, output: 3, cacheRead: 1024, cacheWrite: 0, reasoning: 0, total: 1147 });
  });

  it('one tool call whose arguments arrive over many chunks, with growing partial arguments', async () => {
    const { message, events } = await replay('openai-chat/stream-single-tool-call-many-arg-chunks.sse');
    const [call] = toolCallsOf(message);
    expect(call?.id).toBe('call_sigJkGcvZrYCOQPEbptSxluC');
    expect(call?.name).toBe('__mirascope_formatted_output_tool__');
    expect(call?.arguments).toEqual({ title: 'THE NAME OF THE WIND', author: { first_name: 'Patrick', last_name: 'Rothfuss' }, rating: 7 });
    const deltas = events.filter((e) => e.type === 'tool_call_delta');
    expect(deltas).toHaveLength(29);
    // The arguments were usable before the call ended: the title was complete mid-stream.
    const snapshots = deltas.map((e) => JSON.stringify(e.partialArguments));
    expect(snapshots.some((s) => s.includes('"title":"THE NAME OF THE WIND"') && !s.includes('Rothfuss'))).toBe(true);
    // finish_reason is "stop" (tool_choice was forced); the call is what the loop needs.
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input: 172, output: 29, total: 201 });
  });

  it('parallel tool calls by index', async () => {
    const { message, events } = await replay('openai-chat/stream-parallel-tool-calls.sse');
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_M26z19sncd7b4LBgzKRRbaUE', 'secret_retrieval_tool', { password: 'mellon' }],
      ['call_KPXe5NX7IcKkaBUhc6dto2QV', 'secret_retrieval_tool', { password: 'radiance' }],
    ]);
    expect(toolCallsOf(message).map((c) => c.rawArguments)).toEqual(['{"password": "mellon"}', '{"password": "radiance"}']);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input: 75, output: 53, total: 128 });
    expect(events.filter((e) => e.type === 'tool_call_end').map((e) => e.index)).toEqual([0, 1]);
  });

  it('a long tool argument (nested array of objects)', async () => {
    const { message } = await replay('openai-chat/stream-tool-call-long-args.sse');
    const [call] = toolCallsOf(message);
    expect(call?.id).toBe('call_CCGIWaMeYWmxOQ91orkmTvzn');
    expect(call?.name).toBe('final_result');
    expect(call?.arguments).toEqual({
      answers: [
        { label: 'Capital', answer: 'The capital of Mexico is Mexico City.' },
        { label: 'Weather', answer: 'The weather in Mexico City is currently sunny.' },
        { label: 'Product Name', answer: 'The product name is Pydantic AI.' },
      ],
    });
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input: 448, output: 62, total: 510 });
  });

  it('text after tool results (turn 2)', async () => {
    const { message } = await replay('openai-chat/stream-tool-call-then-text-turn2.sse');
    expect(textOf(message)).toBe(
      'The secrets associated with the passwords are:\n\n- "mellon": Welcome to Moria!\n- "radiance": Life before Death',
    );
    expect(message.stopReason).toBe('stop');
    expect(message.usage).toMatchObject({ input: 149, output: 28, total: 177 });
  });

  it('a streamed refusal', async () => {
    const { message } = await replay('openai-chat/stream-refusal.sse');
    expect(message.refusal).toBe("I'm very sorry, but I can't assist with that request.");
    expect(message.content).toEqual([]);
    expect(message.stopReason).toBe('refusal');
    expect(message.usage).toMatchObject({ input: 64, output: 13 });
  });

  it('finish_reason length while reasoning: no content, reasoning tokens counted', async () => {
    const { message } = await replay('openai-chat/stream-finish-length-reasoning.sse');
    expect(message.content).toEqual([]);
    expect(message.stopReason).toBe('length');
    expect(message.usage).toEqual({ input: 13, output: 50, cacheRead: 0, cacheWrite: 0, reasoning: 50, total: 63 });
  });

  it('non-streaming text with reasoning tokens gives the same event shape', async () => {
    const { message, events } = await replay('openai-chat/nonstream-text-reasoning-tokens.json', { stream: false });
    expect(events.map((e) => e.type)).toEqual(['start', 'text_start', 'text_delta', 'text_end', 'done']);
    expect(textOf(message)).toBe('The capital of France is **Paris**.');
    expect(message.usage).toEqual({ input: 14, output: 84, cacheRead: 0, cacheWrite: 0, reasoning: 64, total: 98 });
    expect(message.stopReason).toBe('stop');
    expect(server?.requests[0]?.json).not.toHaveProperty('stream');
  });

  it('non-streaming parallel tool calls with content null', async () => {
    const { message } = await replay('openai-chat/nonstream-parallel-tool-calls.json', { stream: false });
    expect(message.content.every((b) => b.type === 'tool_call')).toBe(true);
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_kz1qLLRsugXwWiQMeH9oFAep', 'parallel_local_search_one', { query: 'latest OpenAI model release notes' }],
      ['call_yNouGq1Kv6P5W9fhTng6acZi', 'parallel_local_search_two', { query: 'latest Anthropic model release notes' }],
      ['call_O7MqnuniDmyT6a0BS31GTunB', 'parallel_local_search_three', { query: 'latest Gemini model release notes' }],
    ]);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input: 259, output: 78, total: 337 });
  });

  it('non-streaming refusal', async () => {
    const { message } = await replay('openai-chat/nonstream-refusal.json', { stream: false });
    expect(message.refusal).toBe("I'm very sorry, but I can't assist with that request.");
    expect(message.stopReason).toBe('refusal');
  });

  it('401 invalid key → auth (fatal), naming the key variable and quoting OpenAI', async () => {
    const { message, events } = await replay('openai-chat/error-401-invalid-api-key.json');
    const { error } = errorOf(events);
    expect(events).toHaveLength(1);
    expect([error.code, error.kind, error.status]).toEqual(['auth', 'fatal', 401]);
    expect(error.message).toContain('OPENAI_API_KEY');
    expect(error.message).toContain('Incorrect API key provided');
    expect(message.stopReason).toBe('error');
    expect(message.error?.code).toBe('auth');
  });

  it('404 unknown model → model_not_found', async () => {
    const { events } = await replay('openai-chat/error-404-model-not-found.json');
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['model_not_found', 'fatal', 404]);
    expect(error.message).toContain('The model `this-model-does-not-exist-12345` does not exist');
  });

  it('400 unsupported parameter → bad_request naming the parameter', async () => {
    const { events } = await replay('openai-chat/error-400-unsupported-parameter.json');
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['bad_request', 'fatal', 400]);
    expect(error.message).toContain("Unsupported parameter: 'stop' is not supported with this model.");
    expect(error.message).toContain('parameter "stop"');
    expect(error.details).toMatchObject({ code: 'unsupported_parameter', param: 'stop' });
  });

  it('400 unsupported value (developer role) → bad_request', async () => {
    const { events } = await replay('openai-chat/error-400-unsupported-value-developer-role.json');
    const { error } = errorOf(events);
    expect([error.code, error.kind]).toEqual(['bad_request', 'fatal']);
    expect(error.message).toContain("does not support 'developer'");
  });

  it('503 with a text/plain body → transient server_error quoting the body', async () => {
    const { events } = await replay('openai-chat/error-503-upstream-connect-text-plain.txt');
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['server_error', 'transient', 503]);
    expect(error.message).toContain('upstream connect error or disconnect/reset before headers');
  });
});

describe('OpenAI-compatible recordings', () => {
  it('Crusoe (Llama) text stream with usage', async () => {
    const { message } = await replay('openai-compatible/crusoe-llama-stream-usage.sse');
    expect(textOf(message)).toBe('1, 2, 3, 4, 5');
    expect(message.usage).toMatchObject({ input: 46, output: 14, total: 60 });
    expect(message.stopReason).toBe('stop');
  });

  it('DeepSeek: reasoning_content, then a tool call; usage in the finish chunk; no [DONE]', async () => {
    const { message, events } = await replay('openai-compatible/deepseek-stream-reasoning-tool-call.chunks.jsonl');
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'tool_call']);
    expect(thinkingOf(message)).toBe(
      'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".',
    );
    const [call] = toolCallsOf(message);
    expect([call?.id, call?.name, call?.arguments]).toEqual(['call_00_ioIn7yN9p1ZOMNpDLwd4MgAF', 'weather', { location: 'San Francisco' }]);
    expect(message.stopReason).toBe('tool_use');
    expect(message.usage).toEqual({ input: 19, output: 83, cacheRead: 320, cacheWrite: 0, reasoning: 39, total: 422 });
    // The thinking block ends before the tool call starts.
    const types = events.map((e) => e.type);
    expect(types.indexOf('thinking_end')).toBeLessThan(types.indexOf('tool_call_start'));
  });

  it('Groq `event: error` frame → error event (malformed tool call, retryable)', async () => {
    const { message, events } = await replay('openai-compatible/groq-stream-tool-use-failed-error-event.sse', {
      model: { provider: 'groq' },
    });
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['invalid_response', 'transient', 400]);
    expect(error.message).toContain('Tool call validation failed');
    expect(message.stopReason).toBe('error');
    expect(thinkingOf(message)).toMatch(/^We need to call the tool with invalid parameters first/);
  });

  it('Groq HTTP 400 tool_use_failed → the same typed error', async () => {
    const { events } = await replay('openai-compatible/groq-error-400-tool-use-failed.json', { model: { provider: 'groq' } });
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['invalid_response', 'transient', 400]);
    expect(error.message).toContain("additionalProperties 'foo' not allowed");
  });

  it('Ollama cloud non-streaming tool call with a reasoning field and content ""', async () => {
    const { message } = await replay('openai-compatible/ollama-cloud-nonstream-tool-call.json', {
      stream: false,
      model: { provider: 'ollama' },
    });
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'tool_call']);
    expect(thinkingOf(message)).toMatch(/^The conversation: user asked "What is the capital of France\?"/);
    const [call] = toolCallsOf(message);
    expect([call?.id, call?.name, call?.arguments]).toEqual(['call_o2vnpxrw', 'final_result', { city: 'Paris', country: 'France' }]);
    expect(message.usage).toMatchObject({ input: 206, output: 194, total: 400 });
    expect(message.stopReason).toBe('tool_use');
  });

  it('Ollama non-streaming reasoning field next to content', async () => {
    const { message } = await replay('openai-compatible/ollama-nonstream-reasoning-field.json', { stream: false });
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(thinkingOf(message)).toMatch(/^Okay, the user is asking for the capital of France\./);
    expect(textOf(message)).toBe('{ "city": "Paris", "country": "France" }');
    expect(message.usage).toMatchObject({ input: 136, output: 15, total: 151 });
  });

  it('Ollama non-streaming text', async () => {
    const { message } = await replay('openai-compatible/ollama-nonstream-text.json', { stream: false });
    expect(textOf(message)).toBe('4200 + 42 = 4242\n');
    expect(message.responseId).toBe('chatcmpl-674');
    expect(message.usage).toMatchObject({ input: 21, output: 16, total: 37 });
  });

  it('Ollama: whole tool calls in one chunk each, no [DONE]', async () => {
    const { message } = await replay('openai-compatible/ollama-stream-parallel-tool-calls-one-chunk-each.sse');
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_wteop8bt', 'run_command', { command: 'ls' }],
      ['call_rk2xye1l', 'run_command', { command: 'ls -l' }],
    ]);
    expect(message.stopReason).toBe('tool_use');
  });

  it('OpenRouter HTTP 429 → transient rate_limited quoting the upstream message', async () => {
    const { events } = await replay('openai-compatible/openrouter-error-429-upstream-rate-limited.json', {
      model: { provider: 'openrouter' },
    });
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['rate_limited', 'transient', 429]);
    expect(error.message).toContain('Provider returned error');
    expect(error.message).toContain('temporarily rate-limited upstream');
  });

  it('OpenRouter error object inside a 200 stream → error event with the partial message', async () => {
    const { message, events } = await replay('openai-compatible/openrouter-stream-error-in-chunk.sse', {
      model: { provider: 'openrouter' },
    });
    const { error } = errorOf(events);
    expect([error.code, error.kind, error.status]).toEqual(['bad_request', 'fatal', 400]);
    expect(error.message).toContain('Token limit reached');
    expect(thinkingOf(message)).toBe('We need to respond to a greeting. The user');
    expect(message.usage).toMatchObject({ input: 43, output: 10, reasoning: 11 });
    expect(message.stopReason).toBe('error');
  });

  it('OpenRouter reasoning stream with comment keep-alives', async () => {
    const { message } = await replay('openai-compatible/openrouter-stream-reasoning.sse', { model: { provider: 'openrouter' } });
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(thinkingOf(message)).toBe('This is a simple arithmetic question. 2+2 equals 4.');
    expect(textOf(message)).toBe('2 + 2 = 4');
    expect(message.usage).toEqual({ input: 43, output: 36, cacheRead: 0, cacheWrite: 0, reasoning: 13, total: 79 });
    expect(message.stopReason).toBe('stop');
  });

  it('vLLM: tool header without arguments, then fragments', async () => {
    const { message } = await replay('openai-compatible/vllm-stream-tool-call.sse', { model: { provider: 'vllm' } });
    const [call] = toolCallsOf(message);
    expect([call?.id, call?.name, call?.arguments]).toEqual([
      'chatcmpl-tool-ca99dda515524c6abe47d1ea22813507',
      'run_command',
      { command: 'ls' },
    ]);
    expect(message.stopReason).toBe('tool_use');
  });
});

const TESTED = [
  'openai-chat/stream-text-usage.sse',
  'openai-chat/stream-text-usage-cached-tokens.sse',
  'openai-chat/stream-single-tool-call-many-arg-chunks.sse',
  'openai-chat/stream-parallel-tool-calls.sse',
  'openai-chat/stream-tool-call-long-args.sse',
  'openai-chat/stream-tool-call-then-text-turn2.sse',
  'openai-chat/stream-refusal.sse',
  'openai-chat/stream-finish-length-reasoning.sse',
  'openai-chat/nonstream-text-reasoning-tokens.json',
  'openai-chat/nonstream-parallel-tool-calls.json',
  'openai-chat/nonstream-refusal.json',
  'openai-chat/error-401-invalid-api-key.json',
  'openai-chat/error-404-model-not-found.json',
  'openai-chat/error-400-unsupported-parameter.json',
  'openai-chat/error-400-unsupported-value-developer-role.json',
  'openai-chat/error-503-upstream-connect-text-plain.txt',
  'openai-compatible/crusoe-llama-stream-usage.sse',
  'openai-compatible/deepseek-stream-reasoning-tool-call.chunks.jsonl',
  'openai-compatible/groq-stream-tool-use-failed-error-event.sse',
  'openai-compatible/groq-error-400-tool-use-failed.json',
  'openai-compatible/ollama-cloud-nonstream-tool-call.json',
  'openai-compatible/ollama-nonstream-reasoning-field.json',
  'openai-compatible/ollama-nonstream-text.json',
  'openai-compatible/ollama-stream-parallel-tool-calls-one-chunk-each.sse',
  'openai-compatible/openrouter-error-429-upstream-rate-limited.json',
  'openai-compatible/openrouter-stream-error-in-chunk.sse',
  'openai-compatible/openrouter-stream-reasoning.sse',
  'openai-compatible/vllm-stream-tool-call.sse',
];
