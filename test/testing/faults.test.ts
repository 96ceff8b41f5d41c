import { afterEach, describe, expect, it } from 'vitest';
import { fault, startScriptedServer, text, type ScriptedServer, type ScriptedServerOptions } from '../../src/testing/index.js';
import { assemble, chunks, parseSse, post, readUntilEnd, streamChat, USER, type Wire } from './helpers.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: ScriptedServerOptions): Promise<ScriptedServer> {
  server = await startScriptedServer(options);
  return server;
}

const LONG = 'A sentence long enough to need several deltas of twelve characters.';

describe('scripted server: faults', () => {
  it('answers a status fault with retry-after headers and an OpenAI-shaped body, then goes on', async () => {
    const { url } = await start({ script: [fault({ type: 'status', status: 429, retryAfter: 2, retryAfterMs: 1500 }), text('ok')] });
    const response = await post(url, { model: 'm', messages: USER, stream: true });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(response.headers.get('retry-after-ms')).toBe('1500');
    const body = (await response.json()) as Wire;
    expect(body.error).toMatchObject({ code: 'rate_limit_exceeded', message: expect.any(String), type: expect.any(String) });
    expect(assemble((await streamChat(url, {})).frames).text).toBe('ok');
  });

  it('has default bodies for common statuses and sends a string body verbatim', async () => {
    const { url } = await start({
      script: [
        fault({ type: 'status', status: 401 }),
        fault({ type: 'status', status: 500 }),
        fault({ type: 'status', status: 503, body: 'upstream connect error or disconnect/reset before headers' }),
        fault({
          type: 'status',
          status: 400,
          body: { error: { message: 'custom', type: 'invalid_request_error', param: null, code: 'x' } },
        }),
      ],
    });
    const first = await post(url, { model: 'm', messages: USER });
    expect(first.status).toBe(401);
    expect(((await first.json()) as Wire).error.code).toBe('invalid_api_key');
    const second = await post(url, { model: 'm', messages: USER });
    expect(second.status).toBe(500);
    expect(((await second.json()) as Wire).error.type).toBe('server_error');
    const third = await post(url, { model: 'm', messages: USER });
    expect(third.status).toBe(503);
    expect(third.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await third.text()).toBe('upstream connect error or disconnect/reset before headers');
    const fourth = await post(url, { model: 'm', messages: USER });
    expect(((await fourth.json()) as Wire).error.code).toBe('x');
  });

  it('cuts the connection after N chunks: the client sees the body end early, without [DONE]', async () => {
    const { url } = await start({ script: [fault({ type: 'cut', afterChunks: 2 }, { text: LONG }), text('after the cut')] });
    const response = await post(url, { model: 'm', messages: USER, stream: true });
    expect(response.status).toBe(200);
    const { text: received, error } = await readUntilEnd(response);
    expect(error).toBeDefined();
    const frames = parseSse(received);
    expect(frames).toHaveLength(2);
    expect(frames).not.toContain('[DONE]');
    // The server itself keeps serving.
    expect(assemble((await streamChat(url, {})).frames).text).toBe('after the cut');
  });

  it('cuts before any response without streaming', async () => {
    const { url } = await start({ script: [fault({ type: 'cut', afterChunks: 0 }, { text: 'never' })] });
    await expect(post(url, { model: 'm', messages: USER }).then((r) => r.text())).rejects.toThrow();
  });

  it('slows the stream down between chunks', async () => {
    const { url } = await start({
      script: [fault({ type: 'slow', tokenDelayMs: 40 }, { text: 'abcdefghijklmnopqrstuvwx' })],
      chunkSize: 8,
    });
    const started = performance.now();
    const { frames } = await streamChat(url, {});
    const elapsed = performance.now() - started;
    // role + 3 text deltas + finish, a pause between each and before [DONE]: 5 pauses. A
    // lower bound only: a busy machine can make it slower, never faster.
    expect(chunks(frames)).toHaveLength(5);
    expect(elapsed).toBeGreaterThanOrEqual(5 * 40 - 20);
    expect(assemble(frames).text).toBe('abcdefghijklmnopqrstuvwx');
    expect(frames.at(-1)).toBe('[DONE]');
  });

  it('applies the server-wide tokenDelayMs and a turn delayMs', async () => {
    const { url } = await start({
      script: [text('abc', { delayMs: 150 }), text('abcdefghijklmnopqrstuvwx')],
      tokenDelayMs: 30,
      chunkSize: 8,
    });
    let started = performance.now();
    expect((await post(url, { model: 'm', messages: USER })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150 - 20);
    started = performance.now();
    await streamChat(url, {});
    expect(performance.now() - started).toBeGreaterThanOrEqual(5 * 30 - 20);
  });

  it('sends an error frame inside a 200 stream, after the content and instead of the finish', async () => {
    const { url } = await start({
      script: [
        fault({ type: 'error_in_stream', message: 'The model is overloaded.', code: 'overloaded' }, { text: 'partial answer' }),
        fault({ type: 'error_in_stream', message: 'boom' }),
      ],
    });
    const { response, frames } = await streamChat(url, {});
    expect(response.status).toBe(200);
    expect(frames).not.toContain('[DONE]');
    const last = frames.at(-1) as Wire;
    expect(last.error).toMatchObject({ message: 'The model is overloaded.', code: 'overloaded', type: 'server_error' });
    expect(assemble(frames.slice(0, -1)).text).toBe('partial answer');
    expect(assemble(frames).finishReasons).toEqual([]);

    const json = await post(url, { model: 'm', messages: USER });
    expect(json.status).toBe(500);
    expect(((await json.json()) as Wire).error.message).toBe('boom');
  });
});
