/**
 * A minimal JSON POST over `node:http` / `node:https`, for the model adapters' hot path.
 *
 * Why not `fetch`: the benchmark holds rein to ≤ 1.3× the CPU of a bare `node:http`
 * keep-alive loop per model request. undici's web streams allocate per chunk; here the body
 * is a plain Node readable decoded with `setEncoding('utf8')`, and its string chunks go
 * straight to the SSE parser.
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { unwatchIdle, watchIdle, type IdleWatch } from './idle-watchdog.js';

// One keep-alive agent per protocol for the whole process: a run makes many requests to
// the same host, and reusing the TCP/TLS connection is most of the latency we can save.
const httpAgent = new http.Agent({ keepAlive: true });
const httpsAgent = new https.Agent({ keepAlive: true });

/** A response whose head has arrived; the body has not been read yet. */
export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as a Node readable, already set to UTF-8 (chunks are strings). */
  body: IncomingMessage;
  /**
   * Feeds every body chunk to `onChunk`. Resolves when the body ended completely; rejects
   * when the connection closed before that (a cut stream) or the request was aborted.
   */
  consume(onChunk: (text: string) => void): Promise<void>;
  /** Reads the whole body as text, keeping at most `maxChars` characters (the rest is drained). */
  text(maxChars?: number): Promise<string>;
  /** Stops reading and releases the connection (it is not reused). */
  destroy(): void;
}

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
 * the Node network error (`ECONNREFUSED`, `ENOTFOUND`, `socket hang up`, …) or with an
 * `AbortError` when `signal` aborts. Aborting later also ends the body with an `AbortError`.
 *
 * @example
 * const res = await httpPost(new URL('http://127.0.0.1:11434/v1/chat/completions'), { 'content-type': 'application/json' }, '{}');
 * const text = await res.text();
 */
export function httpPost(
  url: URL,
  /** Request headers; `content-length` is set on this object (pass a fresh one). */
  headers: OutgoingHttpHeaders,
  body: string,
  signal?: AbortSignal,
  /** No byte for this long (before or during the response) fails the request with `ETIMEDOUT`. */
  idleTimeoutMs?: number,
): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const target = targetOf(url);
    const secure = target.secure;
    headers['content-length'] = Buffer.byteLength(body);
    const options: http.RequestOptions = {
      agent: secure ? httpsAgent : httpAgent,
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      method: 'POST',
      headers,
    };
    let response: IncomingMessage | undefined;
    const watch =
      idleTimeoutMs !== undefined && idleTimeoutMs > 0 && Number.isFinite(idleTimeoutMs)
        ? watchIdle(idleTimeoutMs, () => {
            const error = Object.assign(new Error(`no data from the server for ${idleTimeoutMs} ms`), { code: 'ETIMEDOUT' });
            response?.destroy(error);
            req.destroy(error);
          })
        : undefined;
    const req = (secure ? https : http).request(options, (res) => {
      response = res;
      if (watch) watch.last = Date.now();
      res.setEncoding('utf8');
      resolve(wrap(res, watch));
    });
    const onAbort = signal
      ? (): void => {
          const error = abortError(signal);
          // Destroy the response first so its readers see the AbortError, not a bare "aborted".
          response?.destroy(error);
          req.destroy(error);
        }
      : undefined;
    const aborts = onAbort && signal ? watchAbort(signal, onAbort) : undefined;
    if (aborts || watch) {
      // `close` of the request follows the end of the response body (or a failure), so a
      // signal shared by a whole run does not collect one callback per request. (`on`, not
      // `once`, here and below: each fires once per request object, and `once` costs a
      // wrapper and a removal per listener on every request.)
      req.on('close', () => {
        if (aborts) aborts.delete(onAbort as () => void);
        if (watch) unwatchIdle(watch);
      });
    }
    req.on('error', reject);
    req.end(body);
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
  secure: boolean;
  protocol: string;
  hostname: string;
  port: string | undefined;
  path: string;
}

// URL getters are slow in Node 20 and a run posts to the same URL object every turn.
const targets = new WeakMap<URL, Target>();

function targetOf(url: URL): Target {
  let target = targets.get(url);
  if (!target) {
    target = {
      secure: url.protocol === 'https:',
      protocol: url.protocol,
      // URL keeps the brackets of IPv6 literals; the socket wants the bare address.
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port === '' ? undefined : url.port,
      path: url.pathname + url.search,
    };
    targets.set(url, target);
  }
  return target;
}

function wrap(res: IncomingMessage, watch: IdleWatch | undefined): HttpResponse {
  return new NodeResponse(res, watch);
}

/** A response over `node:http` (a class: one object per request, no closures). */
class NodeResponse implements HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;

  constructor(
    readonly body: IncomingMessage,
    private readonly watch: IdleWatch | undefined,
  ) {
    this.status = body.statusCode ?? 0;
    this.headers = body.headers;
  }

  consume(onChunk: (text: string) => void): Promise<void> {
    return consume(this.body, this.watch ? alive(this.watch, onChunk) : onChunk);
  }

  text(maxChars = 64 * 1024): Promise<string> {
    return readText(this.body, maxChars);
  }

  destroy(): void {
    this.body.destroy();
  }
}

/** Wraps a chunk handler so every chunk counts as a sign of life for the idle watchdog. */
function alive(watch: IdleWatch, onChunk: (text: string) => void): (text: string) => void {
  return (text) => {
    watch.last = Date.now();
    onChunk(text);
  };
}

function consume(res: IncomingMessage, onChunk: (text: string) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    res.on('data', onChunk);
    res.on('end', () => {
      settled = true;
      resolve();
    });
    res.on('error', fail);
    // A connection cut mid-body ends in `close` without `end` (and, depending on timing,
    // without `error`): that is a truncated body, never a success.
    res.on('close', () => {
      if (!res.complete) fail(Object.assign(new Error('socket hang up: the response body was cut'), { code: 'ECONNRESET' }));
    });
  });
}

async function readText(res: IncomingMessage, maxChars: number): Promise<string> {
  let text = '';
  await consume(res, (chunk) => {
    if (text.length < maxChars) text += chunk.length + text.length > maxChars ? chunk.slice(0, maxChars - text.length) : chunk;
  });
  return text;
}
