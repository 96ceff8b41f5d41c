/**
 * `proxiedFetch` (a fetch on rein's HTTP client) and `httpRequest` under it, on real local
 * servers: methods, headers and statuses passed through, an event stream read as it
 * arrives, abort and cancel, bodiless responses, redirects left alone.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { proxiedFetch } from '../../src/http/fetch.js';
import { httpRequest } from '../../src/http/client.js';
import { closeIdleConnections } from '../../src/http/pool.js';

let servers: Server[] = [];
afterEach(async () => {
  closeIdleConnections();
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
  servers = [];
});

interface Seen {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local server calling `handle` with each request (its body read), closed after the test; resolves with its base URL. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse, seen: Seen) => unknown, seen: Seen[] = []): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const one = { method: req.method, url: req.url, headers: req.headers, body };
      seen.push(one);
      void handle(req, res, one);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A promise and its resolve function, to await what a server or the test does next. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const text = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes);

describe('proxiedFetch', () => {
  it('sends GET, POST and DELETE with their headers, and passes status, status text and headers back', async () => {
    const seen: Seen[] = [];
    const base = await serve((req, res) => {
      res.writeHead(req.method === 'POST' ? 201 : 418, 'Short and stout', {
        'content-type': 'application/json',
        'x-answer': `to ${req.method}`,
      });
      res.end(JSON.stringify({ method: req.method }));
    }, seen);

    const got = await proxiedFetch(`${base}/mcp?x=1`, { headers: { accept: 'text/event-stream', 'Mcp-Session-Id': 's1' } });
    expect(got).toMatchObject({ status: 418, statusText: 'Short and stout', ok: false });
    expect(got.headers.get('x-answer')).toBe('to GET');
    expect(await got.json()).toEqual({ method: 'GET' });

    const posted = await proxiedFetch(new URL(`${base}/mcp`), {
      method: 'post',
      headers: new Headers({ 'content-type': 'application/json' }),
      body: '{"jsonrpc":"2.0","é":1}',
    });
    expect(posted).toMatchObject({ status: 201, ok: true });
    expect(await posted.text()).toBe('{"method":"POST"}');

    const deleted = await proxiedFetch(`${base}/mcp`, { method: 'DELETE', headers: [['mcp-session-id', 's1']] });
    expect(deleted.headers.get('x-answer')).toBe('to DELETE');
    await deleted.body?.cancel();

    expect(seen.map(({ method, url, body }) => ({ method, url, body }))).toEqual([
      { method: 'GET', url: '/mcp?x=1', body: '' },
      { method: 'POST', url: '/mcp', body: '{"jsonrpc":"2.0","é":1}' },
      { method: 'DELETE', url: '/mcp', body: '' },
    ]);
    const [get, post, del] = seen as [Seen, Seen, Seen];
    expect(get.headers).toMatchObject({ accept: 'text/event-stream', 'mcp-session-id': 's1' });
    // Without a body, no framing at all; with one, its length in bytes.
    expect(get.headers['content-length']).toBeUndefined();
    expect(get.headers['transfer-encoding']).toBeUndefined();
    expect(post.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength('{"jsonrpc":"2.0","é":1}')),
    });
    expect(del.headers['content-length']).toBeUndefined();
    expect(del.headers['mcp-session-id']).toBe('s1');
  });

  it('gives a string body without a content type the one fetch gives it', async () => {
    const seen: Seen[] = [];
    const base = await serve((_req, res) => res.end(), seen);
    await (await proxiedFetch(base, { method: 'PUT', body: 'plain' })).text();
    expect(seen[0]?.headers['content-type']).toBe('text/plain;charset=UTF-8');
  });

  it('streams an event stream: each event is readable before the server writes the next', async () => {
    const second = deferred();
    const base = await serve(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"n":1}\n\n');
      await second.promise;
      res.write('data: {"n":2}\n\n');
      res.end();
    });
    const response = await proxiedFetch(`${base}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    expect(text((await reader.read()).value)).toBe('event: message\ndata: {"n":1}\n\n');
    second.resolve();
    expect(text((await reader.read()).value)).toBe('data: {"n":2}\n\n');
    expect(await reader.read()).toEqual({ done: true, value: undefined });
  });

  it('an abort during the body errors the body stream with an AbortError', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n'); // and nothing more until the test ends
    });
    const controller = new AbortController();
    const response = await proxiedFetch(base, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(text((await reader.read()).value)).toBe('data: first\n\n');
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('an aborted signal rejects before anything is sent', async () => {
    const seen: Seen[] = [];
    const base = await serve((_req, res) => res.end(), seen);
    const controller = new AbortController();
    controller.abort();
    await expect(proxiedFetch(base, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual([]);
  });

  it('cancelling the body closes the connection to the server', async () => {
    const closed = deferred();
    const base = await serve((req, res) => {
      req.socket.once('close', () => closed.resolve());
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
    });
    const response = await proxiedFetch(base);
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    await closed.promise;
  });

  it('a 204 and the answer to HEAD have no body (whatever Content-Length says)', async () => {
    const base = await serve((req, res) => {
      if (req.method === 'HEAD') res.writeHead(200, { 'content-length': '5', 'content-type': 'text/plain' }).end();
      else res.writeHead(204).end();
    });
    const none = await proxiedFetch(base, { method: 'POST', body: '{}' });
    expect(none.status).toBe(204);
    expect(none.body).toBeNull();
    const head = await proxiedFetch(base, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('5');
    expect(head.body).toBeNull();
    // The connection the HEAD left is not reused with a body still expected on it.
    expect((await proxiedFetch(base, { method: 'POST', body: '{}' })).status).toBe(204);
  });

  it('returns a redirect as it is, without following it', async () => {
    const seen: Seen[] = [];
    const base = await serve((_req, res) => res.writeHead(307, { location: 'http://elsewhere.test/mcp' }).end(), seen);
    const response = await proxiedFetch(`${base}/mcp`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(307);
    expect(response.headers.get('location')).toBe('http://elsewhere.test/mcp');
    expect(seen).toHaveLength(1);
    await expect(proxiedFetch(`${base}/mcp`, { redirect: 'error' })).rejects.toThrow(/redirect \(307\) and redirect is 'error'/);
  });

  it('refuses bodies other than strings, and a body on GET, with a TypeError saying what to do', async () => {
    const base = await serve((_req, res) => res.end());
    await expect(proxiedFetch(base, { method: 'POST', body: new Uint8Array([1]) })).rejects.toThrow(
      new TypeError('proxiedFetch sends string bodies only, and got Uint8Array: serialize the body to a string (JSON.stringify) first'),
    );
    await expect(proxiedFetch(base, { method: 'POST', body: new URLSearchParams('a=1') })).rejects.toThrow(/got URLSearchParams/);
    await expect(proxiedFetch(base, { body: 'x' })).rejects.toThrow(/GET method cannot have body/);
    await expect(proxiedFetch(base, { method: 'CONNECT' })).rejects.toThrow(TypeError);
  });

  it('rejects as fetch does when the server cannot be reached', async () => {
    const base = await serve((_req, res) => res.end());
    const server = servers.pop() as Server;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await expect(proxiedFetch(base)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('httpRequest', () => {
  it('sends content-length 0 for a POST without a body, and none for a GET', async () => {
    const seen: Seen[] = [];
    const base = await serve((_req, res) => res.end('ok'), seen);
    expect(await (await httpRequest('POST', new URL(base), {}, undefined)).text()).toBe('ok');
    expect(await (await httpRequest('GET', new URL(base), { 'Content-Length': '0' }, undefined)).text()).toBe('ok');
    expect(seen.map((s) => s.headers['content-length'])).toEqual(['0', '0']);
  });

  it('ends the response to HEAD with its head, though its Content-Length announces a body', async () => {
    const base = await serve((_req, res) => res.writeHead(200, { 'content-length': '5' }).end());
    const head = await httpRequest('HEAD', new URL(base), {}, undefined);
    expect(head.headers['content-length']).toBe('5');
    expect(await head.text()).toBe('');
  });

  it('refuses a method that is not a token, and a length with no body to send', async () => {
    const base = new URL('http://127.0.0.1:9/');
    await expect(httpRequest('GE T', base, {}, undefined)).rejects.toMatchObject({ code: 'ERR_INVALID_HTTP_TOKEN' });
    await expect(httpRequest('GET', base, { 'content-length': 12 }, undefined)).rejects.toMatchObject({
      code: 'ERR_HTTP_CONTENT_LENGTH_MISMATCH',
      message: 'content-length 12 was given for a GET request without a body: pass the body, or drop the header',
    });
  });
});
