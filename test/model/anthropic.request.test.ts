/**
 * Building Anthropic Messages requests: the body's shape, thinking and max_tokens, and
 * histories written by Anthropic itself or by other providers becoming valid requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamAnthropic } from '../../src/model/providers/anthropic.js';
import {
  anthropicHeaders,
  buildAnthropicBody,
  buildAnthropicRequest,
  defaultMaxTokens,
  messagesTarget,
  messagesUrl,
} from '../../src/model/providers/anthropic-request.js';
import type { AnthropicBlock, AnthropicRequest } from '../../src/model/providers/anthropic-request.js';
import type { AssistantMessage, Context, Message, ModelRef } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';
import { fixtureResponse, readFixture, startServer } from './fixture-server.js';
import type { TestServer } from './fixture-server.js';
import { collect, expectWellFormed, testModel } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const CLAUDE: Partial<ModelRef> = { provider: 'anthropic', id: 'claude-sonnet-4-5', api: 'anthropic-messages', apiKey: 'sk-ant-test' };
const claude = (overrides: Partial<ModelRef> = {}): ModelRef => testModel('http://127.0.0.1:1', { ...CLAUDE, ...overrides });

function assistant(content: AssistantMessage['content'], from: Partial<AssistantMessage> = {}): AssistantMessage {
  return {
    role: 'assistant',
    content,
    stopReason: 'tool_use',
    usage: emptyUsage(),
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    api: 'anthropic-messages',
    ...from,
  };
}

/**
 * The rules the Messages API enforces on `messages`: roles alternate starting with the
 * user; no empty text; tool ids match its pattern; every tool_use is answered by a
 * tool_result at the start of the next (user) message, and every tool_result answers one.
 */
function expectValidMessages(request: AnthropicRequest): void {
  const { messages } = request;
  expect(messages[0]?.role).toBe('user');
  for (const [i, message] of messages.entries()) {
    if (i > 0) expect(message.role).not.toBe(messages[i - 1]?.role);
    expect(message.content.length).toBeGreaterThan(0);
    for (const block of message.content) {
      if (block.type === 'text') expect(block.text.trim()).not.toBe('');
      if (block.type === 'tool_use') expect(block.id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      if (block.type === 'tool_result') expect(block.tool_use_id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    }
    const uses = message.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    const next = messages[i + 1]?.content ?? [];
    const results = next.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
    if (message.role === 'assistant') {
      expect([...results].sort()).toEqual([...uses].sort());
      expect(new Set(results).size).toBe(results.length);
      expect(next.slice(0, results.length).every((b) => b.type === 'tool_result')).toBe(true);
    }
  }
}

const context: Context = {
  system: 'You are terse.',
  messages: [
    { role: 'user', content: 'List the files.' },
    assistant([
      { type: 'thinking', thinking: 'I should call ls.', signature: 'sig-1' },
      { type: 'thinking', thinking: '', signature: 'opaque-redacted', redacted: true },
      { type: 'text', text: 'Looking.' },
      { type: 'tool_call', id: 'toolu_1', name: 'ls', arguments: { dir: '.' }, rawArguments: '{"dir": "."}' },
      { type: 'tool_call', id: 'toolu_2', name: 'pwd', arguments: {}, rawArguments: '' },
    ]),
    {
      role: 'tool',
      toolCallId: 'toolu_1',
      toolName: 'ls',
      content: [
        { type: 'text', text: 'a.txt' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
      isError: false,
    },
    { role: 'tool', toolCallId: 'toolu_2', toolName: 'pwd', content: [{ type: 'text', text: 'permission denied' }], isError: true },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this?' },
        { type: 'image', data: 'iVBOR', mimeType: 'image/jpeg' },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: '  ' },
      ],
    },
  ],
  tools: [{ name: 'ls', description: 'List files', parameters: { type: 'object', properties: { dir: { type: 'string' } } } }],
};

describe('Anthropic Messages request', () => {
  it('maps every message kind: system on top, tool results grouped in one user message, roles merged', () => {
    const request = buildAnthropicRequest(claude(), context, { maxTokens: 100, temperature: 0.2 });
    expect(request.system).toBe('You are terse.');
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'List the files.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should call ls.', signature: 'sig-1' },
          { type: 'redacted_thinking', data: 'opaque-redacted' },
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'ls', input: { dir: '.' } },
          { type: 'tool_use', id: 'toolu_2', name: 'pwd', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              { type: 'text', text: 'a.txt' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            ],
          },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'permission denied' }], is_error: true },
          // The user's own messages after the results join the same user turn, results first.
          { type: 'text', text: 'What is in this?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'iVBOR' } },
          { type: 'text', text: 'one' },
        ],
      },
    ]);
    expect(request.tools).toEqual([{ name: 'ls', description: 'List files', input_schema: context.tools?.[0]?.parameters }]);
    expect(request).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 100, stream: true, temperature: 0.2 });
    expect(request).not.toHaveProperty('thinking');
    expectValidMessages(request);
  });

  it('the body is the same text on every turn (messages converted once and cached)', () => {
    const first = buildAnthropicBody(claude(), context);
    expect(buildAnthropicBody(claude(), context)).toBe(first);
    expect(JSON.parse(first)).toEqual(buildAnthropicRequest(claude(), context));
  });

  it('max_tokens: required, defaulted per model; no system, tools or stream when not wanted', () => {
    const request = buildAnthropicRequest(claude(), { messages: [{ role: 'user', content: 'hi' }], tools: [] }, { stream: false });
    expect(request).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 8192,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(defaultMaxTokens('claude-3-haiku-20240307')).toBe(4096);
    expect(defaultMaxTokens('claude-3-opus-latest')).toBe(4096);
    expect(defaultMaxTokens('claude-3-5-haiku-latest')).toBe(8192);
    expect(defaultMaxTokens('claude-opus-4-6')).toBe(8192);
  });

  it('thinking levels become budgets; max_tokens leaves room above the budget; no temperature with thinking', () => {
    const messages: Message[] = [{ role: 'user', content: 'hi' }];
    const ask = (options: Parameters<typeof buildAnthropicRequest>[2]) => buildAnthropicRequest(claude(), { messages }, options);
    expect(ask({ thinking: 'low', temperature: 0.5 })).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 1024 },
      max_tokens: 8192 + 1024,
    });
    expect(ask({ thinking: 'low', temperature: 0.5 })).not.toHaveProperty('temperature');
    expect(ask({ thinking: 'medium' })).toMatchObject({ thinking: { budget_tokens: 4096 }, max_tokens: 8192 + 4096 });
    expect(ask({ thinking: 'high' })).toMatchObject({ thinking: { budget_tokens: 16384 }, max_tokens: 8192 + 16384 });
    // An explicit maxTokens is the total, raised only when it leaves no room for the answer.
    expect(ask({ thinking: 'high', maxTokens: 32000 })).toMatchObject({ max_tokens: 32000 });
    expect(ask({ thinking: 'high', maxTokens: 2000 })).toMatchObject({ max_tokens: 16384 + 1024 });
    for (const off of [{ thinking: 'off' as const }, {}]) {
      const request = ask({ ...off, temperature: 0.5 });
      expect(request).not.toHaveProperty('thinking');
      expect(request).toMatchObject({ temperature: 0.5, max_tokens: 8192 });
    }
  });

  it('turn 2 of a recorded thinking + tool exchange: thinking and its signature go back exactly as Anthropic recorded them', async () => {
    const haiku = (baseUrl: string) => testModel(baseUrl, { ...CLAUDE, id: 'claude-haiku-4-5-20251001' });
    const question = 'Use the fixed_version tool. Then tell me the version and make one short joke about it. Think about it first.';
    server = await startServer([
      fixtureResponse('anthropic/stream-thinking-tool-use.sse'),
      fixtureResponse('anthropic/stream-thinking-tool-use-turn2.sse'),
    ]);
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: question }] }];
    const turn1 = await collect(streamAnthropic(haiku(server.baseUrl), { messages }, { thinking: 'low' }));
    messages.push(turn1.message, {
      role: 'tool',
      toolCallId: 'toolu_01825dXWLSoJwCst1qTsiWdb',
      toolName: 'fixed_version',
      content: [{ type: 'text', text: '0.32a0' }],
      isError: false,
    });
    const turn2 = await collect(streamAnthropic(haiku(server.baseUrl), { messages }, { thinking: 'low' }));
    expectWellFormed(turn2.events, turn2.message);
    expect(turn2.message.stopReason).toBe('stop');

    const sent = server.requests[1]?.json as AnthropicRequest;
    const manifest = JSON.parse(readFixture('manifest.json')) as { fixtures: Array<{ file: string; request: { body: AnthropicRequest } }> };
    const recorded = manifest.fixtures.find((entry) => entry.file === 'anthropic/stream-thinking-tool-use-turn2.sse')?.request.body;
    if (recorded === undefined) throw new Error('the turn-2 recording has no request in manifest.json');
    // The recorder sent the tool result as a string; we send the same text as a block.
    const asBlocks = (request: AnthropicRequest) =>
      request.messages.map((m) => ({
        ...m,
        content: m.content.map((b: AnthropicBlock) =>
          b.type === 'tool_result' && typeof b.content === 'string' ? { ...b, content: [{ type: 'text', text: b.content }] } : b,
        ),
      }));
    expect(asBlocks(sent)).toEqual(asBlocks(recorded));
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: recorded.thinking?.budget_tokens });
    expect(sent).not.toHaveProperty('temperature');
  });

  it('a history from OpenAI (ids like call_abc.1, numeric ids, reasoning, empty content) becomes a valid request', () => {
    const longId = `call_${'x'.repeat(70)}`;
    const openai = (content: AssistantMessage['content']): AssistantMessage => ({
      ...assistant(content),
      provider: 'openai',
      model: 'gpt-4o',
      api: 'openai-chat',
    });
    const history: Message[] = [
      { role: 'user', content: 'Read both files.' },
      openai([
        { type: 'thinking', thinking: 'Two reads.', signature: 'openai-encrypted' },
        { type: 'text', text: '' },
        { type: 'tool_call', id: 'call_abc.1', name: 'read', arguments: { path: 'a' }, rawArguments: '{"path":"a"}', signature: 'fc_123' },
        { type: 'tool_call', id: '7', name: 'read', arguments: { path: 'b' }, rawArguments: '{"path":"b"}' },
        { type: 'tool_call', id: longId, name: 'read', arguments: { path: 'c' }, rawArguments: '{"path":"c"}' },
      ]),
      { role: 'tool', toolCallId: '7', toolName: 'read', content: [{ type: 'text', text: 'B' }], isError: false },
      { role: 'tool', toolCallId: 'call_abc.1', toolName: 'read', content: [{ type: 'text', text: 'A' }], isError: false },
      // longId never got a result: a synthetic error result is added.
      { ...openai([{ type: 'text', text: 'Both read.' }]), stopReason: 'stop' },
      { role: 'user', content: 'Again.' },
      openai([{ type: 'tool_call', id: 'call_abc.1', name: 'read', arguments: { path: 'a' }, rawArguments: '{"path":"a"}' }]),
      { role: 'tool', toolCallId: 'call_abc.1', toolName: 'read', content: [], isError: false },
    ];
    const request = buildAnthropicRequest(claude(), { messages: history }, { thinking: 'medium' });
    expectValidMessages(request);
    const [, first, results, , , again, againResults] = request.messages;
    // Another model's reasoning is plain text; its signatures are gone.
    expect(first?.content[0]).toEqual({ type: 'text', text: 'Two reads.' });
    expect(JSON.stringify(request)).not.toMatch(/openai-encrypted|fc_123/);
    const ids = first?.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) ?? [];
    expect(ids[0]).toBe('call_abc_1_0');
    expect(ids[1]).toBe('7');
    expect(ids[2]).toMatch(/^call_x+_1$/);
    expect(ids[2]?.length).toBe(64);
    // One result per call, in the order they were written; the missing one is an error.
    expect(results?.content).toEqual([
      { type: 'tool_result', tool_use_id: '7', content: [{ type: 'text', text: 'B' }] },
      { type: 'tool_result', tool_use_id: 'call_abc_1_0', content: [{ type: 'text', text: 'A' }] },
      {
        type: 'tool_result',
        tool_use_id: ids[2],
        content: [{ type: 'text', text: expect.stringMatching(/tool "read" has no result/) }],
        is_error: true,
      },
    ]);
    // The same foreign id later maps to the same Anthropic id; an empty result has no content.
    expect(again?.content).toEqual([{ type: 'tool_use', id: 'call_abc_1_0', name: 'read', input: { path: 'a' } }]);
    expect(againResults?.content).toEqual([{ type: 'tool_result', tool_use_id: 'call_abc_1_0' }]);
    // The answered turn has no thinking block, which Anthropic requires with thinking on:
    // this request goes without thinking rather than being rejected.
    expect(request).not.toHaveProperty('thinking');
  });

  it('keeps thinking on when the turn being answered starts with signed thinking', () => {
    const request = buildAnthropicRequest(claude(), context, { thinking: 'high' });
    expect(request.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
  });

  it('keeps thinking on in later steps of a tool loop, whose messages have no thinking of their own', () => {
    const call = (id: string): AssistantMessage['content'][number] => ({
      type: 'tool_call',
      id,
      name: 'ls',
      arguments: {},
      rawArguments: '{}',
    });
    const result = (id: string): Message => ({
      role: 'tool',
      toolCallId: id,
      toolName: 'ls',
      content: [{ type: 'text', text: 'ok' }],
      isError: false,
    });
    const history: Message[] = [
      { role: 'user', content: 'go' },
      assistant([{ type: 'thinking', thinking: 'plan', signature: 'sig' }, call('toolu_a')]),
      result('toolu_a'),
      assistant([call('toolu_b')]),
      result('toolu_b'),
      assistant([call('toolu_c')]),
      result('toolu_c'),
    ];
    expect(buildAnthropicRequest(claude(), { messages: history }, { thinking: 'low' }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1024,
    });
    // A loop begun without thinking cannot go on with it ...
    const unthought = history.map((m, i) => (i === 1 ? assistant([call('toolu_a')]) : m));
    expect(buildAnthropicRequest(claude(), { messages: unthought }, { thinking: 'low' })).not.toHaveProperty('thinking');
    // ... but a new user message starts a new turn, which may think again.
    expect(
      buildAnthropicRequest(
        claude(),
        {
          messages: [...unthought, assistant([{ type: 'text', text: 'done' }], { stopReason: 'stop' }), { role: 'user', content: 'next' }],
        },
        { thinking: 'low' },
      ).thinking,
    ).toBeDefined();
  });

  it('another Claude model’s thinking becomes text; unsigned thinking is text; failed turns are dropped', () => {
    const history: Message[] = [
      { role: 'user', content: 'a' },
      assistant(
        [
          { type: 'thinking', thinking: 'from opus', signature: 'opus-sig' },
          { type: 'thinking', thinking: '', signature: 'opus-redacted', redacted: true },
          { type: 'text', text: 'A' },
        ],
        { model: 'claude-opus-4-6', stopReason: 'stop' },
      ),
      { role: 'user', content: 'b' },
      assistant([{ type: 'text', text: 'half' }], { stopReason: 'aborted' }),
      { role: 'user', content: 'c' },
      assistant(
        [
          { type: 'thinking', thinking: 'no signature (cut stream)' },
          { type: 'text', text: '\n\n' },
          { type: 'text', text: 'C' },
        ],
        { stopReason: 'stop' },
      ),
      { role: 'user', content: '' },
    ];
    const request = buildAnthropicRequest(claude(), { messages: history });
    expectValidMessages(request);
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'from opus' },
          { type: 'text', text: 'A' },
        ],
      },
      // The aborted turn is gone, so the two user turns around it are one.
      {
        role: 'user',
        content: [
          { type: 'text', text: 'b' },
          { type: 'text', text: 'c' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'no signature (cut stream)' },
          { type: 'text', text: 'C' },
        ],
      },
    ]);
  });

  it('headers: x-api-key when there is a key, the API version, model headers last', () => {
    expect(anthropicHeaders(claude({ headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } }))).toEqual({
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'sk-ant-test',
      'anthropic-beta': 'interleaved-thinking-2025-05-14',
    });
    expect(anthropicHeaders(claude({ apiKey: undefined }))).not.toHaveProperty('x-api-key');
    expect(anthropicHeaders(claude())).not.toHaveProperty('authorization');
  });

  it('posts to <base>/v1/messages, also when the base already ends in /v1', () => {
    expect(messagesUrl('https://api.anthropic.com').href).toBe('https://api.anthropic.com/v1/messages');
    expect(messagesUrl('https://api.anthropic.com/').href).toBe('https://api.anthropic.com/v1/messages');
    expect(messagesUrl('https://proxy.example/anthropic/v1/').href).toBe('https://proxy.example/anthropic/v1/messages');
  });

  it('keeps the base query after the path and drops a fragment', () => {
    expect(messagesUrl('https://gw.example/anthropic?route=eu').href).toBe('https://gw.example/anthropic/v1/messages?route=eu');
    expect(messagesUrl('https://gw.example/anthropic/v1/?route=eu#frag').href).toBe('https://gw.example/anthropic/v1/messages?route=eu');
  });

  it('errors quote the URL without the user, password or secret parameters', () => {
    const target = messagesTarget('https://alice:s3cret@gw.example/anthropic?route=eu&token=t0k');
    expect(target.url.href).toBe('https://alice:s3cret@gw.example/anthropic/v1/messages?route=eu&token=t0k');
    expect(target.errorUrl).toBe('https://gw.example/anthropic/v1/messages?route=eu');
  });

  it('sends the body and headers over HTTP', async () => {
    server = await startServer([fixtureResponse('anthropic/stream-text.sse')]);
    const base = server.baseUrl.replace(/\/v1$/, '');
    await collect(streamAnthropic(testModel(base, { ...CLAUDE, headers: { 'x-extra': '1' } }), context, { maxTokens: 100 }));
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v1/messages');
    expect(request?.headers['x-api-key']).toBe('sk-ant-test');
    expect(request?.headers['anthropic-version']).toBe('2023-06-01');
    expect(request?.headers['x-extra']).toBe('1');
    expect(request?.json).toEqual(buildAnthropicRequest(testModel(base, CLAUDE), context, { maxTokens: 100 }));
  });
});
