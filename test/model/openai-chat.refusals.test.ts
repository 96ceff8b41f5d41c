/**
 * Servers that refuse a parameter: `stream_options` (Azure OpenAI before api-version
 * 2024-09-01, strict gateways) and `max_tokens` (reasoning models behind Azure OpenAI and
 * proxies). The Chat Completions adapter asks again in the form the server takes, and
 * sends that form from then on. On a real local HTTP server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { forgetRefusals } from '../../src/model/providers/chat-refusals.js';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import { sseBody, startServer } from './fixture-server.js';
import type { RecordedRequest, ScriptedResponse, TestServer } from './fixture-server.js';
import { collect, expectWellFormed, testModel, textOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  forgetRefusals();
});

const SSE = { 'content-type': 'text/event-stream' };
const JSON_TYPE = { 'content-type': 'application/json' };
const GATEWAY_REFUSAL = JSON.stringify({
  error: {
    message: "Unknown parameter: 'stream_options'.",
    type: 'invalid_request_error',
    param: 'stream_options',
    code: 'unknown_parameter',
  },
});
const AZURE_REFUSAL = JSON.stringify({
  error: { message: 'Unrecognized request argument supplied: stream_options', type: 'invalid_request_error', param: null, code: null },
});

const answer: ScriptedResponse = {
  headers: SSE,
  body: sseBody([
    { id: 'c', choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }] },
    { id: 'c', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  ]),
};

/** A server that refuses any request carrying `stream_options` with `refusal`, and answers the others. */
function strict(refusal: ScriptedResponse) {
  return (request: RecordedRequest): ScriptedResponse =>
    (request.json as Record<string, unknown>).stream_options !== undefined ? refusal : answer;
}

const sent = (s: TestServer) => s.requests.map((r) => 'stream_options' in (r.json as Record<string, unknown>));

async function ask(s: TestServer, options: { stream?: boolean; maxTokens?: number } = {}, model = 'gpt-4o') {
  const result = await collect(
    streamOpenAIChat(testModel(s.baseUrl, { id: model }), { messages: [{ role: 'user', content: 'hi' }] }, options),
  );
  expectWellFormed(result.events, result.message);
  return result;
}

describe('openai-chat and servers that refuse stream_options', () => {
  it('asks again without it after a gateway\'s 400 "Unknown parameter", and never sends it there again', async () => {
    server = await startServer(strict({ status: 400, headers: JSON_TYPE, body: GATEWAY_REFUSAL }));
    const first = await ask(server);
    expect(first.message.stopReason).toBe('stop');
    expect(textOf(first.message)).toBe('Hello');
    // One `start`: the refused request is invisible to the consumer.
    expect(first.events.filter((e) => e.type === 'start')).toHaveLength(1);
    expect(sent(server)).toEqual([true, false]);
    const second = await ask(server);
    expect(textOf(second.message)).toBe('Hello');
    expect(sent(server)).toEqual([true, false, false]);
    expect((server.requests[2]!.json as Record<string, unknown>).stream).toBe(true);
  });

  it('does the same for Azure\'s "Unrecognized request argument supplied" and for a 422', async () => {
    server = await startServer(strict({ status: 400, headers: JSON_TYPE, body: AZURE_REFUSAL }));
    expect(textOf((await ask(server)).message)).toBe('Hello');
    expect(sent(server)).toEqual([true, false]);
    await server.close();
    server = await startServer(
      strict({
        status: 422,
        headers: JSON_TYPE,
        body: JSON.stringify({ detail: [{ loc: ['body', 'stream_options'], msg: 'Extra inputs are not permitted' }] }),
      }),
    );
    expect(textOf((await ask(server)).message)).toBe('Hello');
    expect(sent(server)).toEqual([true, false]);
  });

  it('another 400 is the error it is, sent once, and the next request still carries stream_options', async () => {
    server = await startServer([
      {
        status: 400,
        headers: JSON_TYPE,
        body: JSON.stringify({
          error: { message: "Invalid value for 'temperature'", type: 'invalid_request_error', param: 'temperature' },
        }),
      },
      answer,
    ]);
    const { message } = await ask(server);
    expect(message.stopReason).toBe('error');
    expect(message.error?.message).toContain('temperature');
    expect(sent(server)).toEqual([true]);
    await ask(server);
    expect(sent(server)).toEqual([true, true]);
  });

  it('asks again only once: a server that still refuses ends with its error', async () => {
    server = await startServer(() => ({ status: 400, headers: JSON_TYPE, body: GATEWAY_REFUSAL }));
    const { message } = await ask(server);
    expect(message.stopReason).toBe('error');
    expect(message.error?.message).toContain('stream_options');
    expect(server.requests).toHaveLength(2);
  });

  it('a request without streaming never carried it, so its 400 is not taken for a refusal of it', async () => {
    server = await startServer([{ status: 400, headers: JSON_TYPE, body: GATEWAY_REFUSAL }, answer]);
    const { message } = await ask(server, { stream: false });
    expect(message.stopReason).toBe('error');
    expect(sent(server)).toEqual([false]);
    await ask(server);
    expect(sent(server)).toEqual([false, true]);
  });

  it("only the error's own words count: a 422 that echoes the request naming stream_options is not a refusal of it", async () => {
    // FastAPI / pydantic servers echo the request under detail[].input.
    const echo = JSON.stringify({
      detail: [
        {
          type: 'missing',
          loc: ['body', 'messages', 0, 'content'],
          msg: 'Field required',
          input: { role: 'user', stream_options: { include_usage: true } },
        },
      ],
    });
    server = await startServer([{ status: 422, headers: JSON_TYPE, body: echo }, answer]);
    const { message } = await ask(server);
    expect(message.stopReason).toBe('error');
    await ask(server);
    expect(sent(server)).toEqual([true, true]);
  });

  it('an abort while the refusal is read sends nothing more', async () => {
    const controller = new AbortController();
    server = await startServer(() => {
      controller.abort();
      return { status: 400, headers: JSON_TYPE, body: GATEWAY_REFUSAL };
    });
    const result = await collect(
      streamOpenAIChat(testModel(server.baseUrl), { messages: [{ role: 'user', content: 'hi' }] }, { signal: controller.signal }),
    );
    expectWellFormed(result.events, result.message);
    expect(result.message.stopReason).toBe('aborted');
    expect(server.requests).toHaveLength(1);
  });

  it('concurrent requests refused together each ask again without it', async () => {
    server = await startServer(strict({ status: 400, headers: JSON_TYPE, body: GATEWAY_REFUSAL }));
    const results = await Promise.all([ask(server), ask(server), ask(server)]);
    for (const { message } of results) expect(textOf(message)).toBe('Hello');
    expect(sent(server).filter((s) => !s)).toHaveLength(3);
  });
});

const MAX_TOKENS_REFUSAL = JSON.stringify({
  error: {
    message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    type: 'invalid_request_error',
    param: 'max_tokens',
    code: 'unsupported_parameter',
  },
});

/** What a request sent as its output limit. */
const limits = (s: TestServer) =>
  s.requests.map((r) => {
    const body = r.json as Record<string, unknown>;
    return 'max_tokens' in body
      ? `max_tokens=${String(body.max_tokens)}`
      : 'max_completion_tokens' in body
        ? `max_completion_tokens=${String(body.max_completion_tokens)}`
        : 'none';
  });

describe('openai-chat and models that refuse max_tokens', () => {
  it('sends the limit again as max_completion_tokens, and from then on for that model only', async () => {
    server = await startServer((request) => {
      const body = request.json as Record<string, unknown>;
      return body.model === 'o3' && 'max_tokens' in body ? { status: 400, headers: JSON_TYPE, body: MAX_TOKENS_REFUSAL } : answer;
    });
    expect(textOf((await ask(server, { maxTokens: 500 }, 'o3')).message)).toBe('Hello');
    expect(limits(server)).toEqual(['max_tokens=500', 'max_completion_tokens=500']);
    await ask(server, { maxTokens: 300 }, 'o3');
    await ask(server, { maxTokens: 300 }, 'gpt-4o');
    expect(limits(server)).toEqual(['max_tokens=500', 'max_completion_tokens=500', 'max_completion_tokens=300', 'max_tokens=300']);
  });

  it('a server that refuses both stream_options and max_tokens is asked until it takes the request', async () => {
    server = await startServer((request) => {
      const body = request.json as Record<string, unknown>;
      if ('stream_options' in body) return { status: 400, headers: JSON_TYPE, body: GATEWAY_REFUSAL };
      if ('max_tokens' in body) return { status: 400, headers: JSON_TYPE, body: MAX_TOKENS_REFUSAL };
      return answer;
    });
    expect(textOf((await ask(server, { maxTokens: 64 }, 'o3')).message)).toBe('Hello');
    expect(server.requests).toHaveLength(3);
    expect(sent(server)).toEqual([true, false, false]);
    expect(limits(server)).toEqual(['max_tokens=64', 'max_tokens=64', 'max_completion_tokens=64']);
  });

  it("vLLM's \"'max_tokens' or 'max_completion_tokens' is too large\" is about the context, not a refusal of the name", async () => {
    const tooLarge = JSON.stringify({
      object: 'error',
      message:
        "'max_tokens' or 'max_completion_tokens' is too large: 5000. This model's maximum context length is 4096 tokens and your request has 120 input tokens (5000 > 4096 - 120).",
      type: 'BadRequestError',
      param: null,
      code: 400,
    });
    server = await startServer([{ status: 400, headers: JSON_TYPE, body: tooLarge }, answer]);
    const { message } = await ask(server, { maxTokens: 5000 }, 'qwen');
    expect(message.stopReason).toBe('error');
    expect(message.error?.message).toContain('too large');
    await ask(server, { maxTokens: 100 }, 'qwen');
    expect(limits(server)).toEqual(['max_tokens=5000', 'max_tokens=100']);
  });

  it('a request without a limit never carried max_tokens, so such a 400 is the error it is', async () => {
    server = await startServer(() => ({ status: 400, headers: JSON_TYPE, body: MAX_TOKENS_REFUSAL }));
    const { message } = await ask(server, {}, 'o3');
    expect(message.stopReason).toBe('error');
    expect(server.requests).toHaveLength(1);
  });
});

describe('openai-chat and thinking (reasoning_effort)', () => {
  const effortOf = (s: TestServer) => s.requests.map((r) => (r.json as Record<string, unknown>).reasoning_effort);

  it('sends the thinking level as reasoning_effort; off sends none', async () => {
    server = await startServer(() => answer);
    await collect(
      streamOpenAIChat(testModel(server.baseUrl, { id: 'o3-mini' }), { messages: [{ role: 'user', content: 'hi' }] }, { thinking: 'high' }),
    );
    await collect(
      streamOpenAIChat(testModel(server.baseUrl, { id: 'o3-mini' }), { messages: [{ role: 'user', content: 'hi' }] }, { thinking: 'off' }),
    );
    await collect(streamOpenAIChat(testModel(server.baseUrl, { id: 'o3-mini' }), { messages: [{ role: 'user', content: 'hi' }] }));
    expect(effortOf(server)).toEqual(['high', undefined, undefined]);
  });

  it('a model that refuses it is asked again without it, and not sent it again', async () => {
    const refusal = JSON.stringify({
      error: {
        message: "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
        type: 'invalid_request_error',
        param: 'reasoning_effort',
        code: 'unsupported_parameter',
      },
    });
    server = await startServer((request) =>
      (request.json as Record<string, unknown>).reasoning_effort !== undefined
        ? { status: 400, headers: JSON_TYPE, body: refusal }
        : answer,
    );
    const ask = () =>
      collect(
        streamOpenAIChat(
          testModel(server!.baseUrl, { id: 'gpt-4o' }),
          { messages: [{ role: 'user', content: 'hi' }] },
          { thinking: 'low' },
        ),
      );
    expect(textOf((await ask()).message)).toBe('Hello');
    expect(textOf((await ask()).message)).toBe('Hello');
    expect(effortOf(server)).toEqual(['low', undefined, undefined]);
  });
});
