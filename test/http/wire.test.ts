/**
 * Servers that answer in ways HTTP allows but a model API should not, or that are not the
 * HTTP/1.1 server the base URL promises, through the Chat Completions adapter (wire-request
 * and the HTTP client together): what a run is told, and whether it is retried.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeIdleConnections } from '../../src/http/pool.js';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import type { StreamOptions } from '../../src/model/types.js';
import { collect, expectWellFormed, lastError, testModel, textOf } from '../model/stream-helpers.js';

/** Everything a test started, stopped after it whatever happened. */
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  closeIdleConnections();
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** Closes `server` after the test, with every connection it still holds. */
function stopLater(server: net.Server, sockets: Set<net.Socket>): void {
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
}

/**
 * A `net` server on 127.0.0.1 that writes `answer(n)` (exact bytes) for request `n` once its
 * head and Content-Length body are in; `onConnect` may write first (an SSH banner).
 * Resolves with its base URL (`http://127.0.0.1:<port>/v1`).
 */
async function rawServer(
  answer: (n: number) => string | Buffer,
  onConnect?: (socket: net.Socket) => void,
): Promise<{ baseUrl: string; port: number; requests: string[] }> {
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    onConnect?.(socket);
    let buffered = Buffer.alloc(0);
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.toString('latin1', 0, end);
      const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      buffered = buffered.subarray(end + 4 + length);
      requests.push(head);
      if (!socket.destroyed) socket.write(answer(requests.length - 1));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stopLater(server, sockets);
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, port, requests };
}

const EVENTS =
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello there."},"finish_reason":null}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: [DONE]\n\n';
const COMPLETION = JSON.stringify({
  id: 'x',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'json in html label' }, finish_reason: 'stop' }],
});

async function ask(baseUrl: string, options: StreamOptions = {}, model = testModel(baseUrl)) {
  const result = await collect(streamOpenAIChat(model, { messages: [{ role: 'user', content: 'hi' }] }, options));
  expectWellFormed(result.events, result.message);
  return result;
}

describe('a 200 labelled text/html', () => {
  it("carrying an event stream (a Flask generator's default label) is read as the stream", async () => {
    const { baseUrl } = await rawServer(
      () => `HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=UTF-8\r\ncontent-length: ${Buffer.byteLength(EVENTS)}\r\n\r\n${EVENTS}`,
    );
    const { message } = await ask(baseUrl);
    expect(message.stopReason).toBe('stop');
    expect(textOf(message)).toBe('Hello there.');
  });

  it('carrying a JSON completion is read as the completion', async () => {
    const { baseUrl } = await rawServer(
      () => `HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${COMPLETION.length}\r\n\r\n${COMPLETION}`,
    );
    const { message } = await ask(baseUrl);
    expect(textOf(message)).toBe('json in html label');
  });

  it('a page (its body begins with <), labelled or not, is still a fatal invalid_response quoting its start', async () => {
    const page = '<!doctype html>\n<html><title>Open WebUI</title></html>';
    for (const type of ['text/html', 'text/event-stream']) {
      const { baseUrl } = await rawServer(
        () => `HTTP/1.1 200 OK\r\ncontent-type: ${type}\r\ncontent-length: ${page.length}\r\n\r\n${page}`,
      );
      const { events } = await ask(baseUrl);
      expect(lastError(events)).toMatchObject({ code: 'invalid_response', kind: 'fatal' });
      expect(lastError(events).message).toContain('answered with an HTML page, not the API: check the base URL');
      expect(lastError(events).message).toContain('The page began: <!doctype html> <html><title>Open WebUI</title></html>');
    }
  });
});

describe('bodies rein cannot use', () => {
  it('204 No Content to the POST is a fatal invalid_response saying so, not a cut stream retried', async () => {
    const { baseUrl, requests } = await rawServer(() => 'HTTP/1.1 204 No Content\r\n\r\n');
    const { events } = await ask(baseUrl);
    expect(lastError(events)).toMatchObject({ code: 'invalid_response', kind: 'fatal', status: 204 });
    expect(lastError(events).message).toContain('answered 204 No Content with no body');
    expect(requests).toHaveLength(1);
  });

  it('a 200 body in a coding rein cannot decode is a fatal invalid_response naming it, not a configuration error', async () => {
    const { baseUrl } = await rawServer(
      () =>
        `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: compress\r\ncontent-length: ${EVENTS.length}\r\n\r\n${EVENTS}`,
    );
    const { events } = await ask(baseUrl);
    expect(lastError(events)).toMatchObject({ code: 'invalid_response', kind: 'fatal' });
    expect(lastError(events).message).toContain(
      'answered with its body encoded as "compress" (Content-Encoding), which rein cannot decode',
    );
  });

  it('a 503 with retry-after and an empty body labelled zstd is judged by its status: transient, with the wait asked for', async () => {
    const { baseUrl } = await rawServer(
      () =>
        'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-encoding: zstd\r\nretry-after: 1\r\ncontent-length: 0\r\n\r\n',
    );
    const { events } = await ask(baseUrl);
    expect(lastError(events)).toMatchObject({ code: 'server_error', kind: 'transient', status: 503, retryAfterMs: 1000 });
  });

  it('a refusal whose body cannot be decoded is still judged by its status', async () => {
    const { baseUrl } = await rawServer(
      () => 'HTTP/1.1 429 Too Many Requests\r\ncontent-encoding: compress\r\nretry-after: 2\r\ncontent-length: 5\r\n\r\nxxxxx',
    );
    const { events } = await ask(baseUrl);
    expect(lastError(events)).toMatchObject({ code: 'rate_limited', kind: 'transient', status: 429, retryAfterMs: 2000 });
    expect(lastError(events).message).toContain('a body rein could not read');
  });
});

describe('a server that is not the HTTP/1.1 server the base URL says', () => {
  it('an SSH server on the port: fatal invalid_response quoting its banner, not a hang-up retried', async () => {
    const { baseUrl } = await rawServer(
      () => 'Invalid SSH identification string.\r\n',
      (socket) => socket.write('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n'),
    );
    const { events } = await ask(baseUrl);
    expect(lastError(events)).toMatchObject({ code: 'invalid_response', kind: 'fatal' });
    expect(lastError(events).message).toContain('answered with something that is not HTTP: "SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13"');
  });

  it('bytes that can never start a status line fail at once, not at the idle timeout', async () => {
    const { baseUrl } = await rawServer(() => Buffer.from([0, 0, 0x12, 4, 0, 0, 0, 0, 0]));
    const { events } = await ask(baseUrl, { idleTimeoutMs: 120_000 });
    expect(lastError(events)).toMatchObject({ code: 'invalid_response', kind: 'fatal' });
    expect(lastError(events).message).toContain('HTTP/2');
  });

  it('an https:// base URL at a plain-HTTP server: fatal, "does not speak TLS: use http://"', async () => {
    const server = createServer((_req, res) => res.end('plain'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    const { port } = server.address() as AddressInfo;
    const { events } = await ask(`https://127.0.0.1:${port}/v1`);
    expect(lastError(events)).toMatchObject({ code: 'config', kind: 'fatal' });
    expect(lastError(events).message).toContain('does not speak TLS');
    expect(lastError(events).message).toContain('use http:// instead of https://');
  });

  it('a TLS server that speaks only HTTP/2: fatal, saying so', async () => {
    const server = createSecureServer({
      cert: readFileSync(new URL('./tls/cert.pem', import.meta.url)),
      key: readFileSync(new URL('./tls/key.pem', import.meta.url)),
      allowHTTP1: false,
    });
    server.on('stream', (stream) => stream.respond({ ':status': 200 }, { endStream: true }));
    const sockets = new Set<net.Socket>();
    server.on('connection', (socket: net.Socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stopLater(server, sockets);
    const { port } = server.address() as AddressInfo;
    const { events } = await ask(`https://127.0.0.1:${port}/v1`);
    expect(lastError(events)).toMatchObject({ code: 'config', kind: 'fatal' });
    expect(lastError(events).message).toContain('speaks only HTTP/2');
  });
});

describe('a user and password in the base URL', () => {
  const UNAUTHORIZED =
    'HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Basic realm="ollama"\r\ncontent-type: text/plain\r\ncontent-length: 26\r\n\r\n401 Authorization Required';

  it('with an API key: not sent (the key takes the Authorization header), the refusal says so, and the password is never shown', async () => {
    const { port, requests } = await rawServer(() => UNAUTHORIZED);
    const { events } = await ask('', {}, testModel(`http://alice:s3cret@127.0.0.1:${port}/v1`));
    expect(requests[0]).toMatch(/^authorization: Bearer sk-test$/im);
    const error = lastError(events);
    expect(error).toMatchObject({ code: 'auth', kind: 'fatal', status: 401 });
    expect(error.message).toContain('The user and password in the base URL were not sent');
    expect(error.message).not.toContain('s3cret');
  });

  it('without an API key: sent as Authorization: Basic', async () => {
    const { port, requests } = await rawServer(
      () => `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: ${EVENTS.length}\r\n\r\n${EVENTS}`,
    );
    const { message } = await ask('', {}, testModel(`http://alice:s3cret@127.0.0.1:${port}/v1`, { apiKey: undefined }));
    expect(textOf(message)).toBe('Hello there.');
    expect(requests[0]).toMatch(new RegExp(`^authorization: Basic ${Buffer.from('alice:s3cret').toString('base64')}$`, 'im'));
  });
});
