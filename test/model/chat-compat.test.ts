// The compatibility record of a Chat Completions server: detected from the base URL,
// declared per model in configuration, and corrected by what the server refused.
import { afterEach, describe, expect, it } from 'vitest';
import { forgetLearnedQuirks, learnedQuirks } from '../../src/model/learned-quirks.js';
import { chatCompat, detectChatCompat } from '../../src/model/providers/chat-compat.js';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import { resolveModel } from '../../src/model/resolve.js';
import type { Message } from '../../src/model/types.js';
import { Agent } from '../../src/loop/agent.js';
import { sseBody, startServer } from './fixture-server.js';
import type { TestServer } from './fixture-server.js';
import { collect, testModel, textOf, thinkingOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  forgetLearnedQuirks();
  await server?.close();
  server = undefined;
});

const SSE = { 'content-type': 'text/event-stream' };
const answer = (content: string) => ({
  headers: SSE,
  body: sseBody([
    { id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: 'stop' }] },
  ]),
});

describe('the Chat Completions compatibility record', () => {
  it('is detected from the base URL: api.openai.com takes max_completion_tokens, other servers max_tokens', () => {
    expect(detectChatCompat('openai', 'https://api.openai.com/v1')).toEqual({
      streamUsage: true,
      maxTokensField: 'max_completion_tokens',
      reasoningEffort: true,
      thinkingFormat: 'think-tags',
      toolCallIds: 'any',
    });
    expect(detectChatCompat('openai', 'https://api.openai.com.evil.example/v1').maxTokensField).toBe('max_tokens');
    expect(detectChatCompat('ollama', 'http://127.0.0.1:11434/v1').maxTokensField).toBe('max_tokens');
  });

  it('declared per model in configuration, it decides what goes on the wire', async () => {
    server = await startServer([answer('<think>hm</think>Hello'), answer('<think>hm</think>Hello')]);
    const declared = resolveModel('mylab/m1', {
      providers: { mylab: { baseUrl: server.baseUrl, compat: { maxTokensField: 'max_completion_tokens', streamUsage: false } } },
      compat: { reasoningEffort: false, thinkingFormat: 'fields' },
    });
    expect(declared.compat).toEqual({
      maxTokensField: 'max_completion_tokens',
      streamUsage: false,
      reasoningEffort: false,
      thinkingFormat: 'fields',
    });
    const { message } = await collect(
      streamOpenAIChat(declared, { messages: [{ role: 'user', content: 'hi' }] }, { maxTokens: 100, thinking: 'high' }),
    );
    const body = server.requests[0]?.json as Record<string, unknown>;
    expect(body.max_completion_tokens).toBe(100);
    expect(body).not.toHaveProperty('max_tokens');
    expect(body).not.toHaveProperty('stream_options');
    expect(body).not.toHaveProperty('reasoning_effort');
    // `fields`: the text is kept as the server wrote it.
    expect(textOf(message)).toBe('<think>hm</think>Hello');
    // Undeclared, the same server gets the generic record.
    const plain = testModel(server.baseUrl, { id: 'm2' });
    const second = await collect(
      streamOpenAIChat(plain, { messages: [{ role: 'user', content: 'hi' }] }, { maxTokens: 100, thinking: 'high' }),
    );
    const body2 = server.requests[1]?.json as Record<string, unknown>;
    expect([body2.max_tokens, body2.reasoning_effort, body2.stream_options]).toEqual([100, 'high', { include_usage: true }]);
    expect([thinkingOf(second.message), textOf(second.message)]).toEqual(['hm', 'Hello']);
  });

  it("the mistral id rule rewrites other providers' tool call ids, in calls and results alike", async () => {
    server = await startServer([answer('ok')]);
    const model = testModel(server.baseUrl, { compat: { toolCallIds: 'mistral' } });
    const messages: Message[] = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'toolu_01ABCdef_long-id', name: 'f', arguments: {}, rawArguments: '{}' }],
        stopReason: 'tool_use',
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 },
        provider: 'anthropic',
        model: 'claude',
        api: 'anthropic-messages',
      },
      { role: 'tool', toolCallId: 'toolu_01ABCdef_long-id', toolName: 'f', content: [{ type: 'text', text: 'r' }], isError: false },
    ];
    await collect(streamOpenAIChat(model, { messages }));
    const sent = (server.requests[0]?.json as { messages: Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }> }).messages;
    const id = sent[1]?.tool_calls?.[0]?.id;
    expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(sent[2]?.tool_call_id).toBe(id);
  });

  it('what a server refused wins over what was declared, in one cache keyed by base URL and model', async () => {
    server = await startServer([
      {
        status: 400,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          error: {
            message: "Unknown parameter: 'stream_options'",
            type: 'invalid_request_error',
            param: 'stream_options',
            code: 'unknown_parameter',
          },
        }),
      },
      answer('ok'),
    ]);
    const model = testModel(server.baseUrl, { compat: { streamUsage: true } });
    expect(chatCompat(model).streamUsage).toBe(true);
    const { message } = await collect(streamOpenAIChat(model, { messages: [{ role: 'user', content: 'hi' }] }));
    expect(textOf(message)).toBe('ok');
    expect(chatCompat(model).streamUsage).toBe(false);
    // stream_options is the whole server's: kept under the base URL alone.
    expect(learnedQuirks(server.baseUrl, 'any-model')).toEqual({ streamUsage: false });
    expect(learnedQuirks('http://127.0.0.1:1/v1', 'gpt-4o')).toBeUndefined();
  });

  it('a quirk rein does not know, or a value it does not take, is refused naming what to write', () => {
    expect(() => resolveModel('ollama/x', { compat: { maxTokens: 'max_tokens' } as never })).toThrow(
      /compat\.maxTokens is not a quirk rein knows: use streamUsage, maxTokensField/,
    );
    expect(() => resolveModel('ollama/x', { compat: { maxTokensField: 'max_output_tokens' } as never })).toThrow(
      /compat\.maxTokensField must be "max_tokens" or "max_completion_tokens", not "max_output_tokens"/,
    );
    expect(() =>
      resolveModel('lab/x', { providers: { lab: { baseUrl: 'http://127.0.0.1:1/v1', compat: { streamUsage: 'no' } as never } } }),
    ).toThrow(/providers\.lab\.compat\.streamUsage must be true or false/);
    expect(() => new Agent({ model: 'ollama/x', modelConfig: { compat: { toolCallIds: 'short' } as never } })).toThrow(
      /modelConfig\.compat\.toolCallIds must be "any" or "mistral"/,
    );
  });
});
