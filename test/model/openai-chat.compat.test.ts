/**
 * OpenAI-compatible servers whose wire differs from OpenAI's in ways the recordings do not
 * show (llama.cpp, Ollama, Groq, Foundry Local, gateways), replayed byte for byte on a real
 * local HTTP server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import type { Message } from '../../src/model/types.js';
import { byteChunks, sseBody, startServer } from './fixture-server.js';
import type { ScriptedResponse, TestServer } from './fixture-server.js';
import { collect, expectWellFormed, lastError, testModel, textOf, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SSE = { 'content-type': 'text/event-stream' };
const JSON_TYPE = { 'content-type': 'application/json' };

async function run(responses: ScriptedResponse[], options: { stream?: boolean } = {}) {
  server = await startServer(responses);
  const result = await collect(streamOpenAIChat(testModel(server.baseUrl), { messages: [{ role: 'user', content: 'hi' }] }, options));
  expectWellFormed(result.events, result.message);
  return result;
}

// A tool call, then its finish chunk and usage, as the review's fake server sent them.
const TOOL_FRAMES = [
  'data: {"id":"chatcmpl-m1","object":"chat.completion.chunk","created":1764500000,"model":"test","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"calculate","arguments":""}}]},"finish_reason":null}]}\n\n',
  'data: {"id":"chatcmpl-m1","object":"chat.completion.chunk","created":1764500000,"model":"test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"expression\\":\\"17*23\\"}"}}]},"finish_reason":null}]}\n\n',
  'data: {"id":"chatcmpl-m1","object":"chat.completion.chunk","created":1764500000,"model":"test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n',
  'data: {"id":"chatcmpl-m1","object":"chat.completion.chunk","created":1764500000,"model":"test","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}\n\n',
  'data: [DONE]\n\n',
];

function expectTheToolCall(message: Awaited<ReturnType<typeof run>>['message']): void {
  expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([['call_1', 'calculate', { expression: '17*23' }]]);
  expect(message.usage.total).toBe(60);
}

describe('openai-chat: errors and empty answers inside a 200 stream', () => {
  const LLAMA_ERROR =
    'error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}\n\n';

  it("llama.cpp's `error:` field is read and classified (context_length), not dropped before [DONE]", async () => {
    const { events } = await run([{ headers: SSE, body: [LLAMA_ERROR, 'data: [DONE]\n\n'] }]);
    const error = lastError(events);
    expect([error.code, error.kind]).toEqual(['context_length', 'fatal']);
    expect(error.message).toContain('the request exceeds the available context size, try increasing it');
  });

  it('finds the `error:` field at a line start when it arrives split over chunks, after content, or last without its blank line', async () => {
    const body =
      sseBody([{ choices: [{ index: 0, delta: { content: 'Part' }, finish_reason: null }] }], false) + LLAMA_ERROR + 'data: [DONE]\n\n';
    const split = await run([{ headers: SSE, body: byteChunks(body, 3) }]);
    expect(lastError(split.events).code).toBe('context_length');
    expect(textOf(split.message)).toBe('Part');
    await server?.close();
    const last = await run([{ headers: SSE, body: 'error: {"code":500,"message":"slot unavailable","type":"server_error"}' }]);
    expect(lastError(last.events)).toMatchObject({ code: 'server_error', kind: 'transient' });
    await server?.close();
    const text = await run([{ headers: SSE, body: 'error: out of memory\n\ndata: [DONE]\n\n' }]);
    expect(lastError(text.events).message).toContain('out of memory');
  });

  it('a stream that carried nothing before [DONE] is a transient server_error, not an empty answer', async () => {
    const { events, message } = await run([{ headers: SSE, body: 'data: [DONE]\n\n' }]);
    expect(lastError(events)).toMatchObject({ code: 'server_error', kind: 'transient' });
    expect(lastError(events).message).toContain('carried nothing');
    expect(message.stopReason).toBe('error');
    await server?.close();
    // A role-only delta and a usage chunk are not an answer either.
    const roleOnly = sseBody([
      { choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { choices: [], usage: { prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 } },
    ]);
    expect(lastError((await run([{ headers: SSE, body: roleOnly }])).events).code).toBe('server_error');
  });

  it('a bare error object as a frame (vLLM `object: "error"`, FastAPI `detail`) ends the stream with that error', async () => {
    const vllm = {
      object: 'error',
      message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
      type: 'BadRequestError',
      param: null,
      code: 400,
    };
    const overflow = await run([{ headers: SSE, body: sseBody([vllm]) }]);
    expect(lastError(overflow.events).code).toBe('context_length');
    expect(lastError(overflow.events).message).toContain('maximum context length is 4096 tokens');
    await server?.close();
    const detail = await run([{ headers: SSE, body: sseBody([{ detail: 'Internal server error: CUDA out of memory' }]) }]);
    expect(lastError(detail.events)).toMatchObject({ code: 'server_error', kind: 'transient' });
    expect(lastError(detail.events).message).toContain('CUDA out of memory');
  });

  it('a bare error object as the 200 JSON body of a non-streamed request is that error', async () => {
    const { events } = await run([{ headers: JSON_TYPE, body: JSON.stringify({ detail: 'Internal server error: CUDA out of memory' }) }], {
      stream: false,
    });
    expect(lastError(events)).toMatchObject({ code: 'server_error', kind: 'transient' });
    expect(lastError(events).message).toContain('CUDA out of memory');
  });

  it('an empty answer with a finish_reason is still an answer', async () => {
    const { message } = await run([
      { headers: SSE, body: sseBody([{ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'stop' }] }]) },
    ]);
    expect([message.stopReason, message.content]).toEqual(['stop', []]);
  });
});

describe('openai-chat: tool calls and usage of other servers', () => {
  it('Ollama / LiteLLM ollama_chat: parallel calls all with index 0 but their own ids are separate calls', async () => {
    const body = [
      'data: {"id":"chatcmpl-417","object":"chat.completion.chunk","created":1764500000,"model":"qwen2.5:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_aaaa1111","index":0,"type":"function","function":{"name":"calculate","arguments":"{\\"expression\\":\\"17*23\\"}"}}]},"finish_reason":null}]}\n\n',
      'data: {"id":"chatcmpl-417","object":"chat.completion.chunk","created":1764500000,"model":"qwen2.5:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_bbbb2222","index":0,"type":"function","function":{"name":"calculate","arguments":"{\\"expression\\":\\"2+2\\"}"}}]},"finish_reason":null}]}\n\n',
      'data: {"id":"chatcmpl-417","object":"chat.completion.chunk","created":1764500000,"model":"qwen2.5:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}\n\n',
      'data: {"id":"chatcmpl-417","object":"chat.completion.chunk","created":1764500000,"model":"qwen2.5:7b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":180,"completion_tokens":40,"total_tokens":220}}\n\n',
      'data: [DONE]\n\n',
    ];
    const { message, events } = await run([{ headers: SSE, body }]);
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_aaaa1111', 'calculate', { expression: '17*23' }],
      ['call_bbbb2222', 'calculate', { expression: '2+2' }],
    ]);
    expect(events.filter((e) => e.type === 'tool_call_start')).toHaveLength(2);
  });

  it('a named delta repeating the same id, or continuations with null id and name, stay one call', async () => {
    const call = (id: string | null, name: string | null, args: string) => ({
      choices: [
        { index: 0, delta: { tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: args } }] }, finish_reason: null },
      ],
    });
    const body = sseBody([
      call('call_x', 'read', '{"pa'),
      call('call_x', 'read', 'th":'),
      call(null, null, '"a"}'),
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(toolCallsOf(message).map((c) => [c.id, c.arguments])).toEqual([['call_x', { path: 'a' }]]);
  });

  it('a second header at the first call’s index, its arguments then at a new index without id or name, is one call (agno#8880)', async () => {
    const call = (index: number, id: string | undefined, name: string | undefined, args: string) => ({
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [{ index, ...(id ? { id, type: 'function' } : {}), function: { ...(name ? { name } : {}), arguments: args } }],
          },
          finish_reason: null,
        },
      ],
    });
    const body = sseBody([
      call(0, 'call_1', 'calculate', ''),
      call(0, undefined, undefined, '{"expression":'),
      call(0, undefined, undefined, '"1+1"}'),
      call(0, 'call_2', 'calculate', ''),
      call(1, undefined, undefined, '{"expression":'),
      call(1, undefined, undefined, '"2+2"}'),
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(toolCallsOf(message).map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_1', 'calculate', { expression: '1+1' }],
      ['call_2', 'calculate', { expression: '2+2' }],
    ]);
  });

  it('older TGI: tool_calls as one object, not an array, with null arguments and finish_reason eos_token', async () => {
    const delta = (fn: Record<string, unknown>) => ({
      choices: [
        { index: 0, delta: { role: 'assistant', tool_calls: { index: 0, id: '', type: 'function', function: fn } }, finish_reason: null },
      ],
    });
    const body = sseBody([
      delta({ name: 'calculate', arguments: null }),
      delta({ name: null, arguments: '{"expression":"6*7"}' }),
      { choices: [{ index: 0, delta: {}, finish_reason: 'eos_token' }] },
    ]);
    const { message } = await run([{ headers: SSE, body }]);
    expect(toolCallsOf(message).map((c) => [c.name, c.arguments])).toEqual([['calculate', { expression: '6*7' }]]);
    expect(message.stopReason).toBe('tool_use');
    await server?.close();
    const completion = {
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: { id: 'call_1', type: 'function', function: { name: 'calculate', arguments: '{"expression":"1"}' } },
          },
          finish_reason: 'eos_token',
        },
      ],
    };
    const whole = await run([{ headers: JSON_TYPE, body: JSON.stringify(completion) }], { stream: false });
    expect(toolCallsOf(whole.message).map((c) => [c.id, c.arguments])).toEqual([['call_1', { expression: '1' }]]);
  });

  it('arguments encoded twice (a JSON string of the object) are read through in the parsed arguments; the raw text stays as sent', async () => {
    const raw = JSON.stringify(JSON.stringify({ expression: '6*7' }));
    const body = sseBody([
      {
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'calculate', arguments: raw } }] },
            finish_reason: null,
          },
        ],
      },
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
    ]);
    const { message, events } = await run([{ headers: SSE, body }]);
    const end = events.find((e) => e.type === 'tool_call_end');
    expect(end?.type === 'tool_call_end' && end.toolCall.arguments).toEqual({ expression: '6*7' });
    expect(toolCallsOf(message).map((c) => c.rawArguments)).toEqual([raw]);
  });

  it('Gemini 3: a call’s extra_content (thought_signature) is kept and sent back with the call to the same model', async () => {
    const SIG = 'EjQKMgEMOdbHJChLX75QUCJjyYlmSIGNATURE';
    const extra = { google: { thought_signature: SIG } };
    const first = sseBody([
      {
        choices: [
          {
            delta: {
              role: 'assistant',
              tool_calls: [
                {
                  extra_content: extra,
                  function: { arguments: '{"expression":"6*7"}', name: 'calculate' },
                  id: 'function-call-1',
                  type: 'function',
                },
              ],
            },
            index: 0,
          },
        ],
        object: 'chat.completion.chunk',
      },
      {
        choices: [{ delta: { role: 'assistant' }, finish_reason: 'stop', index: 0 }],
        object: 'chat.completion.chunk',
        usage: { completion_tokens: 20, prompt_tokens: 100, total_tokens: 120 },
      },
    ]);
    const { message } = await run([
      { headers: SSE, body: first },
      { headers: SSE, body: sseBody([{ choices: [{ index: 0, delta: { content: 'It is 42.' }, finish_reason: 'stop' }] }]) },
    ]);
    const [call] = toolCallsOf(message);
    expect(call).toMatchObject({ id: 'function-call-1', name: 'calculate', arguments: { expression: '6*7' } });
    expect(JSON.parse(call?.signature ?? '')).toEqual(extra);
    expect(message.stopReason).toBe('tool_use');
    const history: Message[] = [
      { role: 'user', content: 'hi' },
      message,
      { role: 'tool', toolCallId: 'function-call-1', toolName: 'calculate', content: [{ type: 'text', text: '42' }], isError: false },
    ];
    const second = await collect(streamOpenAIChat(testModel(server?.baseUrl ?? ''), { messages: history }));
    expect(textOf(second.message)).toBe('It is 42.');
    const sent = (server?.requests[1]?.json as { messages: Array<{ role: string; tool_calls?: unknown[] }> }).messages;
    expect(sent.find((m) => m.role === 'assistant')?.tool_calls).toEqual([
      { id: 'function-call-1', type: 'function', function: { name: 'calculate', arguments: '{"expression":"6*7"}' }, extra_content: extra },
    ]);
  });

  it('older Groq: usage only in x_groq.usage of the finish chunk', async () => {
    const body = [
      'data: {"id":"chatcmpl-9f8e7d6c-5b4a-3210","object":"chat.completion.chunk","created":1764500000,"model":"llama-3.3-70b-versatile","system_fingerprint":"fp_3f3b593e33","x_groq":{"id":"req_01jk3m4n5p6q7r8s9t0v"},"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null,"logprobs":null}]}\n\n',
      'data: {"id":"chatcmpl-9f8e7d6c-5b4a-3210","object":"chat.completion.chunk","created":1764500000,"model":"llama-3.3-70b-versatile","system_fingerprint":"fp_3f3b593e33","choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_abcd1234","type":"function","function":{"name":"calculate","arguments":"{\\"expression\\":\\"17*23\\"}"},"index":0}]},"finish_reason":null,"logprobs":null}]}\n\n',
      'data: {"id":"chatcmpl-9f8e7d6c-5b4a-3210","object":"chat.completion.chunk","created":1764500000,"model":"llama-3.3-70b-versatile","system_fingerprint":"fp_3f3b593e33","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls","logprobs":null}],"x_groq":{"id":"req_01jk3m4n5p6q7r8s9t0v","usage":{"queue_time":0.02,"prompt_tokens":400,"prompt_time":0.01,"completion_tokens":30,"completion_time":0.05,"total_tokens":430,"total_time":0.06}}}\n\n',
      'data: [DONE]\n\n',
    ];
    const { message } = await run([{ headers: SSE, body }]);
    expect(message.usage).toEqual({ input: 400, output: 30, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 430 });
  });
});

describe('openai-chat: bodies whose label does not match what they are', () => {
  it('an event stream labelled application/json (Foundry Local) is read as events', async () => {
    const { message } = await run([{ headers: JSON_TYPE, body: TOOL_FRAMES }]);
    expectTheToolCall(message);
    expect(server?.requests).toHaveLength(1);
  });

  it('an event stream labelled application/json still streams: deltas arrive before the body ends', async () => {
    server = await startServer([
      {
        headers: JSON_TYPE,
        body: [sseBody([{ choices: [{ index: 0, delta: { content: 'first' }, finish_reason: null }] }], false)],
        hold: true,
      },
    ]);
    const controller = new AbortController();
    const stream = streamOpenAIChat(testModel(server.baseUrl), { messages: [] }, { signal: controller.signal });
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(event.type);
      if (event.type === 'text_delta') controller.abort(); // the body is still open
    }
    expect(seen).toContain('text_delta');
    expect((await stream.result()).stopReason).toBe('aborted');
  });

  it('a JSON completion sent as text/plain or text/event-stream to a streamed request is read as the answer', async () => {
    const completion = JSON.stringify({
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'test',
      choices: [{ index: 0, message: { role: 'assistant', content: '17 * 23 = 391.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
    });
    for (const type of ['text/plain', 'text/event-stream']) {
      const { message } = await run([{ headers: { 'content-type': type }, body: completion }]);
      expect([type, textOf(message), message.usage.total]).toEqual([type, '17 * 23 = 391.', 10]);
      await server?.close();
    }
  });

  it('a bare JSON error object sent as text/event-stream is classified with the server’s message', async () => {
    const body = '{"error":{"message":"Invalid API key provided","type":"invalid_request_error","code":"invalid_api_key"}}\n';
    const { events } = await run([{ headers: SSE, body }]);
    const error = lastError(events);
    expect([error.code, error.kind]).toEqual(['auth', 'fatal']);
    expect(error.message).toContain('Invalid API key provided');
  });

  it('a leading UTF-8 byte order mark does not cost the first event, whole or split over chunks', async () => {
    const body = ['\uFEFF' + TOOL_FRAMES[0], ...TOOL_FRAMES.slice(1)];
    expectTheToolCall((await run([{ headers: SSE, body }])).message);
    await server?.close();
    expectTheToolCall((await run([{ headers: SSE, body: byteChunks(body.join(''), 1) }])).message);
    await server?.close();
    const completion = '\uFEFF{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}';
    expect(textOf((await run([{ headers: JSON_TYPE, body: completion }], { stream: false })).message)).toBe('ok');
  });

  it('an event stream split before its first field name is told apart from JSON once the name is whole', async () => {
    const { message } = await run([{ headers: JSON_TYPE, body: byteChunks(`\n: keep-alive\n\n${TOOL_FRAMES.join('')}`, 2) }]);
    expectTheToolCall(message);
    await server?.close();
    const { events } = await run([{ headers: JSON_TYPE, body: 'da' }]);
    expect(lastError(events)).toMatchObject({ code: 'invalid_response', kind: 'transient' });
  });
});
