import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DRAIN_GRACE_MS, httpPost } from '../../src/http/client.js';
import { closeIdleConnections, idleConnectionCount } from '../../src/http/pool.js';

const CERT_URL = new URL('./tls/cert.pem', import.meta.url);
const KEY_URL = new URL('./tls/key.pem', import.meta.url);

/** Everything a test started, stopped after it whatever happened. */
let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  // The client's idle sockets first: a server's close() waits for every socket.
  closeIdleConnections();
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

interface Served {
  url: URL;
  /** The server side of every connection, in the order they were accepted. */
  connections: net.Socket[];
  /** Every complete request received, as `{ head, body }`. */
  requests: Array<{ head: string; body: string }>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A node:http server on 127.0.0.1 that hands each request, with its body read, to `handler`. */
async function httpServer(handler: Handler, configure?: (server: ReturnType<typeof createServer>) => void): Promise<Served> {
  const connections: net.Socket[] = [];
  const requests: Served['requests'] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      requests.push({ head: `${req.method} ${req.url}\r\n${rawHeaderLines(req)}`, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (socket: net.Socket) => connections.push(socket));
  configure?.(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat`), connections, requests };
}

function rawHeaderLines(req: IncomingMessage): string {
  let lines = '';
  for (let i = 0; i < req.rawHeaders.length; i += 2) lines += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
  return lines;
}

/**
 * A `net` server that writes exact bytes: `onRequest` gets each complete request on a
 * connection (head and Content-Length body) with its index on that connection.
 */
async function rawServer(onRequest: (socket: net.Socket, n: number) => void): Promise<Served> {
  const connections: net.Socket[] = [];
  const requests: Served['requests'] = [];
  const server = net.createServer((socket) => {
    connections.push(socket);
    socket.on('error', () => {});
    let buffered = Buffer.alloc(0);
    let n = 0;
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.toString('latin1', 0, end + 2);
        const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        requests.push({ head, body: buffered.toString('utf8', end + 4, end + 4 + length) });
        buffered = buffered.subarray(end + 4 + length);
        onRequest(socket, n++);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of connections) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat`), connections, requests };
}

/** Resolves once `socket` has closed (at once when it already has). */
function closed(socket: net.Socket | undefined): Promise<unknown> {
  if (socket === undefined) throw new Error('no such connection');
  return socket.closed ? Promise.resolve() : once(socket, 'close');
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const post = (url: URL, body = '{}', signal?: AbortSignal, idleTimeoutMs?: number) =>
  httpPost(url, { 'content-type': 'application/json' }, body, signal, idleTimeoutMs);

async function postText(url: URL, body = '{}'): Promise<string> {
  const res = await post(url, body);
  return res.text(Number.POSITIVE_INFINITY);
}

const OK = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok';

describe('httpPost: keep-alive connections', () => {
  it('sequential requests to one server share one connection', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    for (let i = 0; i < 5; i++) expect(await postText(served.url)).toBe('ok');
    expect(served.requests).toHaveLength(5);
    expect(served.connections).toHaveLength(1);
    expect(idleConnectionCount()).toBe(1);
  });

  it('concurrent requests each get a connection, and all of them are reused afterwards', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    expect(await Promise.all([postText(served.url), postText(served.url), postText(served.url)])).toEqual(['ok', 'ok', 'ok']);
    expect(served.connections).toHaveLength(3);
    expect(idleConnectionCount()).toBe(3);
    expect(await Promise.all([postText(served.url), postText(served.url), postText(served.url)])).toEqual(['ok', 'ok', 'ok']);
    expect(served.connections).toHaveLength(3);
    expect(served.requests).toHaveLength(6);
  });

  it('a kept-alive connection the server closed while idle is replaced without the caller seeing it', async () => {
    const served = await httpServer(
      (_req, res) => res.end('ok'),
      (server) => (server.keepAliveTimeout = 50),
    );
    expect(await postText(served.url)).toBe('ok');
    await closed(served.connections[0]);
    expect(await postText(served.url)).toBe('ok');
    expect(served.connections).toHaveLength(2);
  });

  it('a kept-alive connection the server drops on the next request is retried on a new one, transparently', async () => {
    // The race a keep-alive client cannot avoid: the server closes the connection just as the
    // next request is written on it. It answered nothing, so asking again is safe.
    const served = await rawServer((socket, n) => {
      if (n === 0) socket.write(OK);
      else socket.destroy();
    });
    expect(await postText(served.url, '{"turn":1}')).toBe('ok');
    expect(await postText(served.url, '{"turn":2}')).toBe('ok');
    expect(served.connections).toHaveLength(2);
    expect(served.requests.map((r) => r.body)).toEqual(['{"turn":1}', '{"turn":2}', '{"turn":2}']);
  });

  it('a new connection closed before any byte of an answer rejects with ECONNRESET, without retrying', async () => {
    const served = await rawServer((socket) => socket.destroy());
    await expect(post(served.url)).rejects.toMatchObject({ code: 'ECONNRESET', message: 'socket hang up' });
    expect(served.connections).toHaveLength(1);
    expect(served.requests).toHaveLength(1);
  });

  it('the retry after a dropped kept-alive connection is made once: a new connection that fails too is an error', async () => {
    let answered = false;
    const served = await rawServer((socket) => {
      if (answered) socket.destroy();
      else socket.write(OK);
      answered = true;
    });
    expect(await postText(served.url)).toBe('ok');
    await expect(post(served.url)).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(served.connections).toHaveLength(2);
    expect(served.requests).toHaveLength(3);
  });

  it('a response with Connection: close is not reused: the next request opens a new connection', async () => {
    const served = await httpServer((_req, res) => {
      res.setHeader('connection', 'close');
      res.end('ok');
    });
    expect(await postText(served.url)).toBe('ok');
    expect(idleConnectionCount()).toBe(0);
    expect(await postText(served.url)).toBe('ok');
    expect(served.connections).toHaveLength(2);
  });

  it('a body read with text(maxChars) is truncated, drained, and its connection still reused', async () => {
    const served = await httpServer((_req, res) => res.end('0123456789'.repeat(100)));
    const res = await post(served.url);
    expect(await res.text(15)).toBe('012345678901234');
    expect(await postText(served.url)).toHaveLength(1000);
    expect(served.connections).toHaveLength(1);
  });
});

describe('httpPost: response bodies', () => {
  it('a body delimited by the server closing the connection is read whole', async () => {
    const served = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nthe first part, ', () => {
        socket.write('and the rest', () => socket.end());
      });
    });
    const res = await post(served.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('the first part, and the rest');
    expect(idleConnectionCount()).toBe(0);
  });

  it('a body cut before its Content-Length rejects consume with ECONNRESET naming the cut', async () => {
    const served = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789', () => socket.destroy());
    });
    const res = await post(served.url);
    let received = '';
    const error: unknown = await res
      .consume((text) => (received += text))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ code: 'ECONNRESET' });
    expect((error as Error).message).toContain('cut');
    expect(received).toBe('0123456789');
  });

  it('the server closing before the head rejects with socket hang up', async () => {
    const served = await rawServer((socket) => socket.end());
    await expect(post(served.url)).rejects.toMatchObject({ code: 'ECONNRESET', message: 'socket hang up' });
  });

  it('a multi-byte character split across two TCP writes arrives whole', async () => {
    const euro = Buffer.from('€', 'utf8');
    const firstSeen = deferred();
    const served = await rawServer((socket) => {
      socket.write(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nprice: '), euro.subarray(0, 2)]));
      // The rest only once the client has read the first write: they cannot arrive as one read.
      void firstSeen.promise.then(() => socket.write(Buffer.concat([euro.subarray(2), Buffer.from('42')])));
    });
    const res = await post(served.url);
    const chunks: string[] = [];
    await res.consume((text) => {
      chunks.push(text);
      firstSeen.resolve();
    });
    expect(chunks.join('')).toBe('price: €42');
    expect(chunks.join('')).not.toContain('\uFFFD');
    expect(chunks.length).toBeGreaterThanOrEqual(2);
  });

  it('an emoji split across two chunks of a chunked body arrives whole', async () => {
    const emoji = Buffer.from('🦀', 'utf8');
    const served = await rawServer((socket) => {
      socket.write(
        Buffer.concat([
          Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab'),
          emoji.subarray(0, 1),
          Buffer.from('\r\n4\r\n'),
          emoji.subarray(1),
          Buffer.from('c\r\n0\r\n\r\n'),
        ]),
      );
    });
    expect(await postText(served.url)).toBe('ab🦀c');
  });

  it('a 1 MB request body arrives intact, counted in bytes', async () => {
    const body = '0123456789abcde€'.repeat(65_536);
    const served = await httpServer((_req, res, received) =>
      res.end(JSON.stringify({ bytes: Buffer.byteLength(received), same: received === body })),
    );
    expect(JSON.parse(await postText(served.url, body))).toEqual({ bytes: Buffer.byteLength(body), same: true });
    expect(served.requests[0]?.head).toContain(`content-length: ${Buffer.byteLength(body)}`);
  });

  it('a 1 MB response body arrives intact', async () => {
    const body = 'ü0123456789abcdef'.repeat(60_000);
    const served = await httpServer((_req, res) => res.end(body));
    expect(Buffer.byteLength(body)).toBeGreaterThan(1_000_000);
    expect(await postText(served.url)).toBe(body);
  });

  it('a chunked streamed response arrives in order and the connection is reused', async () => {
    const served = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n', () => res.write('data: 2\n\n', () => res.end('data: [DONE]\n\n')));
    });
    const res = await post(served.url);
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(await res.text()).toBe('data: 1\n\ndata: 2\n\ndata: [DONE]\n\n');
    expect(await postText(served.url)).toContain('[DONE]');
    expect(served.connections).toHaveLength(1);
  });

  it('100 Continue and 103 Early Hints before the response are skipped', async () => {
    const served = await httpServer((_req, res) => {
      res.writeContinue();
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      res.setHeader('x-final', 'yes');
      res.end('ok');
    });
    const res = await post(served.url);
    expect(res.status).toBe(200);
    expect(res.headers['x-final']).toBe('yes');
    expect(res.headers.link).toBeUndefined();
    expect(await res.text()).toBe('ok');
  });

  it('a status other than 2xx resolves with that status and its body', async () => {
    const served = await httpServer((_req, res) => {
      res.writeHead(429, { 'retry-after': '3', 'content-type': 'application/json' });
      res.end('{"error":"slow down"}');
    });
    const res = await post(served.url);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('3');
    expect(await res.text()).toBe('{"error":"slow down"}');
  });
});

describe('httpPost: the request it writes', () => {
  it('sends the Host header with the port, and the caller’s headers as given', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    const res = await httpPost(
      new URL(`${served.url.href}?stream=true`),
      {
        'Content-Type': 'application/json',
        Authorization: 'Bearer s3cret',
        'X-Custom': 'Mixed Case Value',
        'x-many': ['one', 'two'],
        'x-number': 7,
      },
      '{"a":1}',
    );
    await res.text();
    const request = served.requests[0];
    expect(request?.body).toBe('{"a":1}');
    expect(request?.head).toMatch(/^POST \/v1\/chat\?stream=true\r\n/);
    expect(request?.head).toContain(`Host: 127.0.0.1:${served.url.port}\r\n`);
    expect(request?.head).toContain('Content-Type: application/json\r\n');
    expect(request?.head).toContain('Authorization: Bearer s3cret\r\n');
    expect(request?.head).toContain('X-Custom: Mixed Case Value\r\n');
    expect(request?.head).toContain('x-many: one\r\nx-many: two\r\n');
    expect(request?.head).toContain('x-number: 7\r\n');
    expect(request?.head).toContain('content-length: 7\r\n');
  });

  it('a Host header given by the caller replaces the default one, and connection headers are left to the client', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    await (await httpPost(served.url, { host: 'api.example.test', connection: 'close' }, '')).text();
    const head = served.requests[0]?.head ?? '';
    expect(head.match(/^host:/gim)).toEqual(['host:']);
    expect(head).toContain('host: api.example.test\r\n');
    expect(head).not.toMatch(/^connection:/im);
    expect(head).toContain('content-length: 0\r\n');
  });

  it("a Content-Length given by the caller, in any case, is replaced by the body's own length", async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    const res = await httpPost(served.url, { 'Content-Length': '99' }, '{"a":"€"}');
    expect(res.status).toBe(200);
    await res.text();
    const head = served.requests[0]?.head ?? '';
    expect(head.match(/^content-length:/gim)).toHaveLength(1);
    expect(head).toContain(`content-length: ${Buffer.byteLength('{"a":"€"}')}\r\n`);
  });

  it('a header value holding CR LF is refused with ERR_INVALID_CHAR before anything is sent', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    await expect(httpPost(served.url, { 'x-evil': 'a\r\nInjected: yes' }, '{}')).rejects.toMatchObject({ code: 'ERR_INVALID_CHAR' });
    await expect(httpPost(served.url, { 'x-evil': 'non-ascii é' }, '{}')).rejects.toMatchObject({ code: 'ERR_INVALID_CHAR' });
    // A valid request afterwards is the only one the server ever saw, on its only connection.
    expect(await postText(served.url)).toBe('ok');
    expect(served.requests).toHaveLength(1);
    expect(served.requests[0]?.head).not.toContain('Injected');
    expect(served.connections).toHaveLength(1);
  });

  it('an invalid header name is refused with ERR_INVALID_HTTP_TOKEN before anything is sent', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    await expect(httpPost(served.url, { 'bad name': 'x' }, '{}')).rejects.toMatchObject({ code: 'ERR_INVALID_HTTP_TOKEN' });
    await expect(httpPost(served.url, { 'x-a:b': 'x' }, '{}')).rejects.toMatchObject({ code: 'ERR_INVALID_HTTP_TOKEN' });
    expect(await postText(served.url)).toBe('ok');
    expect(served.requests).toHaveLength(1);
  });

  it('a URL that is not http or https is refused', async () => {
    await expect(httpPost(new URL('ftp://127.0.0.1/x'), {}, '')).rejects.toMatchObject({ code: 'ERR_INVALID_PROTOCOL' });
  });
});

describe('httpPost: aborts, timeouts and refusals', () => {
  it('aborting before the head rejects with AbortError and closes the connection', async () => {
    const arrived = deferred();
    const served = await httpServer(() => arrived.resolve()); // never answers
    const controller = new AbortController();
    const pending = post(served.url, '{}', controller.signal);
    await arrived.promise;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await closed(served.connections[0]);
    expect(idleConnectionCount()).toBe(0);
  });

  it('aborting mid-body rejects consume with AbortError, and the connection is not reused', async () => {
    let n = 0;
    const served = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (n++ === 0)
        res.write('data: first\n\n'); // then holds
      else res.end('data: again\n\n');
    });
    const controller = new AbortController();
    const res = await post(served.url, '{}', controller.signal);
    const reading = res.consume(() => controller.abort());
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
    await closed(served.connections[0]);
    expect(idleConnectionCount()).toBe(0);
    expect(await postText(served.url)).toBe('data: again\n\n');
    expect(served.connections).toHaveLength(2);
  });

  it('a signal aborted before the call rejects at once, without connecting', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    await expect(post(served.url, '{}', AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    expect(served.connections).toHaveLength(0);
  });

  it('destroy() abandons a response: its connection is closed, not reused', async () => {
    const served = await httpServer((_req, res) => {
      res.writeHead(200);
      res.write('partial'); // then holds
    });
    const res = await post(served.url);
    res.destroy();
    await closed(served.connections[0]);
    expect(idleConnectionCount()).toBe(0);
  });

  it('a server that sends the head then goes silent fails consume with ETIMEDOUT', async () => {
    const served = await rawServer((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nsome'));
    const res = await post(served.url, '{}', undefined, 200);
    let received = '';
    await expect(res.consume((text) => (received += text))).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    expect(received).toBe('some');
    await closed(served.connections[0]);
  });

  it('a server that never answers fails the request with ETIMEDOUT', async () => {
    const served = await rawServer(() => {});
    await expect(post(served.url, '{}', undefined, 200)).rejects.toMatchObject({
      code: 'ETIMEDOUT',
      message: expect.stringContaining('200 ms'),
    });
  });

  it('a port nobody listens on rejects with ECONNREFUSED', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    await expect(post(new URL(`http://127.0.0.1:${port}/v1`))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('a server that answers with something other than HTTP rejects with a parse error', async () => {
    const served = await rawServer((socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
    await expect(post(served.url)).rejects.toMatchObject({ code: 'HPE_INVALID_RESPONSE', message: expect.stringContaining('SSH-2.0') });
    await closed(served.connections[0]);
  });

  it('another protocol that never sends a blank line (an SSH banner, an HTTP/2 frame) fails at once, not at the idle timeout', async () => {
    const ssh = await rawServer((socket) => socket.write('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n'));
    // Before: nothing happened until the idle timeout (here longer than the test may take).
    await expect(post(ssh.url, '{}', undefined, 60_000)).rejects.toMatchObject({
      code: 'HPE_INVALID_RESPONSE',
      received: '"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13" (an SSH server)',
    });
    await closed(ssh.connections[0]);
    const h2 = await rawServer((socket) => socket.write(Buffer.from([0, 0, 0x12, 4, 0, 0, 0, 0, 0])));
    await expect(post(h2.url, '{}', undefined, 60_000)).rejects.toMatchObject({
      code: 'HPE_INVALID_RESPONSE',
      received: expect.stringContaining('HTTP/2'),
    });
  });

  it('the connection closing in the middle of a head says what of it arrived', async () => {
    const served = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Ty'));
    await expect(post(served.url)).rejects.toMatchObject({
      code: 'ECONNRESET',
      message: 'socket hang up in the middle of the response head, which began "HTTP/1.1 200 OK"',
    });
  });
});

describe('httpPost over TLS', () => {
  async function httpsServer(): Promise<{ port: number; secureConnections: () => number }> {
    let secure = 0;
    const server = createHttpsServer({ cert: readFileSync(CERT_URL), key: readFileSync(KEY_URL) }, (req, res) => {
      req.resume();
      req.on('end', () => res.end(`hello over ${req.socket.constructor.name}`));
    });
    server.on('secureConnection', () => secure++);
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return { port: (server.address() as AddressInfo).port, secureConnections: () => secure };
  }

  it('a self-signed certificate the process does not trust is refused with its certificate error', async () => {
    const { port } = await httpsServer();
    const error: unknown = await post(new URL(`https://127.0.0.1:${port}/v1`)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN']).toContain((error as { code?: string } | undefined)?.code);
  });

  it('with the certificate trusted through NODE_EXTRA_CA_CERTS, requests succeed and share one TLS connection', async () => {
    const { port, secureConnections } = await httpsServer();
    // NODE_EXTRA_CA_CERTS is read once at startup, hence a child process.
    const moduleUrl = new URL('../../dist/http/client.js', import.meta.url).href;
    const script = `
      const { httpPost } = await import(${JSON.stringify(moduleUrl)});
      const out = [];
      for (const host of ['localhost', 'localhost']) {
        const res = await httpPost(new URL('https://' + host + ':${port}/v1'), { 'content-type': 'application/json' }, '{}');
        out.push({ status: res.status, text: await res.text() });
      }
      process.stdout.write(JSON.stringify(out));
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: fileURLToPath(CERT_URL) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
      child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
      const [code] = (await once(child, 'close')) as [number | null];
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toEqual([
        { status: 200, text: 'hello over TLSSocket' },
        { status: 200, text: 'hello over TLSSocket' },
      ]);
      expect(secureConnections()).toBe(1);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill();
        await once(child, 'close');
      }
    }
  });
});

describe('httpPost: content encodings', () => {
  const events = Array.from({ length: 40 }, (_, i) => `data: {"n":${i},"text":"token ${i} é"}\n\n`).join('');

  /** A server that compresses its answer with `encode` and sends it in small chunks, with `Content-Encoding: name`. */
  async function compressing(name: string, encode: (text: string) => Buffer) {
    return httpServer((_req, res) => {
      const bytes = encode(events);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': name });
      // Several writes: the decompressor must carry state across socket reads.
      for (let at = 0; at < bytes.length; at += 50) res.write(bytes.subarray(at, at + 50));
      res.end();
    });
  }

  it('asks for no encoding (accept-encoding: identity) unless the caller names one', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    await postText(served.url);
    expect(served.requests[0]!.head).toMatch(/^accept-encoding: identity\r$/im);
    const res = await httpPost(served.url, { 'content-type': 'application/json', 'Accept-Encoding': 'gzip' }, '{}');
    await res.text();
    expect(served.requests[1]!.head.match(/accept-encoding/gi)).toHaveLength(1);
    expect(served.requests[1]!.head).toMatch(/^Accept-Encoding: gzip\r$/m);
  });

  it('a body sent gzip-, deflate- or brotli-compressed anyway (a proxy) is decompressed as it arrives', async () => {
    for (const [name, encode] of [
      ['gzip', (t: string) => gzipSync(t)],
      ['deflate', (t: string) => deflateSync(t)],
      // Raw deflate, without the zlib wrapper RFC 9110 asks for: sent by some servers.
      ['deflate', (t: string) => deflateRawSync(t)],
      ['br', (t: string) => brotliCompressSync(t)],
    ] as const) {
      const served = await compressing(name, encode);
      const res = await post(served.url);
      expect(res.headers['content-encoding']).toBe(name);
      expect(await res.text(Number.POSITIVE_INFINITY), `${name}: ${encode('x').subarray(0, 2).toString('hex')}`).toBe(events);
      closeIdleConnections();
    }
  });

  it('an empty body labelled compressed (a bare 429 from a proxy) is an empty body, not an error', async () => {
    const served = await httpServer((_req, res) => {
      res.writeHead(429, { 'content-encoding': 'gzip', 'content-length': '0', 'retry-after': '1' });
      res.end();
    });
    const res = await post(served.url);
    expect(res.status).toBe(429);
    expect(await res.text()).toBe('');
  });

  it('a connection that carried a compressed body is reused for the next request', async () => {
    const served = await compressing('gzip', (t) => gzipSync(t));
    expect(await postText(served.url)).toBe(events);
    expect(await postText(served.url)).toBe(events);
    expect(served.connections).toHaveLength(1);
  });

  it('an encoding rein cannot decode fails the read of the body, naming it; a corrupt compressed body fails the read', async () => {
    // The head (its status) is still handed over: only a body byte needs decoding.
    const compress = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'compress' });
      res.end('whatever');
    });
    const undecodable = await post(compress.url);
    expect(undecodable.status).toBe(200);
    await expect(undecodable.text()).rejects.toMatchObject({
      code: 'ERR_CONTENT_ENCODING',
      header: 'content-encoding',
      value: 'compress',
      message: expect.stringContaining('"compress"'),
    });
    const corrupt = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(Buffer.from('this is not gzip at all'));
    });
    const res = await post(corrupt.url);
    // Damaged data is a network error (retried), not a configuration one.
    await expect(res.text()).rejects.toMatchObject({ code: 'EBADBODY', message: expect.stringContaining('gzip') });
    // Neither zlib-wrapped nor raw deflate ("invalid block type").
    const notDeflate = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'deflate' });
      res.end(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    });
    await expect((await post(notDeflate.url)).text()).rejects.toMatchObject({
      code: 'EBADBODY',
      message: expect.stringContaining('deflate'),
    });
  });
});

describe('httpPost: transfer and stacked codings', () => {
  const events = 'data: {"n":1}\n\ndata: [DONE]\n\n';

  it('Transfer-Encoding: gzip, chunked is de-chunked, then decompressed', async () => {
    const served = await rawServer((socket) => {
      const data = gzipSync(events);
      socket.write(
        Buffer.concat([
          Buffer.from(
            `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: gzip, chunked\r\n\r\n${data.length.toString(16)}\r\n`,
          ),
          data,
          Buffer.from('\r\n0\r\n\r\n'),
        ]),
      );
    });
    expect(await postText(served.url)).toBe(events);
    // The body was delimited: the connection is reused.
    expect(idleConnectionCount()).toBe(1);
  });

  it('Content-Encoding: gzip, gzip is decompressed twice', async () => {
    const served = await httpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip, gzip' });
      res.end(gzipSync(gzipSync(events)));
    });
    expect(await postText(served.url)).toBe(events);
  });

  it('a transfer coding rein cannot decode fails the body read, naming it', async () => {
    const served = await rawServer((socket) =>
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: compress, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'),
    );
    const res = await post(served.url);
    await expect(res.text()).rejects.toMatchObject({
      code: 'ERR_CONTENT_ENCODING',
      header: 'transfer-encoding',
      value: 'compress, chunked',
    });
  });

  it('an empty body labelled with a coding rein cannot decode (a bare 503 from a proxy) is an empty body, its status intact', async () => {
    const served = await rawServer((socket) =>
      socket.write('HTTP/1.1 503 Service Unavailable\r\ncontent-encoding: zstd\r\nretry-after: 1\r\ncontent-length: 0\r\n\r\n'),
    );
    const res = await post(served.url);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('');
  });
});

describe('httpPost: a user and password in the URL', () => {
  it('are sent as Authorization: Basic (decoded from the URL) when the request has no Authorization of its own', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    const url = new URL(served.url.href.replace('http://', 'http://alice:s3cr%40t@'));
    await postText(url);
    expect(served.requests[0]!.head).toMatch(new RegExp(`^authorization: Basic ${Buffer.from('alice:s3cr@t').toString('base64')}\r$`, 'm'));
    expect(served.requests[0]!.head).toMatch(/^Host: 127\.0\.0\.1:\d+\r$/m);
    expect(served.requests[0]!.head).not.toContain('alice');
  });

  it('are not sent when the request carries its own Authorization (an API key): one credential per header', async () => {
    const served = await httpServer((_req, res) => res.end('ok'));
    const url = new URL(served.url.href.replace('http://', 'http://alice:s3cret@'));
    const res = await httpPost(url, { 'content-type': 'application/json', Authorization: 'Bearer sk-1' }, '{}');
    await res.text();
    expect(served.requests[0]!.head.match(/^authorization:.*$/gim)).toEqual(['Authorization: Bearer sk-1']);
  });
});

describe('httpPost: drain()', () => {
  const HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n';
  const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

  it('resolves consume at once; a rest that arrives soon after is dropped and the connection reused', async () => {
    let first: net.Socket | undefined;
    const served = await rawServer((socket, n) => {
      if (n === 0) {
        first = socket;
        socket.write(`${HEAD}${chunk('data: [DONE]\n\n')}`);
      } else socket.write(OK);
    });
    const res = await post(served.url);
    let received = '';
    await res.consume((text) => {
      received += text;
      res.drain();
    });
    expect(received).toBe('data: [DONE]\n\n');
    // The end of the body comes after the caller stopped reading: it still frees the connection.
    first!.write(`${chunk(': after the end\n\n')}0\r\n\r\n`);
    await vi.waitFor(() => expect(idleConnectionCount()).toBe(1));
    expect(await postText(served.url)).toBe('ok');
    expect(served.connections).toHaveLength(1);
  });

  it(
    'a body that never ends after drain() is closed after the grace, never reused',
    async () => {
      const served = await rawServer((socket) => socket.write(`${HEAD}${chunk('data: [DONE]\n\n')}`));
      const res = await post(served.url);
      await res.consume(() => res.drain());
      // Closed by the client (the server holds it open for ever), within the grace and a sweep.
      await closed(served.connections[0]);
      expect(idleConnectionCount()).toBe(0);
    },
    DRAIN_GRACE_MS + 10_000,
  );
});
