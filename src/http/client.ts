/**
 * rein's HTTP client: a POST over HTTP/1.1 on keep-alive `node:net` / `node:tls`
 * connections, for the model adapters' hot path (and any other method, for the `fetch` of
 * remote MCP servers in `http-fetch.ts`, which needs the same proxies).
 *
 * Why not `node:http` or `fetch`: the benchmark holds rein to the CPU of a bare `node:http`
 * keep-alive loop per model request, and measured on that workload `node:http` itself is
 * about 60% of that loop's CPU (its agent, request and response streams and listeners per
 * request); `fetch` costs 3×, undici's `request` and `dispatch` 1.6–1.8×. A model request is
 * one POST whose answer is read as it streams, so the client does only that: it writes the
 * request in one piece, parses the response with {@link ResponseParser}, and hands the body
 * on as text once per socket read (a compressed body, once per decompressed piece).
 * Connections come from {@link acquire}, directly or through a proxy from the environment
 * (see `http-proxy.ts`).
 */
import type { Transform } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { acquire, release, type Connection, type ConnectionUser, type Origin } from './pool.js';
import { bodyDecoder } from './inflate.js';
import { proxyFor } from './proxy.js';
import { ResponseParser, type ResponseHead, type ResponseSink } from './parser.js';
import { unwatchIdle, watchIdle, type IdleWatch } from './idle-watchdog.js';

/** A response whose head has arrived; the body has not been read yet. */
export interface HttpResponse {
  status: number;
  /** The reason phrase of the status line (`OK`, `Not Found`; often empty). */
  statusText: string;
  headers: IncomingHttpHeaders;
  /**
   * Feeds every body chunk to `onChunk`. Resolves when the body ended completely; rejects
   * when the connection closed before that (a cut stream) or the request was aborted.
   */
  consume(onChunk: (text: string) => void): Promise<void>;
  /** Reads the whole body as text, keeping at most `maxChars` characters (the rest is drained). */
  text(maxChars?: number): Promise<string>;
  /**
   * The caller has all of the body it needs (a model answer after its end marker): `consume`
   * resolves now, and the rest is read and dropped without keeping the process alive. The
   * connection is reused when the body ends within {@link DRAIN_GRACE_MS}, closed otherwise
   * (a server that never ends the body after `data: [DONE]`).
   */
  drain(): void;
  /** Stops reading and releases the connection (it is not reused). */
  destroy(): void;
}

/**
 * How long the rest of a body given up with `drain()` may take to arrive before its
 * connection is closed instead of reused. Not a timer per request: the shared idle watchdog
 * checks it, once a second, and only for bodies that had not ended when they were drained.
 */
export const DRAIN_GRACE_MS = 4000;

/** The error `httpPost` rejects with, and `consume` rejects with, when the signal aborts. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new Error('The request was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}

/**
 * POSTs `body` to `url`. Resolves once the response head arrived (any status); rejects with
 * the network error (`ECONNREFUSED`, `ENOTFOUND`, `socket hang up`, …), a header Node would
 * refuse (`ERR_INVALID_CHAR`, `ERR_INVALID_HTTP_TOKEN`), or an `AbortError` when `signal`
 * aborts. Aborting later also ends the body with an `AbortError`.
 *
 * A kept-alive connection the server closed in the meantime is replaced by a new one
 * before any byte of an answer arrived, so that race never reaches the caller.
 *
 * @example
 * const res = await httpPost(new URL('http://127.0.0.1:11434/v1/chat/completions'), { 'content-type': 'application/json' }, '{}');
 * const text = await res.text();
 */
export function httpPost(
  url: URL,
  /** Request headers (any `content-length` among them is replaced by the body's length). */
  headers: OutgoingHttpHeaders,
  body: string,
  signal?: AbortSignal,
  /** No byte for this long (before or during the response) fails the request with `ETIMEDOUT`. */
  idleTimeoutMs?: number,
): Promise<HttpResponse> {
  // The method is known to be valid: no check a model request would pay for on every turn.
  return exchange('POST', url, headers, body, signal, idleTimeoutMs);
}

/**
 * Sends a request with any method, as {@link httpPost} does (same connections, proxies,
 * errors and abort). Without a body nothing is sent after the head: a `content-length`
 * among `headers` must be 0, and POST, PUT and PATCH say `content-length: 0` anyway
 * (servers may refuse those without a length). The response to `HEAD` has no body,
 * whatever its headers announce.
 *
 * @example
 * const res = await httpRequest('GET', new URL('http://mcp.example/mcp'), { accept: 'text/event-stream' }, undefined, signal);
 * await res.consume((text) => parse(text));
 */
export function httpRequest(
  /** An HTTP method token, as sent (`GET`, `DELETE`, …: not upper-cased here). */
  method: string,
  url: URL,
  headers: OutgoingHttpHeaders,
  body: string | undefined,
  signal?: AbortSignal,
  /** No byte for this long (before or during the response) fails the request with `ETIMEDOUT`. */
  idleTimeoutMs?: number,
): Promise<HttpResponse> {
  if (!TOKEN.test(method))
    return Promise.reject(
      Object.assign(new TypeError(`Method must be a valid HTTP token ["${method}"]`), { code: 'ERR_INVALID_HTTP_TOKEN' }),
    );
  return exchange(method, url, headers, body, signal, idleTimeoutMs);
}

/** Methods whose requests are meant to carry content: without a body they say it is empty. */
const CONTENT_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The `content-length` of a request without a body, or undefined to send none (RFC 9110
 * §8.6: a GET or DELETE without content carries no length). A non-zero length given with no
 * body is refused: the server would wait for bytes that never come.
 */
function bodilessLength(method: string, headers: OutgoingHttpHeaders): number | undefined {
  for (const name in headers) {
    if (name.toLowerCase() !== 'content-length' || headers[name] === undefined) continue;
    const value = String(headers[name]).trim();
    if (value !== '0')
      throw Object.assign(
        new TypeError(`content-length ${value} was given for a ${method} request without a body: pass the body, or drop the header`),
        { code: 'ERR_HTTP_CONTENT_LENGTH_MISMATCH' },
      );
    return 0;
  }
  return CONTENT_METHODS.has(method.toUpperCase()) ? 0 : undefined;
}

/** Starts one exchange; resolves once its response head arrived. */
function exchange(
  method: string,
  url: URL,
  headers: OutgoingHttpHeaders,
  body: string | undefined,
  signal: AbortSignal | undefined,
  idleTimeoutMs: number | undefined,
): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    let head: string;
    let target: Target;
    try {
      target = targetOf(url);
      const length = body === undefined ? bodilessLength(method, headers) : Buffer.byteLength(body);
      head = requestHead(method, target, headers, length);
    } catch (error) {
      reject(error);
      return;
    }
    new Exchange(target.origin, head, body ?? '', resolve, reject, signal, idleTimeoutMs, method === 'HEAD').send();
  });
}

/**
 * The abort callbacks of the requests in flight, per signal. A run hands the same signal to
 * every request it makes: the signal gets one `abort` listener, added with its first
 * request, and each request adds and removes a callback in a set, which costs a fraction
 * of an EventTarget listener's add and remove (and a process-wide signal never collects
 * listeners, however many requests use it).
 */
const abortCallbacks = new WeakMap<AbortSignal, Set<() => void>>();

function watchAbort(signal: AbortSignal, onAbort: () => void): Set<() => void> {
  let callbacks = abortCallbacks.get(signal);
  if (callbacks === undefined) {
    const set = new Set<() => void>();
    callbacks = set;
    abortCallbacks.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        abortCallbacks.delete(signal);
        for (const callback of set) callback();
        set.clear();
      },
      { once: true },
    );
  }
  callbacks.add(onAbort);
  return callbacks;
}

interface Target {
  origin: Origin;
  path: string;
  /** The Host header: the URL's host, with the port only when it is not the default. */
  host: string;
  /** `Proxy-Authorization` of an http request sent to a proxy with credentials. */
  proxyAuthorization: string | undefined;
  /**
   * `Authorization: Basic` from the user and password in the URL (`http://user:pass@host/`),
   * sent when the request carries no Authorization header of its own.
   */
  basicAuthorization: string | undefined;
}

// URL getters are slow in Node 20 and a run posts to the same URL object every turn.
const targets = new WeakMap<URL, Target>();

function targetOf(url: URL): Target {
  let target = targets.get(url);
  if (!target) {
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') {
      throw Object.assign(new TypeError(`Protocol "${url.protocol}" not supported. Expected "http:" or "https:"`), {
        code: 'ERR_INVALID_PROTOCOL',
      });
    }
    // URL keeps the brackets of IPv6 literals; the socket wants the bare address.
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
    const proxy = proxyFor(url.protocol, host, port);
    // An http request through a proxy names the whole URL (absolute form) and carries the
    // proxy's credentials; an https one is tunnelled and looks as if sent directly.
    const forwarded = proxy !== undefined && !secure;
    target = {
      origin: { key: `${url.protocol}//${url.host}${proxy ? ` via ${proxy.key}` : ''}`, secure, host, port, proxy },
      path: forwarded ? `http://${url.host}${url.pathname}${url.search}` : url.pathname + url.search,
      host: url.host,
      proxyAuthorization: forwarded ? proxy.authorization : undefined,
      basicAuthorization: url.username === '' && url.password === '' ? undefined : basicAuthorization(url),
    };
    targets.set(url, target);
  }
  return target;
}

/**
 * The `Authorization` value for a URL's user and password, as curl and browsers send them.
 * The URL keeps them %-encoded; the header carries them as typed.
 */
function basicAuthorization(url: URL): string {
  const decoded = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text; // a stray `%` that encodes nothing: sent as it is
    }
  };
  return `Basic ${Buffer.from(`${decoded(url.username)}:${decoded(url.password)}`, 'utf8').toString('base64')}`;
}

/** A header name Node would accept (an RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Characters a header value may not hold: control characters (CR and LF above all) and non-ASCII. */
const BAD_VALUE = /[^\t\x20-\x7e]/;
/** Headers about the connection and the framing, which the client writes itself. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'content-length']);

/**
 * The request line and headers. Throws, as Node does, on a header that would break the
 * request. `contentLength` undefined: no `content-length` (a request without a body).
 */
function requestHead(method: string, target: Target, headers: OutgoingHttpHeaders, contentLength: number | undefined): string {
  let head =
    contentLength === undefined
      ? `${method} ${target.path} HTTP/1.1\r\n`
      : `${method} ${target.path} HTTP/1.1\r\ncontent-length: ${contentLength}\r\n`;
  let host = false;
  let encodings = false;
  let authorization = false;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (!TOKEN.test(name))
      throw Object.assign(new TypeError(`Header name must be a valid HTTP token ["${name}"]`), { code: 'ERR_INVALID_HTTP_TOKEN' });
    const lower = name.toLowerCase();
    if (CONNECTION_HEADERS.has(lower)) continue;
    if (lower === 'host') host = true;
    else if (lower === 'accept-encoding') encodings = true;
    else if (lower === 'authorization') authorization = true;
    if (Array.isArray(value)) {
      for (const one of value) head += headerLine(name, one);
    } else head += headerLine(name, typeof value === 'string' ? value : String(value));
  }
  // Without Accept-Encoding any coding is acceptable (RFC 9110 §12.5.3): ask for none.
  if (!encodings) head += 'accept-encoding: identity\r\n';
  if (target.proxyAuthorization !== undefined) head += `proxy-authorization: ${target.proxyAuthorization}\r\n`;
  // The request's own Authorization (an API key) wins: a header holds one credential.
  if (target.basicAuthorization !== undefined && !authorization) head += `authorization: ${target.basicAuthorization}\r\n`;
  return `${host ? head : `${head}Host: ${target.host}\r\n`}\r\n`;
}

function headerLine(name: string, value: string): string {
  if (BAD_VALUE.test(value)) {
    throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]: header values must be printable ASCII`), {
      code: 'ERR_INVALID_CHAR',
    });
  }
  return `${name}: ${value}\r\n`;
}

/**
 * One request and its response (a class: one object per request, no closures), which is
 * also the {@link HttpResponse} handed to the caller.
 */
class Exchange implements HttpResponse, ConnectionUser, ResponseSink {
  status = 0;
  statusText = '';
  headers: IncomingHttpHeaders = {};
  private conn: Connection | undefined;
  private readonly parser: ResponseParser;
  private readonly decoder = new StringDecoder('utf8');
  /** The decompressor of a body sent with a Content-Encoding (rare: rein asks for none). */
  private inflater: Transform | undefined;
  /** Whether any body bytes went to the decompressor. */
  private inflated = false;
  /** Why the body cannot be decoded (a coding rein does not know): reported if a body byte comes. */
  private undecodable: Error | undefined;
  /** Set by `drain()`: the caller wants no more of the body. */
  private draining = false;
  /** Text that arrived before `consume` was called. */
  private pending: string[] | undefined;
  private onChunk: ((text: string) => void) | undefined;
  private headSettled = false;
  /** Whether the current connection carried a request before this one. */
  private reused = false;
  private ended = false;
  private failure: Error | undefined;
  private bodyDone: (() => void) | undefined;
  private bodyFailed: ((error: Error) => void) | undefined;
  private watch: IdleWatch | undefined;
  private readonly aborts: Set<() => void> | undefined;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly origin: Origin,
    /** The request's head (printable ASCII) and body, written as they are: see {@link send}. */
    private readonly head: string,
    private readonly body: string,
    private readonly headArrived: (response: HttpResponse) => void,
    private readonly headFailed: (error: Error) => void,
    private readonly signal: AbortSignal | undefined,
    idleTimeoutMs: number | undefined,
    /** The request is a HEAD: its response ends with the head. */
    headOnly = false,
  ) {
    this.parser = new ResponseParser(headOnly ? new HeadOnly(this) : this);
    this.watch =
      idleTimeoutMs !== undefined && idleTimeoutMs > 0 && Number.isFinite(idleTimeoutMs)
        ? watchIdle(idleTimeoutMs, () =>
            this.fail(Object.assign(new Error(`no data from the server for ${idleTimeoutMs} ms`), { code: 'ETIMEDOUT' })),
          )
        : undefined;
    if (signal) {
      this.onAbort = () => this.fail(abortError(signal));
      this.aborts = watchAbort(signal, this.onAbort);
    }
  }

  /**
   * Writes the request on a connection (a kept-alive one when there is one): head and body
   * as two strings in one corked write, which the socket encodes into one native write of
   * its own. Not `head + body` (the engine would copy the whole request into a new string
   * on every turn), nor a Buffer kept for a resend: a request waits on its model for
   * seconds, and a thousand waiting runs held their requests' bytes as ArrayBuffers that
   * only a full garbage collection gave back (ArrayBuffers at the benchmark's peak of 1,000
   * concurrent runs: 22–24 MB with a Buffer per request, 8–11 MB without).
   */
  send(): void {
    const conn = acquire(this.origin, this);
    this.conn = conn;
    this.reused = conn.uses > 0;
    const socket = conn.socket;
    socket.cork();
    socket.write(this.head, 'latin1');
    if (this.body !== '') socket.write(this.body, 'utf8');
    socket.uncork();
  }

  // ConnectionUser: the socket's events while this request holds the connection.

  onData(data: Buffer): void {
    // While draining, `watch` is the grace period, which data does not extend.
    if (this.watch && !this.draining) this.watch.last = Date.now();
    try {
      this.parser.execute(data);
    } catch (error) {
      this.fail(error as Error);
    }
  }

  onEof(): void {
    this.conn = undefined;
    if (this.parser.eof()) return; // a body delimited by the end of the connection: complete
    const partial = this.parser.partialHead;
    const message = this.headSettled
      ? 'socket hang up: the response body was cut'
      : partial === undefined
        ? 'socket hang up'
        : `socket hang up in the middle of the response head, which began ${partial}`;
    this.lost(Object.assign(new Error(message), { code: 'ECONNRESET' }));
  }

  onError(error: Error): void {
    this.conn = undefined;
    this.lost(error);
  }

  // ResponseSink: what the parser found.

  onHead(head: ResponseHead): void {
    const { headers } = head;
    let inflater: Transform | undefined;
    try {
      inflater = bodyDecoder(headers['content-encoding'], headers['transfer-encoding']);
    } catch (error) {
      // Not failed yet: the status is worth having, and an empty body needs no decoding.
      this.undecodable = error as Error;
    }
    if (inflater) {
      const codings = headers['content-encoding'] ?? headers['transfer-encoding'];
      this.inflater = inflater;
      inflater.on('data', (data: Buffer) => this.deliver(data));
      // Damaged data (a proxy's doing, most likely) is a network error, retried like a cut.
      inflater.on('error', (error: Error) =>
        this.fail(
          Object.assign(new Error(`the response body could not be decompressed (${codings}): ${error.message}`), { code: 'EBADBODY' }),
        ),
      );
    }
    this.status = head.status;
    this.statusText = head.statusText;
    this.headers = head.headers;
    this.headSettled = true;
    this.headArrived(this);
  }

  onBody(body: Buffer): void {
    if (this.inflater) {
      this.inflated = true;
      this.inflater.write(body);
    } else if (this.undecodable) this.fail(this.undecodable);
    else this.deliver(body);
  }

  /** Hands on the text of (decoded) body bytes. */
  private deliver(body: Buffer): void {
    const text = this.decoder.write(body);
    if (text === '') return;
    if (this.onChunk) this.onChunk(text);
    else (this.pending ??= []).push(text);
  }

  onEnd(reusable: boolean): void {
    const conn = this.conn;
    this.conn = undefined;
    if (conn) {
      if (reusable) release(conn);
      else conn.destroy();
    }
    const inflater = this.inflater;
    if (inflater && this.inflated) {
      // The raw body is complete; the text is, once the decompressor has handed on the rest.
      inflater.once('end', () => this.bodyEnded());
      inflater.end();
      return;
    }
    // An empty body labelled compressed (a 204, a bare 429 from a proxy) has nothing to decode.
    inflater?.destroy();
    this.bodyEnded();
  }

  private bodyEnded(): void {
    if (this.failure) return;
    const rest = this.decoder.end();
    if (rest !== '') {
      if (this.onChunk) this.onChunk(rest);
      else (this.pending ??= []).push(rest);
    }
    this.ended = true;
    this.cleanup();
    this.bodyDone?.();
  }

  // HttpResponse: what the caller reads.

  consume(onChunk: (text: string) => void): Promise<void> {
    const pending = this.pending;
    this.pending = undefined;
    if (pending) for (const text of pending) onChunk(text);
    // `onChunk` may have called drain() on the text that came with the head.
    if (this.ended || this.draining) return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    this.onChunk = onChunk;
    return new Promise<void>((resolve, reject) => {
      this.bodyDone = resolve;
      this.bodyFailed = reject;
    });
  }

  async text(maxChars = 64 * 1024): Promise<string> {
    let text = '';
    await this.consume((chunk) => {
      if (text.length < maxChars) text += chunk.length + text.length > maxChars ? chunk.slice(0, maxChars - text.length) : chunk;
    });
    return text;
  }

  drain(): void {
    if (this.ended || this.failure || this.draining) return;
    this.draining = true;
    this.onChunk = ignore;
    this.pending = undefined;
    const done = this.bodyDone;
    this.bodyDone = undefined;
    this.bodyFailed = undefined;
    done?.();
    // Usually called from inside a socket read whose last bytes end the body (the end
    // marker and the last chunk arrive together): look once that read has been parsed.
    process.nextTick(limitDrainOf, this);
  }

  /**
   * Right after `drain()`: a body that has not ended yet gets {@link DRAIN_GRACE_MS} to do so,
   * and its connection no longer keeps the process alive.
   */
  limitDrain(): void {
    if (this.ended || this.failure) return;
    // An unfinished body is no reason to keep the process alive (a CLI whose answer is complete).
    this.conn?.hold(false);
    if (this.watch) unwatchIdle(this.watch);
    this.watch = watchIdle(DRAIN_GRACE_MS, () =>
      this.fail(
        Object.assign(new Error(`the rest of the response body did not arrive within ${DRAIN_GRACE_MS} ms of its end marker`), {
          code: 'ETIMEDOUT',
        }),
      ),
    );
  }

  destroy(): void {
    if (this.ended || this.failure) return;
    this.fail(Object.assign(new Error('the response was abandoned'), { code: 'ECONNRESET' }));
  }

  /** The connection failed or closed under this request (it is already dropped). */
  private lost(error: Error): void {
    // A kept-alive connection the server had closed: nothing was answered, so the request
    // never reached it; ask again on another connection (a new one, in the end).
    if (this.reused && !this.parser.started && this.failure === undefined && !this.ended && !this.signal?.aborted) {
      this.send();
      return;
    }
    this.fail(error);
  }

  /** Ends the request with `error`: the connection is closed, the waiting promise rejected. */
  private fail(error: Error): void {
    if (this.ended || this.failure) return;
    this.failure = error;
    const conn = this.conn;
    this.conn = undefined;
    conn?.destroy();
    this.cleanup();
    if (!this.headSettled) {
      this.headSettled = true;
      this.headFailed(error);
    } else this.bodyFailed?.(error);
  }

  private cleanup(): void {
    if (this.failure) this.inflater?.destroy();
    if (this.watch) unwatchIdle(this.watch);
    if (this.aborts && this.onAbort) this.aborts.delete(this.onAbort);
  }
}

function ignore(): void {}

function limitDrainOf(exchange: Exchange): void {
  exchange.limitDrain();
}

/**
 * What the parser finds in the response to a HEAD, handed to its exchange: the head, then
 * the end. The parser frames a body by the headers alone, but a response to HEAD has none
 * whatever its Content-Length says (RFC 9110 §9.3.2); the parser is left expecting it, so
 * the connection is closed rather than reused.
 */
class HeadOnly implements ResponseSink {
  constructor(private readonly exchange: Exchange) {}

  onHead(head: ResponseHead): void {
    this.exchange.onHead(head);
    this.exchange.onEnd(false);
  }

  onBody(): void {}

  onEnd(): void {}
}
