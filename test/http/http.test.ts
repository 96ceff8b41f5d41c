import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { httpPost } from '../../src/http/client.js';
import { fixtureResponse, startServer } from '../model/fixture-server.js';
import type { TestServer } from '../model/fixture-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const post = (signal?: AbortSignal) =>
  httpPost(new URL(`${server?.baseUrl}/chat/completions`), { 'content-type': 'application/json' }, '{}', signal);

describe('httpPost and a shared abort signal', () => {
  it('many requests with one signal leave one abort listener on it, however many they are', async () => {
    server = await startServer(() => fixtureResponse('openai-chat/stream-text-usage.sse'));
    const controller = new AbortController();
    for (let i = 0; i < 5; i++) {
      const res = await post(controller.signal);
      await res.text(Number.POSITIVE_INFINITY);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    }
    // Concurrent requests share it too.
    const responses = await Promise.all([post(controller.signal), post(controller.signal), post(controller.signal)]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await Promise.all(responses.map((res) => res.text(Number.POSITIVE_INFINITY)));
    expect(server.requests).toHaveLength(8);
  });

  it('aborting the shared signal ends every request still reading, and later requests are refused at once', async () => {
    server = await startServer(() => ({ headers: { 'content-type': 'text/event-stream' }, body: ['data: {}\n\n'], hold: true }));
    const controller = new AbortController();
    const first = await post(controller.signal);
    const second = await post(controller.signal);
    const reading = [first.consume(() => {}), second.consume(() => {})];
    controller.abort(new Error('stop'));
    for (const outcome of await Promise.allSettled(reading)) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ name: 'AbortError' });
    }
    await expect(post(controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a request that finished before the abort is not touched by it', async () => {
    server = await startServer(() => fixtureResponse('openai-chat/stream-text-usage.sse'));
    const controller = new AbortController();
    const res = await post(controller.signal);
    const text = await res.text(Number.POSITIVE_INFINITY);
    controller.abort();
    expect(text).toContain('[DONE]');
  });
});
