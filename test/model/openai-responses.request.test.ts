/**
 * The Responses request body: instructions, input items and their pairing, reasoning items
 * passed back only to the model that wrote them, histories written by other adapters, and
 * the options (reasoning, include, temperature, tools).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import { streamOpenAIResponses } from '../../src/model/providers/openai-responses.js';
import {
  buildResponsesBody,
  buildResponsesRequest,
  isReasoningModel,
  responsesHeaders,
  responsesTarget,
  responsesUrl,
} from '../../src/model/providers/openai-responses-request.js';
import type { ResponsesInputItem } from '../../src/model/providers/openai-responses-request.js';
import type { AssistantMessage, Context, Message, ModelRef, StreamOptions } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';
import { fixtureResponse, startServer } from './fixture-server.js';
import type { TestServer } from './fixture-server.js';
import { collect, testModel, toolCallsOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function responsesModel(overrides: Partial<ModelRef> = {}): ModelRef {
  return testModel('http://127.0.0.1:1/v1', { provider: 'openai-responses', api: 'openai-responses', id: 'gpt-5', ...overrides });
}

const REASONING_ITEM = {
  id: 'rs_0123',
  type: 'reasoning',
  encrypted_content: 'gAAAAB-encrypted',
  summary: [{ type: 'summary_text', text: 'Listing first.' }],
};

/** An assistant turn as this adapter decodes it from gpt-5: reasoning, text, two calls. */
function gpt5Turn(overrides: Partial<AssistantMessage> = {}): AssistantMessage {
  return {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'Listing first.', signature: JSON.stringify(REASONING_ITEM) },
      { type: 'text', text: 'Looking.', signature: JSON.stringify({ id: 'msg_0123', phase: 'commentary' }) },
      { type: 'tool_call', id: 'call_1', name: 'ls', arguments: { dir: '.' }, rawArguments: '{"dir": "."}', signature: 'fc_0001' },
      { type: 'tool_call', id: 'call_2', name: 'pwd', arguments: {}, rawArguments: '', signature: 'fc_0002' },
    ],
    stopReason: 'tool_use',
    usage: emptyUsage(),
    provider: 'openai-responses',
    model: 'gpt-5',
    api: 'openai-responses',
    ...overrides,
  };
}

function contextWith(turn: AssistantMessage): Context {
  return {
    system: 'You are terse.',
    messages: [
      { role: 'user', content: 'List the files.' },
      turn,
      { role: 'tool', toolCallId: 'call_1', toolName: 'ls', content: [{ type: 'text', text: 'a.txt' }], isError: false },
      {
        role: 'tool',
        toolCallId: 'call_2',
        toolName: 'pwd',
        content: [
          { type: 'text', text: '/tmp' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
        isError: false,
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this?' },
          { type: 'image', data: 'iVBOR', mimeType: 'image/png' },
        ],
      },
    ],
    tools: [{ name: 'ls', description: 'List files', parameters: { type: 'object', properties: { dir: { type: 'string' } } } }],
  };
}

/**
 * The rules the Responses API enforces on `input`, checked structurally: every output
 * follows its call; call ids short and plain; item ids only of the right kind; reasoning
 * items only with encrypted content.
 */
function expectValidInput(input: ResponsesInputItem[]): void {
  const calls = new Set<string>();
  for (const item of input) {
    if (!('type' in item)) continue;
    if (item.type === 'function_call') {
      expect(item.call_id).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      if (item.id !== undefined) expect(item.id).toMatch(/^fc/);
      calls.add(item.call_id);
    } else if (item.type === 'function_call_output') {
      expect(calls.has(item.call_id)).toBe(true);
    } else if (item.type === 'message') {
      if (item.id !== undefined) expect(item.id).toMatch(/^msg/);
    } else {
      expect(item.encrypted_content).not.toBe('');
    }
  }
}

describe('Responses request', () => {
  it('the body text built from cached per-message JSON is exactly the JSON of the request object', () => {
    const context = contextWith(gpt5Turn());
    const options: StreamOptions[] = [{}, { stream: false }, { maxTokens: 100, temperature: 0.2, thinking: 'low' }, { thinking: 'off' }];
    for (const model of [responsesModel(), responsesModel({ id: 'gpt-4o' }), responsesModel({ id: 'o4-mini' })]) {
      for (const option of options) {
        const expected = JSON.stringify(buildResponsesRequest(model, context, option));
        expect(buildResponsesBody(model, context, option)).toBe(expected);
        expect(buildResponsesBody(model, context, option)).toBe(expected); // second time from the cache
      }
    }
    const bare = { messages: context.messages };
    expect(buildResponsesBody(responsesModel(), bare)).toBe(JSON.stringify(buildResponsesRequest(responsesModel(), bare)));
  });

  it('maps every message kind for the model that wrote the history: reasoning item back, item ids kept', () => {
    const request = buildResponsesRequest(responsesModel(), contextWith(gpt5Turn()), { maxTokens: 100 });
    expect(request.instructions).toBe('You are terse.');
    expect(request.input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'List the files.' }] },
      {
        type: 'reasoning',
        id: 'rs_0123',
        encrypted_content: 'gAAAAB-encrypted',
        summary: [{ type: 'summary_text', text: 'Listing first.' }],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }], id: 'msg_0123', phase: 'commentary' },
      { type: 'function_call', call_id: 'call_1', name: 'ls', arguments: '{"dir": "."}', id: 'fc_0001' },
      { type: 'function_call', call_id: 'call_2', name: 'pwd', arguments: '{}', id: 'fc_0002' },
      { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
      {
        type: 'function_call_output',
        call_id: 'call_2',
        output: [
          { type: 'input_text', text: '/tmp' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is in this?' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBOR', detail: 'auto' },
        ],
      },
    ]);
    expect(request.tools).toEqual([
      {
        type: 'function',
        name: 'ls',
        description: 'List files',
        parameters: { type: 'object', properties: { dir: { type: 'string' } } },
        strict: false,
      },
    ]);
    expect(request).toMatchObject({
      model: 'gpt-5',
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
      max_output_tokens: 100,
    });
    expectValidInput(request.input);
  });

  it('another model gets no reasoning item and no item ids: its thinking arrives as text', () => {
    for (const model of [responsesModel({ id: 'gpt-5-mini' }), responsesModel({ provider: 'openai' })]) {
      const { input } = buildResponsesRequest(model, contextWith(gpt5Turn()));
      expect(input.slice(1, 5)).toEqual([
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Listing first.' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'ls', arguments: '{"dir": "."}' },
        { type: 'function_call', call_id: 'call_2', name: 'pwd', arguments: '{}' },
      ]);
      expect(input.some((item) => 'type' in item && item.type === 'reasoning')).toBe(false);
      expectValidInput(input);
    }
  });

  it('reasoning that cannot go back (no encrypted content) is dropped, and so are the item ids paired with it', () => {
    const stored = { id: 'rs_0456', type: 'reasoning', summary: [] };
    const turn = gpt5Turn();
    turn.content[0] = { type: 'thinking', thinking: '', signature: JSON.stringify(stored) };
    const { input } = buildResponsesRequest(responsesModel(), contextWith(turn));
    expect(input.slice(1, 4)).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'ls', arguments: '{"dir": "."}' },
      { type: 'function_call', call_id: 'call_2', name: 'pwd', arguments: '{}' },
    ]);
  });

  it('never sends an item id of the wrong kind; two text parts of one message go back as one item', () => {
    const turn = gpt5Turn({
      content: [
        { type: 'text', text: 'one ', signature: JSON.stringify({ id: 'msg_1' }) },
        { type: 'text', text: 'two', signature: JSON.stringify({ id: 'msg_1' }) },
        { type: 'text', text: 'bare id', signature: 'msg_2' },
        { type: 'text', text: 'odd id', signature: 'item-9' },
        { type: 'text', text: '' },
        { type: 'tool_call', id: 'call_1', name: 'ls', arguments: {}, rawArguments: '{}', signature: 'item_77' },
        { type: 'tool_call', id: 'call_2', name: 'pwd', arguments: {}, rawArguments: '{}' },
      ],
    });
    const { input } = buildResponsesRequest(responsesModel(), contextWith(turn));
    expect(input.slice(1, 6)).toEqual([
      {
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'one ' },
          { type: 'output_text', text: 'two' },
        ],
        id: 'msg_1',
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'bare id' }], id: 'msg_2' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'odd id' }] },
      { type: 'function_call', call_id: 'call_1', name: 'ls', arguments: '{}' },
      { type: 'function_call', call_id: 'call_2', name: 'pwd', arguments: '{}' },
    ]);
  });

  it('continues a history written by the Chat Completions adapter', async () => {
    server = await startServer([
      fixtureResponse('openai-chat/stream-parallel-tool-calls.sse'),
      fixtureResponse('openai-responses/stream-function-call-turn2-text.sse'),
    ]);
    const messages: Message[] = [{ role: 'user', content: 'Tell me the secrets.' }];
    const chat = await collect(streamOpenAIChat(testModel(server.baseUrl), { messages }));
    messages.push(chat.message);
    for (const call of toolCallsOf(chat.message))
      messages.push({
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: [{ type: 'text', text: `secret for ${String(call.arguments.password)}` }],
        isError: false,
      });
    const next = await collect(
      streamOpenAIResponses(testModel(server.baseUrl, { provider: 'openai-responses', api: 'openai-responses', id: 'gpt-4o' }), {
        messages,
      }),
    );
    expect(next.message.stopReason).toBe('stop');
    const { input } = server.requests[1]?.json as { input: ResponsesInputItem[] };
    expect(input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Tell me the secrets.' }] },
      {
        type: 'function_call',
        call_id: 'call_M26z19sncd7b4LBgzKRRbaUE',
        name: 'secret_retrieval_tool',
        arguments: '{"password": "mellon"}',
      },
      {
        type: 'function_call',
        call_id: 'call_KPXe5NX7IcKkaBUhc6dto2QV',
        name: 'secret_retrieval_tool',
        arguments: '{"password": "radiance"}',
      },
      { type: 'function_call_output', call_id: 'call_M26z19sncd7b4LBgzKRRbaUE', output: 'secret for mellon' },
      { type: 'function_call_output', call_id: 'call_KPXe5NX7IcKkaBUhc6dto2QV', output: 'secret for radiance' },
    ]);
    expectValidInput(input);
  });

  it('continues an Anthropic history (toolu_ ids, signed thinking) and renames ids this API would refuse', () => {
    const claude: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants the weather.', signature: 'EqQBCkYIBxgCKkB…anthropic-signature' },
        { type: 'thinking', thinking: '', signature: 'EmwKAhgB…', redacted: true },
        { type: 'text', text: 'Checking.' },
        {
          type: 'tool_call',
          id: 'toolu_01A09q90qw90lq917835lq9',
          name: 'weather',
          arguments: { city: 'Paris' },
          rawArguments: '{"city":"Paris"}',
        },
      ],
      stopReason: 'tool_use',
      usage: emptyUsage(),
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      api: 'anthropic-messages',
    };
    const routed: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'tool_call', id: 'functions.weather:0', name: 'weather', arguments: {}, rawArguments: '{"city":"Rome"}' }],
      stopReason: 'tool_use',
      usage: emptyUsage(),
      provider: 'openrouter',
      model: 'moonshotai/kimi-k2',
      api: 'openai-chat',
    };
    const messages: Message[] = [
      { role: 'user', content: 'Weather in Paris, then Rome?' },
      claude,
      {
        role: 'tool',
        toolCallId: 'toolu_01A09q90qw90lq917835lq9',
        toolName: 'weather',
        content: [{ type: 'text', text: 'sunny' }],
        isError: false,
      },
      routed,
      { role: 'tool', toolCallId: 'functions.weather:0', toolName: 'weather', content: [{ type: 'text', text: 'rain' }], isError: false },
    ];
    const { input } = buildResponsesRequest(responsesModel(), { messages });
    const renamed = (input[5] as { call_id: string }).call_id;
    expect(renamed).toMatch(/^call_[0-9a-f]{32}$/);
    expect(input.slice(1)).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The user wants the weather.' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: 'toolu_01A09q90qw90lq917835lq9', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'toolu_01A09q90qw90lq917835lq9', output: 'sunny' },
      { type: 'function_call', call_id: renamed, name: 'weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: renamed, output: 'rain' },
    ]);
    expectValidInput(input);
    // The same history gives the same replacement id on every turn (the prompt cache stays warm).
    expect(buildResponsesRequest(responsesModel(), { messages }).input[5]).toEqual(input[5]);
  });

  it('drops aborted turns and answers a dangling call with a synthetic output', () => {
    const aborted = gpt5Turn({ stopReason: 'aborted', content: [{ type: 'text', text: 'Half' }] });
    const dangling = gpt5Turn({
      content: [{ type: 'tool_call', id: 'call_9', name: 'ls', arguments: {}, rawArguments: '{}', signature: 'fc_9' }],
    });
    const { input } = buildResponsesRequest(responsesModel(), {
      messages: [{ role: 'user', content: 'go' }, aborted, { role: 'user', content: 'again' }, dangling],
    });
    expect(input.slice(1)).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'again' }] },
      { type: 'function_call', call_id: 'call_9', name: 'ls', arguments: '{}', id: 'fc_9' },
      { type: 'function_call_output', call_id: 'call_9', output: expect.stringMatching(/tool "ls" has no result/) },
    ]);
  });

  it('thinking levels: effort with summaries on request; reasoning models get encrypted reasoning and no temperature', () => {
    const options = (id: string, o: StreamOptions) => {
      const { input: _input, model: _model, ...rest } = buildResponsesRequest(responsesModel({ id }), { messages: [] }, o);
      return rest;
    };
    const encrypted = ['reasoning.encrypted_content'];
    expect(options('gpt-5', { thinking: 'medium' })).toEqual({
      stream: true,
      store: false,
      include: encrypted,
      reasoning: { effort: 'medium', summary: 'auto' },
    });
    expect(options('gpt-5', { temperature: 0.3 })).toEqual({ stream: true, store: false, include: encrypted });
    expect(options('gpt-5', { thinking: 'off' })).toEqual({
      stream: true,
      store: false,
      include: encrypted,
      reasoning: { effort: 'minimal' },
    });
    expect(options('gpt-5.1', { thinking: 'off' })).toMatchObject({ reasoning: { effort: 'none' } });
    expect(options('o4-mini', { thinking: 'off' })).toMatchObject({ reasoning: { effort: 'low' } });
    expect(options('gpt-4o', { thinking: 'off', temperature: 0.3, maxTokens: 64, stream: false })).toEqual({
      store: false,
      max_output_tokens: 64,
      temperature: 0.3,
    });
    // Asking for thinking on any other model is taken at its word (a local reasoning model).
    expect(options('qwen3', { thinking: 'high' })).toEqual({
      stream: true,
      store: false,
      include: encrypted,
      reasoning: { effort: 'high', summary: 'auto' },
    });
  });

  it('recognizes reasoning models by name', () => {
    expect(
      ['o1', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'gpt-5.1-codex-max', 'openai/gpt-5', 'codex-mini-latest'].filter(
        (id) => !isReasoningModel(id),
      ),
    ).toEqual([]);
    expect(
      ['gpt-4o', 'gpt-4.1', 'gpt-5-chat-latest', 'gpt-5.1-chat-latest', 'llama3.1', 'omni-moderation'].filter(isReasoningModel),
    ).toEqual([]);
  });

  it('headers: bearer key when there is one, model headers last', () => {
    expect(responsesHeaders(responsesModel({ headers: { 'x-title': 'rein' } }))).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer sk-test',
      'x-title': 'rein',
    });
    expect(responsesHeaders(responsesModel({ apiKey: undefined }))).not.toHaveProperty('authorization');
  });

  it('POSTs the body and headers to {baseUrl}/responses', async () => {
    server = await startServer([fixtureResponse('openai-responses/stream-text-single-delta.sse')]);
    const model = testModel(`${server.baseUrl}/`, {
      provider: 'openai-responses',
      api: 'openai-responses',
      id: 'gpt-5',
      headers: { 'x-extra': '1' },
    });
    const context = contextWith(gpt5Turn());
    await collect(streamOpenAIResponses(model, context, { thinking: 'low' }));
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v1/responses');
    expect(request?.headers.authorization).toBe('Bearer sk-test');
    expect(request?.headers['x-extra']).toBe('1');
    expect(request?.json).toEqual(JSON.parse(JSON.stringify(buildResponsesRequest(model, context, { thinking: 'low' }))));
  });
});

describe('Responses URL', () => {
  it('appends /responses to the base path, keeps the base query after it and drops a fragment', () => {
    expect(responsesUrl('https://api.openai.com/v1/').href).toBe('https://api.openai.com/v1/responses');
    expect(responsesUrl('https://x.openai.azure.com/openai/v1?api-version=preview').href).toBe(
      'https://x.openai.azure.com/openai/v1/responses?api-version=preview',
    );
    expect(responsesUrl('https://gw.example/v1#frag').href).toBe('https://gw.example/v1/responses');
  });

  it('errors quote the URL without the user, password or secret parameters', () => {
    const target = responsesTarget('http://alice:s3cret@gw.example/v1?api-version=preview&api-key=k-123');
    expect(target.url.href).toBe('http://alice:s3cret@gw.example/v1/responses?api-version=preview&api-key=k-123');
    expect(target.errorUrl).toBe('http://gw.example/v1/responses?api-version=preview');
  });
});
