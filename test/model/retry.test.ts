import { afterEach, describe, expect, it } from 'vitest';
import { ReinError } from '../../src/errors.js';
import { EventStream } from '../../src/model/event-stream.js';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, streamWithRetry } from '../../src/model/retry.js';
import type { RetryPolicy } from '../../src/model/retry.js';
import type { AssistantMessage, AssistantStreamEvent, StreamFunction } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';
import { fixtureResponse, sseBody, startServer } from './fixture-server.js';
import type { ScriptedResponse, TestServer } from './fixture-server.js';
import { collect, testModel, textOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SSE = { 'content-type': 'text/event-stream' };
const OK = fixtureResponse('openai-chat/stream-text-usage.sse'); // "4200 + 42 equals 4242."
const instant: Partial<RetryPolicy> = { sleep: () => Promise.resolve() };

function retries(events: AssistantStreamEvent[]): Array<Extract<AssistantStreamEvent, { type: 'retry' }>> {
  return events.filter((e): e is Extract<AssistantStreamEvent, { type: 'retry' }> => e.type === 'retry');
}

async function runAgainst(responses: ScriptedResponse[], policy: Partial<RetryPolicy> = instant, signal?: AbortSignal) {
  server = await startServer(responses);
  return collect(
    streamWithRetry(streamOpenAIChat, testModel(server.baseUrl), { messages: [{ role: 'user', content: 'hi' }] }, { signal }, policy),
  );
}

describe('streamWithRetry', () => {
  it('retries a 429 after the retry-after delay, then succeeds', async () => {
    const { events, message } = await runAgainst([
      {
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': '1' },
        body: '{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}',
      },
      OK,
    ]);
    const [retry] = retries(events);
    expect(retry).toMatchObject({ attempt: 1, delayMs: 1000 });
    expect(retry?.error).toMatchObject({ code: 'rate_limited', retryAfterMs: 1000 });
    expect(message.stopReason).toBe('stop');
    expect(textOf(message)).toBe('4200 + 42 equals 4242.');
    expect(server?.requests).toHaveLength(2);
    expect(events[events.length - 1]?.type).toBe('done');
  });

  it('retries a 500, then succeeds', async () => {
    const { events, message } = await runAgainst([
      { status: 500, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"boom","type":"server_error"}}' },
      OK,
    ]);
    expect(retries(events).map((r) => r.error.code)).toEqual(['server_error']);
    expect(message.stopReason).toBe('stop');
    expect(server?.requests).toHaveLength(2);
  });

  it('retries a stream cut mid-body; the failed attempt’s text is not in the final message', async () => {
    const partial = sseBody([{ choices: [{ index: 0, delta: { content: 'PARTIAL-' }, finish_reason: null }] }], false);
    const { events, message } = await runAgainst([{ headers: SSE, body: [partial], cut: true }, OK]);
    const types = events.map((e) => e.type);
    // The partial text was streamed live, then voided by the retry event.
    expect(types.indexOf('text_delta')).toBeLessThan(types.indexOf('retry'));
    expect(retries(events).map((r) => r.error.code)).toEqual(['stream_cut']);
    expect(textOf(message)).toBe('4200 + 42 equals 4242.');
    expect(JSON.stringify(message)).not.toContain('PARTIAL');
  });

  it('does not retry a 401: exactly one request', async () => {
    const { events, message } = await runAgainst([fixtureResponse('openai-chat/error-401-invalid-api-key.json'), OK]);
    expect(retries(events)).toEqual([]);
    expect(message.error?.code).toBe('auth');
    expect(server?.requests).toHaveLength(1);
  });

  it('gives up after maxRetries with the last error, with growing delays', async () => {
    const fail: ScriptedResponse = { status: 503, headers: { 'content-type': 'text/plain' }, body: 'unavailable' };
    const { events, message } = await runAgainst([fail, fail, fail, OK], { ...instant, maxRetries: 2, jitter: false, baseDelayMs: 100 });
    expect(retries(events).map((r) => [r.attempt, r.delayMs])).toEqual([
      [1, 100],
      [2, 200],
    ]);
    expect(message.stopReason).toBe('error');
    expect(message.error?.code).toBe('server_error');
    expect(server?.requests).toHaveLength(3);
  });

  it('fails at once when the server asks to wait longer than maxDelayMs', async () => {
    const { events, message } = await runAgainst([{ status: 429, headers: { 'retry-after': '120' }, body: '' }, OK]);
    expect(retries(events)).toEqual([]);
    expect(message.error).toMatchObject({ code: 'rate_limited', retryAfterMs: 120_000 });
    expect(server?.requests).toHaveLength(1);
  });

  it('says why it did not retry when the server asks to wait longer than maxDelayMs, naming the wait, the cap and the option', async () => {
    const body = '{"error":{"message":"Rate limit reached. Please try again in 2m0s.","type":"tokens","code":"rate_limit_exceeded"}}';
    const { events, message } = await runAgainst([
      { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '120' }, body },
      OK,
    ]);
    const last = events[events.length - 1];
    if (last?.type !== 'error') throw new Error('expected an error');
    expect(last.error.message).toMatch(
      /Please try again in 2m0s\. Lower the concurrency .*\. Not retried: the server asked to wait 120 s, longer than the 60 s rein waits at most/,
    );
    expect(last.error.message).toContain('maxDelayMs');
    expect(last.error.message).not.toContain('Retried');
    expect(message.error).toEqual(last.error.toJSON());
    expect([last.error.code, last.error.status, last.error.retryAfterMs]).toEqual(['rate_limited', 429, 120_000]);
  });

  it('names a cap under a second in milliseconds, and fractions of seconds, as they are', async () => {
    const { events } = await runAgainst([{ status: 429, headers: { 'retry-after': '1.5' }, body: '' }, OK], {
      ...instant,
      maxDelayMs: 500,
    });
    const last = events[events.length - 1];
    if (last?.type !== 'error') throw new Error('expected an error');
    expect(last.error.message).toContain('Not retried: the server asked to wait 1.5 s, longer than the 500 ms rein waits at most');
  });

  it('an abort during the wait ends promptly with an aborted error', async () => {
    const controller = new AbortController();
    server = await startServer([{ status: 429, headers: { 'retry-after': '50' }, body: '' }, OK]);
    const stream = streamWithRetry(streamOpenAIChat, testModel(server.baseUrl), { messages: [] }, { signal: controller.signal });
    const started = Date.now();
    const events: AssistantStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'retry') controller.abort(); // the real 50 s sleep is now pending
    }
    const message = await stream.result();
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(message.stopReason).toBe('aborted');
    expect(message.error?.code).toBe('aborted');
    expect(events[events.length - 1]?.type).toBe('error');
    expect(server.requests).toHaveLength(1);
  });

  it('turns a throwing StreamFunction into an error event', async () => {
    const broken: StreamFunction = () => {
      throw new Error('kaboom');
    };
    const { events, message } = await collect(streamWithRetry(broken, testModel('http://127.0.0.1:1/v1'), { messages: [] }, {}, instant));
    expect(events.map((e) => e.type)).toEqual(['error']);
    expect(message.error?.message).toBe('kaboom');
  });

  it('retries transient errors of any StreamFunction and forwards all events', async () => {
    let calls = 0;
    const flaky: StreamFunction = (model) => {
      calls++;
      const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
      const message: AssistantMessage = {
        role: 'assistant',
        content: [],
        stopReason: 'stop',
        usage: emptyUsage(),
        provider: model.provider,
        model: model.id,
      };
      out.push({ type: 'start', provider: model.provider, model: model.id });
      if (calls === 1) {
        const error = new ReinError('overloaded', 'transient', 'busy');
        out.push({ type: 'error', error, message: { ...message, stopReason: 'error', error: error.toJSON() } });
      } else out.push({ type: 'done', message });
      out.end(message);
      return out;
    };
    const { events } = await collect(streamWithRetry(flaky, testModel('http://127.0.0.1:1/v1'), { messages: [] }, {}, instant));
    expect(events.map((e) => e.type)).toEqual(['start', 'retry', 'attempt', 'start', 'done']);
  });
});

describe('backoffDelay', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, jitter: false };
  it('doubles from baseDelayMs up to maxDelayMs', () => {
    expect([1, 2, 3, 4, 7, 10].map((n) => backoffDelay(n, undefined, policy))).toEqual([1000, 2000, 4000, 8000, 60_000, 60_000]);
  });

  it('equal jitter stays between half and the whole backoff', () => {
    const jittered = { ...policy, jitter: true };
    expect(backoffDelay(3, undefined, jittered, () => 0)).toBe(2000);
    expect(backoffDelay(3, undefined, jittered, () => 0.999999)).toBe(4000);
  });

  it('uses the server’s delay when longer, and refuses one above the cap', () => {
    expect(backoffDelay(1, 5000, policy)).toBe(5000);
    expect(backoffDelay(3, 10, policy)).toBe(4000);
    expect(backoffDelay(1, 60_000, policy)).toBe(60_000);
    expect(backoffDelay(1, 60_001, policy)).toBeUndefined();
  });
});
