import { afterEach, describe, expect, it } from 'vitest';
import { fault, startScriptedServer, text, toolCalls, type ScriptedServer, type ScriptTurn } from '../../src/testing/index.js';
import { readUntilEnd, type Wire } from './helpers.js';
import {
  ANTHROPIC_HEADERS,
  foldAnthropic,
  foldAnthropicMessage,
  parseEvents,
  postTo,
  recordedJson,
  recording,
  unrecordedFields,
} from './wire-client.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(script: ScriptTurn[], chunkSize?: number): Promise<ScriptedServer> {
  server = await startScriptedServer(chunkSize === undefined ? { script } : { script, chunkSize });
  return server;
}

const USER = [{ role: 'user', content: 'hi' }];

function messages(
  s: ScriptedServer,
  body: Record<string, unknown>,
  headers: Record<string, string> = ANTHROPIC_HEADERS,
): Promise<Response> {
  return postTo(s.origin, '/v1/messages', { model: 'claude-test', max_tokens: 1024, messages: USER, ...body }, headers);
}

async function stream(s: ScriptedServer, body: Record<string, unknown> = {}) {
  const response = await messages(s, { stream: true, ...body });
  return { response, events: parseEvents(await response.text()) };
}

const RICH: ScriptTurn = {
  thinking: 'The user wants two lookups; both can run at once.',
  text: 'Looking both up.',
  toolCalls: [
    { name: 'get_weather', arguments: { city: 'San Francisco', unit: 'celsius' } },
    { name: 'get_time', arguments: { zone: 'America/Los_Angeles' } },
  ],
};

describe('scripted server: Anthropic Messages streaming', () => {
  it('streams named events from message_start to message_stop, text in several text_deltas', async () => {
    const s = await start([text('The quick brown fox jumps over the lazy dog.')]);
    const { response, events } = await stream(s);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    for (const { event, data } of events) expect(event).toBe(data.type);
    const types = events.map((e) => e.data.type);
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types).toContain('ping');
    expect(events.filter((e) => e.data.delta?.type === 'text_delta').length).toBeGreaterThan(2);
    const folded = foldAnthropic(events);
    expect(folded).toMatchObject({ text: 'The quick brown fox jumps over the lazy dog.', stop: 'end_turn', calls: [] });
    expect(events[0]!.data.message).toMatchObject({
      id: 'msg_scripted_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
    });
  });

  it('streams parallel tool_use blocks with input_json_delta in pieces, like the recordings', async () => {
    const s = await start([RICH], 8);
    const { events } = await stream(s);
    const folded = foldAnthropic(events);
    expect(folded.calls.map((c) => [c.id, c.name, JSON.parse(c.arguments)])).toEqual([
      ['toolu_scripted_1', 'get_weather', { city: 'San Francisco', unit: 'celsius' }],
      ['toolu_scripted_2', 'get_time', { zone: 'America/Los_Angeles' }],
    ]);
    expect(folded.stop).toBe('tool_use');
    const firstBlockDeltas = events.filter((e) => e.data.type === 'content_block_delta' && e.data.index === 2);
    expect(firstBlockDeltas[0]!.data.delta).toEqual({ type: 'input_json_delta', partial_json: '' });
    expect(firstBlockDeltas.length).toBeGreaterThan(3);
    const opened = events.find((e) => e.data.type === 'content_block_start' && e.data.content_block.type === 'tool_use');
    expect(opened!.data.content_block).toEqual({ type: 'tool_use', id: 'toolu_scripted_1', name: 'get_weather', input: {} });
  });

  it('streams thinking first, with thinking_deltas and a stable signature_delta', async () => {
    const s = await start([RICH, RICH]);
    const first = foldAnthropic((await stream(s)).events);
    const second = foldAnthropic((await stream(s)).events);
    expect(first.thinking).toBe(RICH.thinking);
    expect(first.signatures).toHaveLength(1);
    expect(first.signatures[0]).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(second.signatures).toEqual(first.signatures);
  });

  it('sends only fields the recorded streams have, block by block', async () => {
    const s = await start([RICH]);
    const { events } = await stream(s);
    const recorded = ['stream-thinking-tool-use.sse', 'stream-parallel-tool-use.sse', 'stream-text.sse', 'stream-tool-use.sse'].flatMap(
      (f) => recording(`anthropic/${f}`),
    );
    const kind = (d: Wire): string => `${d.type}:${d.content_block?.type ?? d.delta?.type ?? ''}`;
    const { extra, unmatched } = unrecordedFields(
      events.map((e) => e.data),
      recorded.map((e) => e.data),
      kind,
    );
    expect(extra).toEqual([]);
    expect(unmatched).toEqual([]);
  });

  it('a client decodes a recording and our stream the same way', () => {
    const real = foldAnthropic(recording('anthropic/stream-thinking-tool-use.sse'));
    expect(real).toMatchObject({ stop: 'tool_use', calls: [{ name: 'fixed_version', arguments: '' }] });
    expect(real.thinking).toMatch(/fixed_version tool/);
    expect(real.signatures).toHaveLength(1);
    expect(real.usage).toMatchObject({ output_tokens: 92, input_tokens: 598 });
  });

  it('reports usage the Anthropic way: input_tokens leave out cache reads', async () => {
    const s = await start([
      text('ok', { usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 40 } } }),
    ]);
    const { events } = await stream(s);
    expect(events[0]!.data.message.usage).toMatchObject({ input_tokens: 60, cache_read_input_tokens: 40, cache_creation_input_tokens: 0 });
    expect(events.find((e) => e.data.type === 'message_delta')!.data.usage).toMatchObject({ input_tokens: 60, output_tokens: 7 });
  });

  it('maps finish reasons: length → max_tokens, content_filter → refusal, others verbatim', async () => {
    const s = await start([
      text('cut', { finishReason: 'length' }),
      text('no', { finishReason: 'content_filter' }),
      text('p', { finishReason: 'pause_turn' }),
    ]);
    expect(foldAnthropic((await stream(s)).events).stop).toBe('max_tokens');
    expect(foldAnthropic((await stream(s)).events).stop).toBe('refusal');
    expect(foldAnthropic((await stream(s)).events).stop).toBe('pause_turn');
  });
});

describe('scripted server: Anthropic Messages JSON', () => {
  it('answers a message body with thinking, text and tool_use blocks in the recorded shape', async () => {
    const s = await start([RICH]);
    const response = await messages(s, {});
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as Wire;
    const folded = foldAnthropicMessage(body);
    expect(folded).toMatchObject({ text: 'Looking both up.', thinking: RICH.thinking, stop: 'tool_use' });
    expect(folded.calls.map((c) => JSON.parse(c.arguments))).toEqual([
      { city: 'San Francisco', unit: 'celsius' },
      { zone: 'America/Los_Angeles' },
    ]);
    const recorded = [
      recordedJson('anthropic/nonstream-parallel-tool-use.json'),
      recordedJson('anthropic/nonstream-thinking-tool-use.json'),
    ];
    const { extra } = unrecordedFields([body], recorded, () => 'message');
    expect(extra).toEqual([]);
    expect(body.usage).toMatchObject({ input_tokens: expect.any(Number), cache_read_input_tokens: 0 });
    expect(body.usage.output_tokens).toBeGreaterThan(Math.ceil(RICH.thinking!.length / 4));
  });

  it('sends malformed argument text as the input string, not a repaired object', async () => {
    const s = await start([toolCalls({ name: 'write', arguments: '{"path": "a.txt", "content": "unterm' })]);
    const body = (await (await messages(s, {})).json()) as Wire;
    expect(body.content[0].input).toBe('{"path": "a.txt", "content": "unterm');
  });
});

describe('scripted server: Anthropic faults', () => {
  it('answers 529 with the overloaded body, then goes on', async () => {
    const s = await start([fault({ type: 'status', status: 529 }), text('ok')]);
    const response = await messages(s, { stream: true });
    expect(response.status).toBe(529);
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(foldAnthropic((await stream(s)).events).text).toBe('ok');
  });

  it('answers 429 rate_limit_error with retry-after', async () => {
    const s = await start([fault({ type: 'status', status: 429, retryAfter: 3 })]);
    const response = await messages(s, {});
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(((await response.json()) as Wire).error.type).toBe('rate_limit_error');
  });

  it('ends a 200 stream with event: error after the content', async () => {
    const s = await start([
      fault({ type: 'error_in_stream', message: 'Overloaded', code: 'overloaded_error' }, { text: 'partial' }),
      fault({ type: 'error_in_stream', message: 'boom' }),
    ]);
    const { response, events } = await stream(s);
    expect(response.status).toBe(200);
    const last = events.at(-1)!;
    expect(last).toEqual({ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    expect(events.some((e) => e.data.type === 'message_stop' || e.data.type === 'message_delta')).toBe(false);
    expect(foldAnthropic(events).text).toBe('partial');
    const json = await messages(s, {});
    expect(json.status).toBe(500);
    expect(await json.json()).toEqual({ type: 'error', error: { type: 'api_error', message: 'boom' } });
  });

  it('cuts the stream after N events, without message_stop', async () => {
    const s = await start([fault({ type: 'cut', afterChunks: 3 }, { text: 'a long answer that would take many deltas' })]);
    const { text: received, error } = await readUntilEnd(await messages(s, { stream: true }));
    expect(error).toBeDefined();
    expect(parseEvents(received).map((e) => e.data.type)).toEqual(['message_start', 'content_block_start', 'ping']);
  });
});

describe('scripted server: Anthropic validation', () => {
  const use = (...ids: string[]) => ({ role: 'assistant', content: ids.map((id) => ({ type: 'tool_use', id, name: 'read', input: {} })) });
  const results = (...ids: string[]) => ({
    role: 'user',
    content: ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' })),
  });

  async function rejected(body: Record<string, unknown>, headers?: Record<string, string>): Promise<string> {
    const s = server ?? (await start([text('unused')]));
    const response = await messages(s, body, headers);
    expect(response.status).toBe(400);
    const error = (await response.json()) as Wire;
    expect(error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    return error.error.message as string;
  }

  it('accepts a valid history: parallel results, thinking sent back with its signature', async () => {
    const s = await start([RICH, text('done')]);
    const first = foldAnthropic((await stream(s)).events);
    const assistant = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: first.thinking, signature: first.signatures[0] },
        { type: 'text', text: first.text },
        ...first.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments) })),
      ],
    };
    const history = [
      ...USER,
      assistant,
      { role: 'user', content: [...results(...first.calls.map((c) => c.id!).reverse()).content, { type: 'text', text: 'and?' }] },
    ];
    const tools = [{ name: 'get_weather', description: 'w', input_schema: { type: 'object', properties: {} } }];
    const response = await messages(s, { messages: history, tools, system: [{ type: 'text', text: 'Be brief.' }] });
    expect(response.status).toBe(200);
    expect(s.received.map((r) => r.rejected)).toEqual([undefined, undefined]);
    expect(s.received[1]!.request).toMatchObject({ api: 'anthropic-messages', system: 'Be brief.', toolNames: ['get_weather'] });
  });

  it('rejects a tool_use left without a tool_result in the next message, naming the ids', async () => {
    expect(await rejected({ messages: [...USER, use('toolu_a', 'toolu_b'), results('toolu_a')] })).toBe(
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    );
    expect(await rejected({ messages: [...USER, use('toolu_z')] })).toContain('without `tool_result` blocks immediately after: toolu_z');
  });

  it('rejects a tool_result whose id the previous assistant message did not use', async () => {
    expect(await rejected({ messages: [...USER, use('toolu_a'), results('toolu_a', 'toolu_x')] })).toBe(
      'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    );
  });

  it('rejects a thinking block whose text was changed after signing', async () => {
    const s = await start([RICH]);
    const first = foldAnthropic((await stream(s)).events);
    const tampered = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `${first.thinking} (edited)`, signature: first.signatures[0] },
        { type: 'text', text: 'x' },
      ],
    };
    expect(await rejected({ messages: [...USER, tampered, { role: 'user', content: 'go on' }] })).toBe(
      'messages.1.content.0: Invalid `signature` in `thinking` block',
    );
  });

  it.each([
    ['no anthropic-version header', {}, {}, 'anthropic-version: header is required'],
    ['no max_tokens', { max_tokens: undefined }, ANTHROPIC_HEADERS, 'max_tokens: Field required'],
    ['no model', { model: undefined }, ANTHROPIC_HEADERS, 'model: Field required'],
    [
      'a first message from the assistant',
      { messages: [{ role: 'assistant', content: 'hi' }] },
      ANTHROPIC_HEADERS,
      'first message must use the "user" role',
    ],
    [
      'two user messages in a row',
      { messages: [...USER, { role: 'user', content: 'again' }] },
      ANTHROPIC_HEADERS,
      'roles must alternate between "user" and "assistant"',
    ],
    [
      'a system role message',
      { messages: [{ role: 'system', content: 'x' }] },
      ANTHROPIC_HEADERS,
      "messages.0.role: Input should be 'user' or 'assistant'",
    ],
    [
      'an empty text block',
      { messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] },
      ANTHROPIC_HEADERS,
      'text content blocks must be non-empty',
    ],
    [
      'a tool name with a dot',
      { tools: [{ name: 'fs.read', input_schema: { type: 'object' } }] },
      ANTHROPIC_HEADERS,
      'tools.0.custom.name: String should match pattern',
    ],
    ['a tool without input_schema', { tools: [{ name: 'read' }] }, ANTHROPIC_HEADERS, 'tools.0.custom.input_schema: Field required'],
    [
      'a tool_use id with a dot',
      { messages: [...USER, use('call.1'), results('call.1')] },
      ANTHROPIC_HEADERS,
      "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
    ],
    [
      'tool input sent as a string',
      { messages: [...USER, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'r', input: '{}' }] }, results('t')] },
      ANTHROPIC_HEADERS,
      'tool_use.input: Input should be a valid dictionary',
    ],
    [
      'a thinking budget not below max_tokens',
      { max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 4096 } },
      ANTHROPIC_HEADERS,
      '`max_tokens` must be greater than `thinking.budget_tokens`',
    ],
  ])('rejects %s', async (_name, body, headers, message) => {
    const s = await start([text('unused'), text('still unused')]);
    expect(await rejected(body, headers)).toContain(message);
    // A rejected request takes no turn.
    expect(foldAnthropic((await stream(s)).events).text).toBe('unused');
  });
});
