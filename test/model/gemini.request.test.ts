/**
 * The Gemini request: contents, roles, tool results, thought signatures, handoff from other
 * providers, tools, generationConfig, URL and headers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamGemini } from '../../src/model/providers/gemini.js';
import {
  SKIP_SIGNATURE,
  buildGeminiBody,
  geminiGeneration,
  geminiHeaders,
  geminiTarget,
  geminiUrl,
  generationConfig,
} from '../../src/model/providers/gemini-request.js';
import type { AssistantMessage, Context, Message, ModelRef, ToolCall } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';
import { fixtureResponse, startServer } from './fixture-server.js';
import type { TestServer } from './fixture-server.js';
import { geminiModel } from './gemini-helpers.js';
import { collect, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Part = Record<string, any>; // `any`: the assertions walk into request JSON
type Content = { role: 'user' | 'model'; parts: Part[] };

function body(model: ModelRef, context: Context, options = {}): { contents: Content[]; [key: string]: any } {
  return JSON.parse(buildGeminiBody(model, context, options));
}

function call(id: string, name: string, args: Record<string, unknown>, signature?: string): ToolCall {
  const c: ToolCall = { type: 'tool_call', id, name, arguments: args, rawArguments: JSON.stringify(args) };
  if (signature !== undefined) c.signature = signature;
  return c;
}

function assistant(content: AssistantMessage['content'], from: Partial<AssistantMessage> = {}): AssistantMessage {
  const stopReason = content.some((c) => c.type === 'tool_call') ? 'tool_use' : 'stop';
  return {
    role: 'assistant',
    content,
    stopReason,
    usage: emptyUsage(),
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    api: 'gemini',
    ...from,
  };
}

function result(toolCallId: string, toolName: string, text: string, isError = false): Message {
  return { role: 'tool', toolCallId, toolName, content: [{ type: 'text', text }], isError };
}

/** Valid for Gemini: roles alternate, the first is user, and every model turn with calls is answered in the next content, call by call. */
function expectValidHistory(contents: Content[]): void {
  expect(contents[0]?.role).toBe('user');
  for (let i = 1; i < contents.length; i++) expect(contents[i]?.role).not.toBe(contents[i - 1]?.role);
  for (const [i, content] of contents.entries()) {
    expect(content.parts.length).toBeGreaterThan(0);
    const calls = content.parts.filter((p) => p.functionCall).map((p) => p.functionCall.name);
    if (content.role !== 'model' || calls.length === 0) continue;
    const answers = (contents[i + 1]?.parts ?? []).filter((p) => p.functionResponse).map((p) => p.functionResponse.name);
    expect(answers).toEqual(calls);
  }
}

const LOCAL = 'http://127.0.0.1:9';

describe('gemini request body', () => {
  it('system instruction, user text and images, and no generationConfig when nothing is set', () => {
    const json = body(geminiModel(LOCAL), {
      system: 'You are terse.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', data: 'iVBOR', mimeType: 'image/png' },
            { type: 'text', text: '' },
          ],
        },
      ],
    });
    expect(json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: 'iVBOR' } }] }],
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
    });
  });

  it('tool results go as functionResponse parts in one user content, in call order, output or error', () => {
    const turn = assistant([{ type: 'text', text: 'Looking.' }, call('call_a', 'ls', { dir: '.' }), call('call_b', 'cat', { path: 'x' })]);
    const json = body(geminiModel(LOCAL), {
      messages: [
        { role: 'user', content: 'List and read.' },
        turn,
        // Results written out of order (b finished first): sent in the order of the calls.
        result('call_b', 'cat', 'no such file', true),
        result('call_a', 'ls', 'a.txt\nb.txt'),
        { role: 'user', content: 'Thanks. And now?' },
      ],
    });
    expect(json.contents).toEqual([
      { role: 'user', parts: [{ text: 'List and read.' }] },
      {
        role: 'model',
        parts: [
          { text: 'Looking.' },
          { functionCall: { name: 'ls', args: { dir: '.' } } },
          { functionCall: { name: 'cat', args: { path: 'x' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'ls', response: { output: 'a.txt\nb.txt' } } },
          { functionResponse: { name: 'cat', response: { error: 'no such file' } } },
          // The next user message joins the same content: roles must alternate.
          { text: 'Thanks. And now?' },
        ],
      },
    ]);
    expectValidHistory(json.contents);
  });

  it('thought signatures go back on their parts to the model that wrote them, and only to it', () => {
    const own = assistant([
      { type: 'thinking', thinking: 'The user wants the country.', signature: 'sig-thought' },
      { type: 'text', text: 'Let me check.', signature: 'sig-text' },
      call('call_1', 'get_country', {}, 'sig-call'),
      call('call_2', 'get_time', {}),
    ]);
    const context: Context = {
      messages: [
        { role: 'user', content: 'Where am I?' },
        own,
        result('call_1', 'get_country', 'Mexico'),
        result('call_2', 'get_time', 'noon'),
      ],
    };
    const same = body(geminiModel(LOCAL, 'gemini-2.5-flash'), context);
    expect(same.contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'The user wants the country.', thought: true, thoughtSignature: 'sig-thought' },
        { text: 'Let me check.', thoughtSignature: 'sig-text' },
        { functionCall: { name: 'get_country', args: {} }, thoughtSignature: 'sig-call' },
        { functionCall: { name: 'get_time', args: {} } },
      ],
    });
    // Another Gemini model: its thinking is plain text and no signature is sent.
    const other = body(geminiModel(LOCAL, 'gemini-2.5-pro'), context);
    expect(other.contents[1]?.parts).toEqual([
      { text: 'The user wants the country.' },
      { text: 'Let me check.' },
      { functionCall: { name: 'get_country', args: {} } },
      { functionCall: { name: 'get_time', args: {} } },
    ]);
    expect(JSON.stringify(other)).not.toContain('sig-');
  });

  it('Gemini 3: the first call of a turn without any signature gets the documented placeholder', () => {
    const foreign = assistant([call('call_1', 'a', {}), call('call_2', 'b', {})], { model: 'gemini-2.5-flash' });
    const own = assistant([call('call_3', 'c', {}, 'real-sig'), call('call_4', 'd', {})], { model: 'gemini-3-pro-preview' });
    const json = body(geminiModel(LOCAL, 'gemini-3-pro-preview'), {
      messages: [
        { role: 'user', content: 'go' },
        foreign,
        result('call_1', 'a', '1'),
        result('call_2', 'b', '2'),
        own,
        result('call_3', 'c', '3'),
        result('call_4', 'd', '4'),
      ],
    });
    const signatures = json.contents.filter((c) => c.role === 'model').map((c) => c.parts.map((p) => p.thoughtSignature));
    expect(signatures).toEqual([
      [SKIP_SIGNATURE, undefined],
      ['real-sig', undefined],
    ]);
    // Older models validate nothing: no placeholder.
    const older = body(geminiModel(LOCAL, 'gemini-2.5-flash-lite'), {
      messages: [{ role: 'user', content: 'go' }, foreign, result('call_1', 'a', '1'), result('call_2', 'b', '2')],
    });
    expect(JSON.stringify(older)).not.toContain('thoughtSignature');
  });

  it('a history from Anthropic (toolu_ ids, signed and redacted thinking) and OpenAI (call_ ids) continues validly', () => {
    const messages: Message[] = [
      { role: 'user', content: 'Find the weather in two cities.' },
      assistant(
        [
          { type: 'thinking', thinking: 'I will call the tool twice.', signature: 'EqQBCkYIBxgCKkB…anthropic' },
          { type: 'thinking', thinking: '', redacted: true, signature: 'redacted-blob' },
          { type: 'text', text: 'Checking both.' },
          call('toolu_01A09q90qw90lq917835lq9', 'weather', { city: 'Paris' }),
          call('toolu_01B7x8y9z', 'weather', { city: 'Oslo' }),
        ],
        { provider: 'anthropic', model: 'claude-sonnet-4-5', api: 'anthropic-messages' },
      ),
      result('toolu_01A09q90qw90lq917835lq9', 'weather', '18°C'),
      // The Oslo result never arrived (the run was interrupted): a synthetic error answers it.
      { role: 'user', content: 'Now convert to Fahrenheit.' },
      assistant([call('call_kz1qLLRsugXwWiQMeH9oFAep', 'convert', { c: 18 })], { provider: 'openai', model: 'gpt-4o', api: 'openai-chat' }),
      result('call_kz1qLLRsugXwWiQMeH9oFAep', 'convert', '64.4°F'),
      // An aborted turn is not replayed.
      assistant([{ type: 'text', text: 'The answ' }], { provider: 'openai', model: 'gpt-4o', api: 'openai-chat', stopReason: 'aborted' }),
      { role: 'user', content: 'Go on.' },
    ];
    for (const id of ['gemini-2.5-flash', 'gemini-3-pro-preview']) {
      const json = body(geminiModel(LOCAL, id), {
        messages,
        tools: [{ name: 'weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
      });
      expectValidHistory(json.contents);
      const text = JSON.stringify(json);
      for (const leaked of ['toolu_', 'call_kz1', 'anthropic', 'redacted-blob', 'The answ']) expect(text).not.toContain(leaked);
      expect(json.contents[1]?.parts.slice(0, 2)).toEqual([{ text: 'I will call the tool twice.' }, { text: 'Checking both.' }]);
      const responses = json.contents[2]?.parts.filter((p) => p.functionResponse).map((p) => p.functionResponse);
      expect(responses?.[0]).toEqual({ name: 'weather', response: { output: '18°C' } });
      expect(responses?.[1]?.response.error).toMatch(/has no result/);
      expect(json.contents.at(-1)).toEqual({
        role: 'user',
        parts: [{ functionResponse: { name: 'convert', response: { output: '64.4°F' } } }, { text: 'Go on.' }],
      });
      const placeholders = text.split(SKIP_SIGNATURE).length - 1;
      expect(placeholders).toBe(id.startsWith('gemini-3') ? 2 : 0);
    }
  });

  it('images in tool results: inside the functionResponse on Gemini 3, beside it before', () => {
    const messages: Message[] = [
      { role: 'user', content: 'Screenshot please.' },
      assistant([call('call_1', 'screenshot', {})], { model: 'gemini-3-flash-preview' }),
      {
        role: 'tool',
        toolCallId: 'call_1',
        toolName: 'screenshot',
        content: [
          { type: 'text', text: 'taken' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
        isError: false,
      },
    ];
    const image = { inlineData: { mimeType: 'image/png', data: 'AAAA' } };
    expect(body(geminiModel(LOCAL, 'gemini-3-flash-preview'), { messages }).contents[2]?.parts).toEqual([
      { functionResponse: { name: 'screenshot', response: { output: 'taken' }, parts: [image] } },
    ]);
    expect(body(geminiModel(LOCAL, 'gemini-2.5-flash'), { messages }).contents[2]?.parts).toEqual([
      { functionResponse: { name: 'screenshot', response: { output: 'taken' } } },
      image,
    ]);
  });

  it('tools: JSON Schema in parametersJsonSchema from 2.5 on, converted parameters before', () => {
    const parameters = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { path: { type: 'string', description: 'File path' }, limit: { type: ['integer', 'null'] } },
      required: ['path'],
      additionalProperties: false,
    };
    const tools = [
      { name: 'read', description: 'Read a file', parameters },
      { name: 'now', description: 'The time', parameters: { type: 'object', properties: {} } },
    ];
    const modern = body(geminiModel(LOCAL, 'gemini-2.5-flash'), { messages: [{ role: 'user', content: 'x' }], tools });
    expect(modern.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'read',
            description: 'Read a file',
            parametersJsonSchema: {
              type: 'object',
              properties: { path: { type: 'string', description: 'File path' }, limit: { type: ['integer', 'null'] } },
              required: ['path'],
              additionalProperties: false,
            },
          },
          { name: 'now', description: 'The time', parametersJsonSchema: { type: 'object', properties: {} } },
        ],
      },
    ]);
    const legacy = body(geminiModel(LOCAL, 'gemini-2.0-flash'), { messages: [{ role: 'user', content: 'x' }], tools });
    expect(legacy.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'read',
            description: 'Read a file',
            parameters: {
              type: 'OBJECT',
              properties: { path: { type: 'STRING', description: 'File path' }, limit: { type: 'INTEGER', nullable: true } },
              required: ['path'],
            },
          },
          // An OBJECT with empty properties is rejected: a tool without parameters sends none.
          { name: 'now', description: 'The time' },
        ],
      },
    ]);
  });

  it('generationConfig: max tokens, temperature, thinking budgets by level and model', () => {
    expect(generationConfig('gemini-2.5-flash', 2.5, { maxTokens: 100, temperature: 0.2 })).toEqual({
      maxOutputTokens: 100,
      temperature: 0.2,
    });
    expect(generationConfig('gemini-2.5-flash', 2.5, { thinking: 'low' })).toEqual({
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
    expect(generationConfig('gemini-3-pro-preview', 3, { thinking: 'medium' })).toEqual({
      thinkingConfig: { thinkingBudget: 8192, includeThoughts: true },
    });
    expect(generationConfig('gemini-2.5-pro', 2.5, { thinking: 'high' })).toEqual({
      thinkingConfig: { thinkingBudget: 24576, includeThoughts: true },
    });
    expect(generationConfig('gemini-2.5-flash', 2.5, { thinking: 'off' })).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    // Pro models cannot stop thinking: their smallest budget.
    expect(generationConfig('gemini-2.5-pro', 2.5, { thinking: 'off' })).toEqual({ thinkingConfig: { thinkingBudget: 128 } });
    // Models before 2.5 do not think: no thinkingConfig, which they would reject.
    expect(generationConfig('gemini-2.0-flash', 2, { thinking: 'high' })).toBeUndefined();
    expect(generationConfig('gemini-2.5-flash', 2.5, {})).toBeUndefined();
    expect(body(geminiModel(LOCAL), { messages: [] }, { maxTokens: 50, thinking: 'low' }).generationConfig).toEqual({
      maxOutputTokens: 50,
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
  });

  it('the body is the same when messages come from the cache, and the cache keeps Gemini 3 and older apart', () => {
    const context: Context = {
      messages: [{ role: 'user', content: 'go' }, assistant([call('call_1', 'a', {})], { model: 'other' }), result('call_1', 'a', '1')],
    };
    const first = buildGeminiBody(geminiModel(LOCAL, 'gemini-3-flash-preview'), context);
    expect(buildGeminiBody(geminiModel(LOCAL, 'gemini-3-flash-preview'), context)).toBe(first);
    expect(first).toContain(SKIP_SIGNATURE);
    expect(buildGeminiBody(geminiModel(LOCAL, 'gemini-2.5-flash'), context)).not.toContain(SKIP_SIGNATURE);
  });

  it('model generations from ids', () => {
    expect(
      [
        'gemini-2.0-flash',
        'gemini-2.5-pro',
        'models/gemini-3-pro-preview',
        'gemini-3.1-pro-preview',
        'gemini-flash-latest',
        'gemma-3-27b-it',
        'my-proxy-alias',
      ].map(geminiGeneration),
    ).toEqual([2, 2.5, 3, 3.1, 3, 0, 2.5]);
  });
});

describe('gemini URL and headers', () => {
  it('appends /v1beta/models/{id}:method, tolerating a versioned base, a trailing slash and a models/ prefix', () => {
    const url = (baseUrl: string, id = 'gemini-2.5-flash', stream = true): string =>
      geminiUrl({ ...geminiModel(LOCAL, id), baseUrl }, stream).href;
    expect(url('https://generativelanguage.googleapis.com')).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(url('https://generativelanguage.googleapis.com/', 'models/gemini-2.5-flash', false)).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
    );
    expect(url('https://proxy.example/gemini/v1beta')).toBe(
      'https://proxy.example/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
  });

  it('merges the base query with alt=sse (one alt, the base parameters kept) and drops a fragment', () => {
    const url = (baseUrl: string, stream = true): string => geminiUrl({ ...geminiModel(LOCAL, 'gemini-2.5-flash'), baseUrl }, stream).href;
    expect(url('https://gw.example/gemini?route=eu')).toBe(
      'https://gw.example/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?route=eu&alt=sse',
    );
    expect(url('https://gw.example/gemini/v1beta/?alt=json&key=k1#frag')).toBe(
      'https://gw.example/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=k1&alt=sse',
    );
    expect(url('https://gw.example/gemini?route=eu#frag', false)).toBe(
      'https://gw.example/gemini/v1beta/models/gemini-2.5-flash:generateContent?route=eu',
    );
  });

  it('errors quote the URL without the user, password or a key parameter', () => {
    const target = geminiTarget(
      { ...geminiModel(LOCAL, 'gemini-2.5-flash'), baseUrl: 'https://alice:s3cret@gw.example/gemini?key=AIza-secret&route=eu' },
      true,
    );
    expect(target.url.href).toBe(
      'https://alice:s3cret@gw.example/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=AIza-secret&route=eu&alt=sse',
    );
    expect(target.errorUrl).toBe('https://gw.example/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?route=eu&alt=sse');
  });

  it('sends the key as x-goog-api-key (never in the URL), plus the model headers', () => {
    expect(geminiHeaders(geminiModel(LOCAL, 'gemini-2.5-flash', { headers: { 'x-extra': '1' } }))).toEqual({
      'content-type': 'application/json',
      'x-goog-api-key': 'test-key',
      'x-extra': '1',
    });
    expect(geminiHeaders(geminiModel(LOCAL, 'gemini-2.5-flash', { apiKey: undefined }))).toEqual({ 'content-type': 'application/json' });
  });
});

describe('gemini round trip on the wire', () => {
  it('the decoded call, signature included, goes back as the recorded client sent it; the result follows', async () => {
    server = await startServer([
      fixtureResponse('gemini/stream-function-call-thought-signature.sse'),
      fixtureResponse('gemini/stream-function-call-turn2-text.sse'),
    ]);
    const model = geminiModel(server.baseUrl, 'gemini-3-pro-preview');
    const tools = [{ name: 'get_country', description: '', parameters: { type: 'object', properties: {}, additionalProperties: false } }];
    const messages: Message[] = [{ role: 'user', content: 'What is the capital of the user country? Call the tool' }];
    const turn1 = await streamGemini(model, { messages, tools }).result();
    const [get] = toolCallsOf(turn1);
    messages.push(turn1, result(get?.id ?? '', 'get_country', 'Mexico'));
    const turn2 = await collect(streamGemini(model, { messages, tools }));
    expect(turn2.message.stopReason).toBe('stop');
    const sent = server.requests[1]?.json as { contents: Content[] };
    expect(sent.contents).toEqual([
      { role: 'user', parts: [{ text: 'What is the capital of the user country? Call the tool' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_country', args: {} }, thoughtSignature: get?.signature }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_country', response: { output: 'Mexico' } } }] },
    ]);
    expect(get?.signature).toMatch(/^EpwICpkIAXLI2nxlU6gsWZaZ/);
  });
});
