import { afterEach, describe, expect, it } from 'vitest';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import { buildChatBody, buildChatRequest, chatHeaders, chatTarget, chatUrl } from '../../src/model/providers/openai-chat-request.js';
import type { Context } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';
import { fixtureResponse, startServer } from './fixture-server.js';
import type { TestServer } from './fixture-server.js';
import { collect, testModel } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const context: Context = {
  system: 'You are terse.',
  messages: [
    { role: 'user', content: 'List the files.' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should call ls.', signature: 'sig' },
        { type: 'text', text: 'Looking.' },
        { type: 'tool_call', id: 'call_1', name: 'ls', arguments: { dir: '.' }, rawArguments: '{"dir": "."}' },
        { type: 'tool_call', id: 'call_2', name: 'pwd', arguments: {}, rawArguments: '' },
      ],
      stopReason: 'tool_use',
      usage: emptyUsage(),
      provider: 'openai',
      model: 'gpt-4o',
    },
    {
      role: 'tool',
      toolCallId: 'call_1',
      toolName: 'ls',
      content: [
        { type: 'text', text: 'a.txt' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
      isError: false,
    },
    { role: 'tool', toolCallId: 'call_2', toolName: 'pwd', content: [{ type: 'text', text: '/tmp' }], isError: false },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this?' },
        { type: 'image', data: 'iVBOR', mimeType: 'image/png' },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
    },
  ],
  tools: [{ name: 'ls', description: 'List files', parameters: { type: 'object', properties: { dir: { type: 'string' } } } }],
};

describe('Chat Completions request', () => {
  it('the body text built from cached per-message JSON is exactly the JSON of the request object', () => {
    for (const model of [testModel('http://127.0.0.1:1/v1'), testModel('https://api.openai.com/v1')]) {
      for (const options of [
        {},
        { stream: false },
        { maxTokens: 100, temperature: 0.2 },
        { maxTokens: 100, thinking: 'medium' as const, temperature: 1 },
      ]) {
        const expected = JSON.stringify(buildChatRequest(model, context, options));
        expect(buildChatBody(model, context, options)).toBe(expected);
        // Second time round every message comes from the cache: still the same text.
        expect(buildChatBody(model, context, options)).toBe(expected);
      }
    }
    const noSystem = { messages: context.messages };
    expect(buildChatBody(testModel('http://127.0.0.1:1/v1'), noSystem)).toBe(
      JSON.stringify(buildChatRequest(testModel('http://127.0.0.1:1/v1'), noSystem)),
    );
  });

  it('maps every message kind', () => {
    const request = buildChatRequest(testModel('http://127.0.0.1:1/v1'), context, { maxTokens: 100, temperature: 0.2 });
    expect(request.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'List the files.' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{"dir": "."}' } },
          { id: 'call_2', type: 'function', function: { name: 'pwd', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.txt\n[image]' },
      { role: 'tool', tool_call_id: 'call_2', content: '/tmp' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
        ],
      },
      { role: 'user', content: 'one\ntwo' },
    ]);
    expect(request.tools).toEqual([
      { type: 'function', function: { name: 'ls', description: 'List files', parameters: context.tools?.[0]?.parameters } },
    ]);
    expect(request).toMatchObject({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 100,
      temperature: 0.2,
    });
  });

  it('drops thinking, aborted and empty assistant turns and an empty tools list; content null beside tool calls', () => {
    const request = buildChatRequest(
      testModel('http://127.0.0.1:1/v1'),
      {
        messages: [
          {
            role: 'assistant',
            content: [{ type: 'thinking', thinking: 'hmm' }],
            stopReason: 'aborted',
            usage: emptyUsage(),
            provider: 'openai',
            model: 'm',
          },
          {
            role: 'assistant',
            content: [{ type: 'tool_call', id: 'c', name: 'x', arguments: {}, rawArguments: '{}' }],
            stopReason: 'tool_use',
            usage: emptyUsage(),
            provider: 'openai',
            model: 'm',
          },
        ],
        tools: [],
      },
      { stream: false },
    );
    expect(request.messages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'x', arguments: '{}' } }] },
      // A call left without a result gets a synthetic one: every API rejects a dangling call.
      { role: 'tool', tool_call_id: 'c', content: expect.stringMatching(/tool "x" has no result/) },
    ]);
    expect(request).not.toHaveProperty('tools');
    expect(request).not.toHaveProperty('stream');
    expect(request).not.toHaveProperty('max_tokens');
  });

  it('a tool call’s signature goes back as its extra_content to the same model only, and only when it is a JSON object', () => {
    const extra = { google: { thought_signature: 'EjQKMgEM' }, other_vendor: { x: 1 } };
    const turn = (model: string, signature: string): Context['messages'] => [
      { role: 'user', content: 'compute' },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'function-call-1', name: 'calculate', arguments: {}, rawArguments: '{}', signature }],
        stopReason: 'tool_use',
        usage: emptyUsage(),
        provider: 'google',
        model,
        api: 'openai-chat',
      },
      { role: 'tool', toolCallId: 'function-call-1', toolName: 'calculate', content: [{ type: 'text', text: '42' }], isError: false },
    ];
    const gemini = testModel('http://127.0.0.1:1/v1', { provider: 'google', id: 'gemini-3-flash-preview' });
    const toolCalls = (messages: Context['messages']) => {
      const sent = buildChatRequest(gemini, { messages }).messages.find((m) => m.role === 'assistant');
      expect(buildChatBody(gemini, { messages })).toBe(JSON.stringify(buildChatRequest(gemini, { messages })));
      return sent?.role === 'assistant' ? sent.tool_calls : undefined;
    };
    const call = { id: 'function-call-1', type: 'function', function: { name: 'calculate', arguments: '{}' } };
    expect(toolCalls(turn('gemini-3-flash-preview', JSON.stringify(extra)))).toEqual([{ ...call, extra_content: extra }]);
    // Written by another model: the signature is dropped with the handoff.
    expect(toolCalls(turn('gemini-2.5-pro', JSON.stringify(extra)))).toEqual([call]);
    // Not JSON of an object (another API's signature): nothing to send.
    expect(toolCalls(turn('gemini-3-flash-preview', 'CiQBcsjafQ=='))).toEqual([call]);
  });

  it('sends max_completion_tokens to api.openai.com only', () => {
    const hosted = buildChatRequest(testModel('https://api.openai.com/v1'), { messages: [] }, { maxTokens: 50 });
    expect(hosted).toMatchObject({ max_completion_tokens: 50 });
    expect(hosted).not.toHaveProperty('max_tokens');
  });

  it('headers: bearer key when there is one, model headers last', () => {
    expect(chatHeaders(testModel('http://x/v1', { headers: { 'x-title': 'rein' } }))).toMatchObject({
      authorization: 'Bearer sk-test',
      'content-type': 'application/json',
      'x-title': 'rein',
    });
    expect(chatHeaders(testModel('http://x/v1', { apiKey: undefined }))).not.toHaveProperty('authorization');
  });

  it('POSTs the body and headers to {baseUrl}/chat/completions', async () => {
    server = await startServer([fixtureResponse('openai-chat/stream-text-usage.sse')]);
    await collect(streamOpenAIChat(testModel(`${server.baseUrl}/`, { headers: { 'x-extra': '1' } }), context));
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.headers['x-extra']).toBe('1');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.json).toEqual(JSON.parse(JSON.stringify(buildChatRequest(testModel(server.baseUrl), context))));
  });
});

describe('Chat Completions URL', () => {
  it('appends /chat/completions to the base path and keeps the base query after it (Azure OpenAI deployments)', () => {
    expect(chatUrl('https://api.openai.com/v1/').href).toBe('https://api.openai.com/v1/chat/completions');
    expect(chatUrl('https://x.openai.azure.com/openai/deployments/gpt4?api-version=2024-10-21').href).toBe(
      'https://x.openai.azure.com/openai/deployments/gpt4/chat/completions?api-version=2024-10-21',
    );
  });

  it('drops a fragment (it is never sent)', () => {
    expect(chatUrl('http://127.0.0.1:8080/v1#frag').href).toBe('http://127.0.0.1:8080/v1/chat/completions');
  });

  it('errors quote the URL without the user, password or secret parameters', () => {
    const target = chatTarget('http://alice:s3cret@gw.example/v1?api-version=2024-10-21&api-key=k-123');
    expect(target.href).toBe('http://alice:s3cret@gw.example/v1/chat/completions?api-version=2024-10-21&api-key=k-123');
    expect(target.errorUrl).toBe('http://gw.example/v1/chat/completions?api-version=2024-10-21');
  });
});
