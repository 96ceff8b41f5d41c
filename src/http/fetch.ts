/**
 * A `fetch` on rein's HTTP client, for the MCP SDK's HTTP transports: Node 20's global
 * `fetch` ignores `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` / `NO_PROXY`, and rein's client
 * reads them as it does for model requests (see `http-proxy.ts`).
 *
 * It is a fetch for what MCP sends and receives, not a general one: request bodies are
 * strings (the SDK sends JSON text), response bodies are text (JSON or an event stream)
 * handed on as UTF-8 bytes as they arrive, and redirects are not followed.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { httpRequest, type HttpResponse } from './client.js';

/** Methods `fetch` upper-cases whatever case they are given in (the Fetch standard's list). */
const NORMALIZED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
/** Methods `fetch` refuses: each would take the connection out of HTTP. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);
/** Final statuses whose response has no body (a `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * `fetch(input, init)` over rein's HTTP client, with proxies from the environment. Honours
 * `method`, `headers`, a string `body` and `signal` (an abort before the head rejects with an
 * `AbortError`; one during the body errors the body stream with it). Other `init` fields
 * (`credentials`, `cache`, `keepalive`, …) have no meaning here and are ignored.
 *
 * Redirects are not followed: a 3xx comes back as it is, as Node's `fetch` returns it with
 * `redirect: 'manual'`. The MCP SDK follows same-origin redirects itself; following others
 * here would send the request's headers (its credentials) to a server nobody configured.
 *
 * @example
 * new StreamableHTTPClientTransport(url, { fetch: proxiedFetch });
 */
export async function proxiedFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
  // A fresh URL: rein's client keeps what it worked out per URL object (the proxy among it),
  // and a caller's URL object may change after this call.
  const url = new URL(input instanceof URL ? input.href : input);
  const method = methodOf(init.method);
  const body = bodyOf(init.body, method);
  const headers = requestHeaders(init.headers, body);
  const signal = init.signal ?? undefined;
  const response = await httpRequest(method, url, headers, body, signal);
  try {
    if (init.redirect === 'error' && response.status >= 300 && response.status < 400) {
      throw new TypeError(`fetch failed: ${url.href} answered with a redirect (${response.status}) and redirect is 'error'`);
    }
    return toResponse(response, method === 'HEAD');
  } catch (error) {
    response.destroy();
    throw error;
  }
}

/** The method as `fetch` sends it; throws as `fetch` does on one it refuses. */
function methodOf(given: string | undefined): string {
  if (given === undefined) return 'GET';
  const upper = given.toUpperCase();
  if (FORBIDDEN_METHODS.has(upper)) throw new TypeError(`'${given}' HTTP method is unsupported: fetch cannot send it`);
  return NORMALIZED_METHODS.has(upper) ? upper : given;
}

/** The request body as text; throws a TypeError on anything else (or a body on GET/HEAD). */
function bodyOf(body: RequestInit['body'], method: string): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body !== 'string') {
    const kind =
      typeof body === 'object'
        ? ((Object.getPrototypeOf(body) as { constructor?: { name?: string } } | null)?.constructor?.name ?? 'object')
        : typeof body;
    throw new TypeError(`proxiedFetch sends string bodies only, and got ${kind}: serialize the body to a string (JSON.stringify) first`);
  }
  if (method === 'GET' || method === 'HEAD') throw new TypeError(`Request with ${method} method cannot have body.`);
  return body;
}

/** `init.headers` as rein's client takes them, with `fetch`'s default content type for a text body. */
function requestHeaders(given: RequestInit['headers'], body: string | undefined): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  // Headers validates names and values and joins repeated ones, as fetch would send them.
  for (const [name, value] of new Headers(given)) headers[name] = value;
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'text/plain;charset=UTF-8';
  return headers;
}

/** The `Response` for a response whose head arrived; its body streams as it arrives. */
function toResponse(response: HttpResponse, headRequest: boolean): Response {
  const { status } = response;
  if (status < 200 || status > 599) {
    throw new TypeError(`fetch failed: the server answered with status ${status}, which is not a final HTTP status (200-599)`);
  }
  const headers = new Headers();
  for (const name in response.headers) {
    const value = response.headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else headers.append(name, value);
  }
  const bodiless = headRequest || NULL_BODY_STATUSES.has(status);
  // A body a 205 should not have (or one still coming) is not read: the connection goes.
  if (bodiless) response.destroy();
  return new Response(bodiless ? null : bodyStream(response), { status, statusText: response.statusText, headers });
}

/**
 * The body as a byte stream: each piece of text is enqueued as it arrives (an event stream
 * must reach its reader event by event), the stream closes when the body ended, errors when
 * it was cut or aborted, and cancelling it ends the exchange (the connection is closed).
 * The client pushes what it reads with no back-pressure: an MCP body is JSON or events,
 * read as they come.
 */
function bodyStream(response: HttpResponse): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      response
        .consume((text) => {
          if (!cancelled) controller.enqueue(encoder.encode(text));
        })
        .then(
          () => {
            if (!cancelled) controller.close();
          },
          (error: unknown) => {
            if (!cancelled) controller.error(error);
          },
        );
    },
    cancel() {
      cancelled = true;
      response.destroy();
    },
  });
}
