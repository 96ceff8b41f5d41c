import { afterEach, describe, expect, it } from 'vitest';
import { fault, startScriptedServer, text, type ScriptedServer, type ScriptTurn } from '../../src/testing/index.js';
import { readUntilEnd, type Wire } from './helpers.js';
import { foldGemini, parseEvents, postTo, recordedJson, recording, unrecordedFields } from './wire-client.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(script: ScriptTurn[], chunkSize?: number): Promise<ScriptedServer> {
  server = await startScriptedServer(chunkSize === undefined ? { script } : { script, chunkSize });
  return server;
}

const USER = [{ role: 'user', parts: [{ text: 'hi' }] }];
const SSE = '/v1beta/models/gemini-test:streamGenerateContent?alt=sse';
const JSON_PATH = '/v1beta/models/gemini-test:generateContent';

function generate(s: ScriptedServer, body: Record<string, unknown>, path = JSON_PATH): Promise<Response> {
  return postTo(s.origin, path, { contents: USER, ...body });
}

async function stream(s: ScriptedServer, body: Record<string, unknown> = {}) {
  const response = await generate(s, body, SSE);
  const raw = await response.text();
  return { response, raw, chunks: parseEvents(raw).map((e) => e.data) };
}

const RICH: ScriptTurn = {
  thinking: 'Both cities at once.',
  text: 'Checking both.',
  toolCalls: [
    { name: 'get_current_temperature', arguments: { city: 'Paris' } },
    { name: 'get_current_temperature', arguments: { city: 'London' } },
  ],
};

describe('scripted server: Gemini streaming', () => {
  it('streams text chunks as data: events separated by CRLF, the finish and usage on the last', async () => {
    const s = await start([text('The capital of France is Paris.')]);
    const { response, raw, chunks } = await stream(s);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(raw).not.toMatch(/^event:/m);
    expect(raw.split('\r\n\r\n').filter(Boolean)).toHaveLength(chunks.length);
    expect(chunks.length).toBeGreaterThan(2);
    expect(foldGemini(chunks)).toMatchObject({ text: 'The capital of France is Paris.', stop: 'STOP', calls: [] });
    expect(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    expect(chunks[0]).toMatchObject({ modelVersion: 'gemini-test', candidates: [{ content: { role: 'model' }, index: 0 }] });
  });

  it('streams thought parts, then text, then every function call in one chunk with a thoughtSignature on the first', async () => {
    const s = await start([RICH, RICH], 5);
    const { chunks } = await stream(s);
    const folded = foldGemini(chunks);
    expect(folded).toMatchObject({ thinking: 'Both cities at once.', text: 'Checking both.', stop: 'STOP' });
    expect(folded.calls).toEqual([
      { name: 'get_current_temperature', arguments: '{"city":"Paris"}' },
      { name: 'get_current_temperature', arguments: '{"city":"London"}' },
    ]);
    const callChunk = chunks.at(-1)!.candidates[0].content.parts;
    expect(callChunk).toHaveLength(2);
    expect(typeof callChunk[0].thoughtSignature).toBe('string');
    expect(callChunk[1].thoughtSignature).toBeUndefined();
    expect(callChunk[0].functionCall.id).toBeUndefined();
    // The same turn signs the same.
    expect(foldGemini((await stream(s)).chunks).signatures).toEqual(folded.signatures);
  });

  it('signs a thinking turn without calls in a last, empty text part', async () => {
    const s = await start([text('Four.', { thinking: 'Two plus two.' })]);
    const last = (await stream(s)).chunks.at(-1)!.candidates[0];
    expect(last.content.parts).toEqual([{ text: '', thoughtSignature: expect.any(String) }]);
    expect(last.finishReason).toBe('STOP');
  });

  it('sends only fields the recorded streams have', async () => {
    const s = await start([RICH]);
    const { chunks } = await stream(s);
    const recorded = [
      'stream-function-call-thought-signature.sse',
      'stream-parallel-function-calls.sse',
      'stream-thinking.sse',
      'stream-text.sse',
      'stream-function-call-turn2-text.sse',
    ].flatMap((f) => recording(`gemini/${f}`).map((e) => e.data));
    expect(unrecordedFields(chunks, recorded, () => 'chunk')).toEqual({ extra: [], unmatched: [] });
  });

  it('a client decodes a recording and our stream the same way', () => {
    const real = foldGemini(recording('gemini/stream-function-call-thought-signature.sse').map((e) => e.data));
    expect(real).toMatchObject({ stop: 'STOP', calls: [{ name: 'get_country', arguments: '{}' }], text: '' });
    expect(real.signatures).toHaveLength(1);
  });

  it('reports usage the Gemini way: thoughts apart from candidates', async () => {
    const s = await start([
      text('ok', {
        thinking: 'hm',
        usage: {
          prompt_tokens: 30,
          completion_tokens: 10,
          prompt_tokens_details: { cached_tokens: 5 },
          completion_tokens_details: { reasoning_tokens: 6 },
        },
      }),
    ]);
    const { chunks } = await stream(s);
    expect(chunks.at(-1)!.usageMetadata).toMatchObject({
      promptTokenCount: 30,
      candidatesTokenCount: 4,
      thoughtsTokenCount: 6,
      cachedContentTokenCount: 5,
      totalTokenCount: 40,
    });
    expect(chunks[0]!.usageMetadata).toEqual({
      promptTokenCount: 30,
      totalTokenCount: 30,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: 30 }],
    });
  });

  it('maps finish reasons: length → MAX_TOKENS, content_filter → SAFETY', async () => {
    const s = await start([text('cut', { finishReason: 'length' }), text('no', { finishReason: 'content_filter' })]);
    expect(foldGemini((await stream(s)).chunks).stop).toBe('MAX_TOKENS');
    expect(foldGemini((await stream(s)).chunks).stop).toBe('SAFETY');
  });

  it('streams one JSON array without alt=sse', async () => {
    const s = await start([text('abcdefghijklmnopqrstuvwxyz')]);
    const response = await generate(s, {}, '/v1beta/models/gemini-test:streamGenerateContent');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const chunks = (await response.json()) as Wire[];
    expect(chunks.length).toBeGreaterThan(1);
    expect(foldGemini(chunks)).toMatchObject({ text: 'abcdefghijklmnopqrstuvwxyz', stop: 'STOP' });
  });
});

describe('scripted server: Gemini JSON', () => {
  it('answers one GenerateContentResponse in the recorded shape', async () => {
    const s = await start([RICH]);
    const body = (await (await generate(s, {})).json()) as Wire;
    expect(foldGemini([body])).toMatchObject({ thinking: 'Both cities at once.', text: 'Checking both.', stop: 'STOP' });
    expect(foldGemini([body]).calls.map((c) => c.arguments)).toEqual(['{"city":"Paris"}', '{"city":"London"}']);
    const usage = body.usageMetadata;
    expect(usage.thoughtsTokenCount).toBe(Math.ceil(RICH.thinking!.length / 4));
    expect(usage.totalTokenCount).toBe(usage.promptTokenCount + usage.candidatesTokenCount + usage.thoughtsTokenCount);
    expect(
      unrecordedFields(
        [body],
        [recordedJson('gemini/nonstream-parallel-function-calls.json'), ...recording('gemini/stream-thinking.sse').map((e) => e.data)],
        () => 'body',
      ).extra,
    ).toEqual([]);
  });
});

describe('scripted server: Gemini faults', () => {
  it('answers 429 RESOURCE_EXHAUSTED with a RetryInfo retryDelay from retryAfter, and no retry-after header', async () => {
    const s = await start([
      fault({ type: 'status', status: 429, retryAfter: 1 }),
      fault({ type: 'status', status: 429, retryAfterMs: 1500 }),
    ]);
    const response = await generate(s, {}, SSE);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBeNull();
    const { error } = (await response.json()) as Wire;
    expect(error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(error.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' });
    const fractional = ((await (await generate(s, {})).json()) as Wire).error;
    expect(fractional.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' });
  });

  it('answers a bad key (status 401) with Gemini’s 400 API_KEY_INVALID, as recorded', async () => {
    const s = await start([fault({ type: 'status', status: 401 })]);
    const response = await generate(s, {});
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(recordedJson('gemini/error-400-api-key-invalid.json'));
  });

  it('answers 503 UNAVAILABLE and 404 NOT_FOUND naming the model', async () => {
    const s = await start([fault({ type: 'status', status: 503 }), fault({ type: 'status', status: 404 })]);
    expect(((await (await generate(s, {})).json()) as Wire).error).toMatchObject({ code: 503, status: 'UNAVAILABLE' });
    expect(((await (await generate(s, {})).json()) as Wire).error.message).toMatch(/^models\/gemini-test is not found/);
  });

  it('ends a 200 stream with an error chunk after the content', async () => {
    const s = await start([
      fault({ type: 'error_in_stream', message: 'The model is overloaded.', code: 'UNAVAILABLE' }, { text: 'partial' }),
      fault({ type: 'error_in_stream', message: 'boom' }),
    ]);
    const { response, chunks } = await stream(s);
    expect(response.status).toBe(200);
    expect(chunks.at(-1)).toEqual({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } });
    expect(foldGemini(chunks).text).toBe('partial');
    const json = await generate(s, {});
    expect(json.status).toBe(500);
    expect(await json.json()).toEqual({ error: { code: 500, message: 'boom', status: 'INTERNAL' } });
  });

  it('cuts the stream after N chunks', async () => {
    const s = await start([fault({ type: 'cut', afterChunks: 2 }, { text: 'a long answer that takes a few chunks' })]);
    const { text: received, error } = await readUntilEnd(await generate(s, {}, SSE));
    expect(error).toBeDefined();
    expect(parseEvents(received)).toHaveLength(2);
  });
});

describe('scripted server: Gemini validation', () => {
  const call = (name: string, extra: Record<string, unknown> = {}) => ({ functionCall: { name, args: {}, ...extra } });
  const answer = (name: string, extra: Record<string, unknown> = {}) => ({
    functionResponse: { name, response: { output: 'ok' }, ...extra },
  });
  const model = (...parts: unknown[]) => ({ role: 'model', parts });
  const user = (...parts: unknown[]) => ({ role: 'user', parts });

  async function rejected(body: Record<string, unknown>): Promise<string> {
    const s = server ?? (await start([text('unused')]));
    const response = await generate(s, body);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as Wire;
    expect(error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    return error.message as string;
  }

  it('accepts a valid history: signed calls sent back, responses by name in any order', async () => {
    const s = await start([RICH, text('done')]);
    const first = (await (await generate(s, {})).json()) as Wire;
    const contents = [
      ...USER,
      first.candidates[0].content,
      user(answer('get_current_temperature'), answer('get_current_temperature'), { text: 'and?' }),
    ];
    const tools = [{ functionDeclarations: [{ name: 'get_current_temperature', description: 't', parameters: { type: 'object' } }] }];
    const response = await generate(s, {
      contents,
      tools,
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 100 },
    });
    expect(response.status).toBe(200);
    expect(s.received[1]!.request).toMatchObject({
      api: 'gemini',
      model: 'gemini-test',
      system: 'Be brief.',
      toolNames: ['get_current_temperature'],
    });
  });

  it('rejects a function call turn not answered by as many function responses', async () => {
    expect(await rejected({ contents: [...USER, model(call('a'), call('b')), user(answer('a'))] })).toBe(
      'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
    );
    expect(await rejected({ contents: [...USER, model(call('a')), user({ text: 'next' })] })).toContain(
      'number of function response parts',
    );
    expect(await rejected({ contents: [...USER, model(call('a'))] })).toContain('number of function response parts');
  });

  it('rejects a function response that answers no call of the previous turn', async () => {
    expect(await rejected({ contents: [...USER, model(call('a')), user(answer('b'))] })).toContain(
      '"b" answers no function call of the previous turn (a)',
    );
    expect(await rejected({ contents: [...USER, model(call('a', { id: 'x1' })), user(answer('a', { id: 'x2' }))] })).toContain(
      'answers no function call',
    );
    expect(await rejected({ contents: [...USER, model({ text: 'hello' }), user(answer('a'))] })).toBe(
      'Please ensure that function response turn comes immediately after a function call turn.',
    );
  });

  it.each([
    ['no contents', { contents: undefined }, 'contents is not specified'],
    [
      'two user turns in a row',
      { contents: [...USER, user({ text: 'again' })] },
      'Please ensure that multiturn requests alternate between user and model.',
    ],
    ['a first turn from the model', { contents: [model({ text: 'hi' })] }, 'alternate between user and model'],
    ['a function role', { contents: [{ role: 'function', parts: [{ text: 'x' }] }] }, 'Please use a valid role: user, model.'],
    [
      'a function response in a model turn',
      { contents: [...USER, model(answer('a'))] },
      'function response turn comes immediately after a function call turn',
    ],
    ['empty parts', { contents: [{ role: 'user', parts: [] }] }, 'contents.parts must not be empty'],
    ['a part with no data', { contents: [user({ thought: true })] }, "required oneof field 'data' must have one initialized field"],
    [
      'text and a call in one part',
      { contents: [...USER, model({ text: 'x', functionCall: { name: 'a', args: {} } }), user(answer('a'))] },
      "oneof field 'data' is already set",
    ],
    [
      'call args as a string',
      { contents: [...USER, model({ functionCall: { name: 'a', args: '{}' } }), user(answer('a'))] },
      "Invalid value at 'contents[1].parts[0].function_call.args'",
    ],
    [
      'a response that is a string',
      { contents: [...USER, model(call('a')), user({ functionResponse: { name: 'a', response: 'ok' } })] },
      "function_response.response' (type.googleapis.com/google.protobuf.Struct)",
    ],
    ['an unknown field', { system: 'x' }, 'Unknown name "system": Cannot find field.'],
    ['a function name with a space', { tools: [{ functionDeclarations: [{ name: 'get weather' }] }] }, 'Invalid function name.'],
  ])('rejects %s', async (_name, body, message) => {
    const s = await start([text('first')]);
    expect(await rejected(body)).toContain(message);
    expect(foldGemini((await stream(s)).chunks).text).toBe('first');
  });
});
