import { afterEach, describe, expect, it } from 'vitest';
import { fault, startScriptedServer, text, type ScriptedServer, type ScriptTurn } from '../../src/testing/index.js';
import { readUntilEnd, type Wire } from './helpers.js';
import { foldResponseBody, foldResponses, parseEvents, postTo, recordedJson, recording, unrecordedFields } from './wire-client.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(script: ScriptTurn[], chunkSize?: number): Promise<ScriptedServer> {
  server = await startScriptedServer(chunkSize === undefined ? { script } : { script, chunkSize });
  return server;
}

function responses(s: ScriptedServer, body: Record<string, unknown>): Promise<Response> {
  return postTo(s.url, '/responses', { model: 'gpt-test', input: 'hi', ...body });
}

async function stream(s: ScriptedServer, body: Record<string, unknown> = {}) {
  const response = await responses(s, { stream: true, ...body });
  return { response, events: parseEvents(await response.text()) };
}

const RICH: ScriptTurn = {
  thinking: 'Two independent lookups: call both.',
  text: 'Checking both.',
  toolCalls: [
    { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } },
    { name: 'get_time', arguments: { zone: 'Europe/Paris' } },
  ],
};

describe('scripted server: OpenAI Responses streaming', () => {
  it('streams text from response.created to response.completed, numbered, with no [DONE]', async () => {
    const s = await start([text('The capital of France is Paris.')]);
    const { response, events } = await stream(s);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    for (const { event, data } of events) expect(event).toBe(data.type);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.data.type);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((t) => t === 'response.output_text.delta').length).toBeGreaterThan(1);
    expect(foldResponses(events)).toMatchObject({ text: 'The capital of France is Paris.', stop: 'completed', calls: [] });
    expect(events[0]!.data.response).toMatchObject({
      id: 'resp_scripted_1',
      object: 'response',
      status: 'in_progress',
      model: 'gpt-test',
      output: [],
    });
  });

  it('streams a reasoning summary, a message and parallel function calls as output items', async () => {
    const s = await start([RICH], 6);
    const { events } = await stream(s);
    const folded = foldResponses(events);
    expect(folded).toMatchObject({ thinking: RICH.thinking, text: 'Checking both.', stop: 'completed' });
    expect(folded.calls.map((c) => [c.id, c.name, JSON.parse(c.arguments)])).toEqual([
      ['call_1', 'get_weather', { city: 'Paris', unit: 'celsius' }],
      ['call_2', 'get_time', { zone: 'Europe/Paris' }],
    ]);
    const added = events
      .filter((e) => e.data.type === 'response.output_item.added')
      .map((e) => [e.data.output_index, e.data.item.type, e.data.item.id.slice(0, 3)]);
    expect(added).toEqual([
      [0, 'reasoning', 'rs_'],
      [1, 'message', 'msg'],
      [2, 'function_call', 'fc_'],
      [3, 'function_call', 'fc_'],
    ]);
    expect(
      events.filter((e) => e.data.type === 'response.function_call_arguments.delta' && e.data.output_index === 2).length,
    ).toBeGreaterThan(2);
    const completed = events.at(-1)!.data.response;
    expect(completed.output.map((item: Wire) => item.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
  });

  it('sends only fields the recorded streams have, item by item', async () => {
    const s = await start([RICH]);
    const { events } = await stream(s);
    const recorded = [
      'stream-function-call.sse',
      'stream-function-call-turn2-text.sse',
      'stream-reasoning-summary.sse',
      'stream-text-single-delta.sse',
      'stream-reasoning-function-call.sse',
    ].flatMap((f) => recording(`openai-responses/${f}`));
    const kind = (d: Wire): string => `${d.type}:${d.item?.type ?? ''}`;
    const { extra, unmatched } = unrecordedFields(
      events.map((e) => e.data),
      recorded.map((e) => e.data),
      kind,
    );
    expect(extra).toEqual([]);
    expect(unmatched).toEqual([]);
  });

  it('a client decodes a recording and our stream the same way', () => {
    const real = foldResponses(recording('openai-responses/stream-function-call.sse'));
    expect(real).toMatchObject({ stop: 'completed', calls: [{ name: 'get_capital', arguments: '{"country":"France"}' }] });
    expect(real.usage).toMatchObject({ input_tokens: 255, output_tokens: 16 });
  });

  it('returns encrypted reasoning when the request includes it', async () => {
    const s = await start([RICH, RICH]);
    const { events } = await stream(s, { include: ['reasoning.encrypted_content'], store: false });
    const done = events.find((e) => e.data.type === 'response.output_item.done' && e.data.item.type === 'reasoning')!;
    expect(done.data.item.encrypted_content).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const plain = (await stream(s)).events.find((e) => e.data.type === 'response.output_item.done' && e.data.item.type === 'reasoning')!;
    expect(plain.data.item.encrypted_content).toBeUndefined();
  });

  it('reports usage with input/output token details', async () => {
    const s = await start([
      text('ok', {
        thinking: 'hm',
        usage: {
          prompt_tokens: 50,
          completion_tokens: 9,
          prompt_tokens_details: { cached_tokens: 20 },
          completion_tokens_details: { reasoning_tokens: 4 },
        },
      }),
    ]);
    expect(foldResponses((await stream(s)).events).usage).toEqual({
      input_tokens: 50,
      input_tokens_details: { cached_tokens: 20 },
      output_tokens: 9,
      output_tokens_details: { reasoning_tokens: 4 },
      total_tokens: 59,
    });
  });

  it('ends with response.incomplete (max_output_tokens) when the turn stops for length', async () => {
    const s = await start([text('cut sho', { finishReason: 'length' })]);
    const { events } = await stream(s);
    const last = events.at(-1)!.data;
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });
});

describe('scripted server: OpenAI Responses JSON', () => {
  it('answers the response object with its output items', async () => {
    const s = await start([RICH]);
    const response = await responses(s, {});
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as Wire;
    expect(foldResponseBody(body)).toMatchObject({ thinking: RICH.thinking, text: 'Checking both.', stop: 'completed' });
    expect(foldResponseBody(body).calls.map((c) => c.name)).toEqual(['get_weather', 'get_time']);
    expect(body.usage).toMatchObject({
      input_tokens: expect.any(Number),
      output_tokens_details: { reasoning_tokens: Math.ceil(RICH.thinking!.length / 4) },
    });
    expect(body.usage.total_tokens).toBe(body.usage.input_tokens + body.usage.output_tokens);
    // The JSON recordings hold no message item; the completed responses of the streams do.
    const completed = ['stream-function-call-turn2-text.sse', 'stream-reasoning-summary.sse']
      .flatMap((f) => recording(`openai-responses/${f}`))
      .filter((e) => e.data.type === 'response.completed')
      .map((e) => e.data.response as Wire);
    const recorded = [
      recordedJson('openai-responses/nonstream-parallel-function-calls.json'),
      recordedJson('openai-responses/nonstream-reasoning-function-call.json'),
      ...completed,
    ];
    expect(unrecordedFields([body], recorded, () => 'response').extra).toEqual([]);
  });
});

describe('scripted server: OpenAI Responses faults', () => {
  it('ends a 200 stream with an error event and response.failed carrying the error', async () => {
    const s = await start([
      fault(
        { type: 'error_in_stream', message: 'An error occurred while processing your request.', code: 'server_error' },
        { text: 'partial' },
      ),
    ]);
    const { response, events } = await stream(s);
    expect(response.status).toBe(200);
    const types = events.map((e) => e.data.type);
    expect(types.slice(-2)).toEqual(['error', 'response.failed']);
    expect(types).not.toContain('response.completed');
    expect(events.at(-2)!.data.error).toEqual({
      type: 'server_error',
      code: 'server_error',
      message: 'An error occurred while processing your request.',
      param: null,
    });
    expect(events.at(-1)!.data.response).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'An error occurred while processing your request.' },
    });
    expect(foldResponses(events).text).toBe('partial');
    // The recorded failure has the same two events, in the same shape.
    const real = recording('openai-responses/stream-error-insufficient-quota.chunks.jsonl');
    expect(
      unrecordedFields(
        events.slice(-2).map((e) => e.data),
        real.map((e) => e.data),
        (d) => String(d.type),
      ).extra,
    ).toEqual([]);
  });

  it('answers status faults with the OpenAI body and retry-after', async () => {
    const s = await start([fault({ type: 'status', status: 429, retryAfter: 2 }), fault({ type: 'error_in_stream', message: 'boom' })]);
    const limited = await responses(s, { stream: true });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(((await limited.json()) as Wire).error.code).toBe('rate_limit_exceeded');
    const failed = await responses(s, {});
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as Wire).error).toMatchObject({ message: 'boom', type: 'server_error' });
  });

  it('cuts the stream after N events, without a terminal event', async () => {
    const s = await start([fault({ type: 'cut', afterChunks: 4 }, { text: 'an answer that gets cut off somewhere' })]);
    const { text: received, error } = await readUntilEnd(await responses(s, { stream: true }));
    expect(error).toBeDefined();
    expect(parseEvents(received)).toHaveLength(4);
  });
});

describe('scripted server: OpenAI Responses validation', () => {
  const call = (id: string, name = 'read') => ({ type: 'function_call', call_id: id, name, arguments: '{}' });
  const output = (id: string) => ({ type: 'function_call_output', call_id: id, output: 'ok' });
  const user = { role: 'user', content: 'hi' };

  async function rejected(body: Record<string, unknown>): Promise<Wire> {
    const s = server ?? (await start([text('unused')]));
    const response = await responses(s, body);
    expect(response.status).toBe(400);
    const error = ((await response.json()) as Wire).error;
    expect(error.type).toBe('invalid_request_error');
    return error;
  }

  it('accepts a valid history: reasoning, message and calls sent back, outputs in any order', async () => {
    const s = await start([RICH, text('done')]);
    const first = (await responses(s, { input: [user] }).then((r) => r.json())) as Wire;
    const input = [
      user,
      ...first.output,
      output('call_2'),
      output('call_1'),
      { role: 'user', content: [{ type: 'input_text', text: 'and?' }] },
    ];
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }];
    const response = await responses(s, { input, tools, instructions: 'Be brief.' });
    expect(response.status).toBe(200);
    expect(s.received[1]!.request).toMatchObject({ api: 'openai-responses', system: 'Be brief.', toolNames: ['get_weather'] });
  });

  it('rejects a function_call without its output', async () => {
    const error = await rejected({ input: [user, call('call_a'), call('call_b'), output('call_a')] });
    expect(error).toMatchObject({ message: 'No tool output found for function call call_b.', param: 'input' });
  });

  it('rejects an output whose call_id no earlier function_call has', async () => {
    const error = await rejected({ input: [user, call('call_a'), output('call_a'), output('call_x')] });
    expect(error.message).toBe('No tool call found for function call output with call_id call_x.');
    expect((await rejected({ input: [user, output('call_a'), call('call_a')] })).message).toContain('No tool call found');
  });

  it.each([
    ['no model', { model: undefined }, "Missing required parameter: 'model'."],
    [
      'a call id sent as the item id',
      { input: [user, { ...call('call_a'), id: 'call_a' }, output('call_a')] },
      "Expected an ID that begins with 'fc'.",
    ],
    [
      'arguments sent as an object',
      { input: [user, { ...call('c'), arguments: {} }, output('c')] },
      "Invalid type for 'input[1].arguments'",
    ],
    [
      'input_text in an assistant message',
      { input: [user, { role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }] },
      "Supported values are: 'output_text' and 'refusal'.",
    ],
    [
      'a Chat Completions tool',
      { tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }] },
      "Missing required parameter: 'tools[0].name'.",
    ],
    ['a tool name with a dot', { tools: [{ type: 'function', name: 'fs.read' }] }, 'string does not match pattern'],
    [
      'a previous_response_id (the server keeps no state)',
      { previous_response_id: 'resp_1' },
      "Previous response with id 'resp_1' not found.",
    ],
    ['a tool role message', { input: [{ role: 'tool', content: 'x' }] }, "Invalid value: 'tool'."],
    ['max_output_tokens below 16', { max_output_tokens: 5 }, 'Expected a value >= 16, but got 5 instead.'],
  ])('rejects %s', async (_name, body, message) => {
    const s = await start([text('first')]);
    expect((await rejected(body)).message).toContain(message);
    expect(foldResponses((await stream(s)).events).text).toBe('first');
  });
});
