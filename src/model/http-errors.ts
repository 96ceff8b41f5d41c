/**
 * Turning what a provider sent back (an HTTP status with headers and a body, a network
 * failure, an error object inside a stream) into one typed {@link ReinError} whose `kind`
 * decides what happens next and whose message says what to fix, quoting the provider.
 * Reading the provider's words out of its body shape is provider-error-body.ts's job.
 */
import { ReinError } from '../errors.js';
import { errorRules, type ErrorRule, type Refusal } from './error-rules.js';
import { apiKeyEnvName } from './resolve.js';
import { bodyText, parseJson, quote, readProviderError } from './provider-error-body.js';
import type { ProviderError } from './provider-error-body.js';

export type { ProviderError } from './provider-error-body.js';

/** Which request failed, for messages. */
export interface ErrorContext {
  provider: string;
  /** The model id as sent. */
  model: string;
  /** The URL requested. A user and password in it are never shown (see {@link withoutUserinfo}). */
  url: string;
  /**
   * The URL held a user and password that were not sent as `Authorization: Basic`, because
   * the request had an Authorization header of its own (the API key): a refusal says so.
   */
  urlCredentialsNotSent?: boolean;
}

/** Header values as Node gives them (`IncomingHttpHeaders`) or as plain records. */
export type HeaderBag = Record<string, string | string[] | undefined>;

const TRY_AGAIN = /try again in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)/i;

/**
 * Classifies a non-2xx response. `body` is the response text (JSON or not).
 *
 * @example
 * errorFromResponse(429, { 'retry-after': '1' }, '{"error":{"message":"Rate limit reached"}}', ctx);
 * // ReinError { code: 'rate_limited', kind: 'transient', retryAfterMs: 1000, status: 429 }
 */
export function errorFromResponse(status: number, headers: HeaderBag, body: string, ctx: ErrorContext): ReinError {
  const info = readProviderError(parseJson(body)) ?? { message: bodyText(body) || `HTTP ${status} with an empty body` };
  return classify(info, status, headers, withShownUrl(ctx));
}

/**
 * Classifies an error object that arrived inside a 200 stream (or a 200 body): OpenRouter's
 * top-level `error` in a chunk, Groq's `event: error` frame, a Responses/Anthropic `error`
 * event, vLLM's whole frame `{"object":"error","message":…,"code":400}`, FastAPI's
 * `{"detail":…}`, Gemini's `[{"error":…}]`. Pass the object found (the `error` member or
 * the whole frame). A status the payload carries (`code: 400`, `code: "429"`) decides as an
 * HTTP status would.
 */
export function errorFromStreamPayload(payload: unknown, ctx: ErrorContext): ReinError {
  const info = readProviderError(payload) ?? readProviderError({ error: payload }) ?? { message: quote(JSON.stringify(payload) ?? '') };
  return classify(
    info,
    info.status,
    {},
    withShownUrl(ctx),
    info.status === undefined ? 'in the stream' : `in the stream, status ${info.status}`,
  );
}

/** Classifies a failure to reach the server or to read its answer (no HTTP status). */
export function errorFromNetwork(error: unknown, ctx: ErrorContext): ReinError {
  if (error instanceof ReinError) return error;
  const err = error instanceof Error ? error : new Error(String(error));
  if (err.name === 'AbortError') return new ReinError('aborted', 'fatal', 'The model request was aborted', { cause: err });
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const where = `${withoutUserinfo(ctx.url)} (${ctx.provider}/${ctx.model})`;
  const tls = tlsError(err, code, where);
  if (tls !== undefined) return tls;
  if (code === 'HPE_INVALID_RESPONSE') return unreadableResponse(err, where);
  if (code === 'ERR_CONTENT_ENCODING') return undecodableBody(err, where);
  if (code === '') {
    // Not a socket error: a bug or a bad value on our side. Retrying would not help.
    return new ReinError('internal', 'fatal', `rein could not make the request to ${where}: ${err.message}`, { cause: err });
  }
  if (code.startsWith('ERR_')) {
    // Node refused the request before sending it (an invalid URL or header value).
    return new ReinError('config', 'fatal', `invalid request to ${where}: ${err.message} [${code}]`, { cause: err, details: { code } });
  }
  if (code === 'ETIMEDOUT') {
    return new ReinError('timeout', 'transient', `Timed out talking to ${where}: ${err.message}`, { cause: err, details: { code } });
  }
  let hint: string;
  if (code === 'ECONNREFUSED') hint = 'connection refused: is the server running and listening there? Start it or fix the base URL';
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') hint = `host not found [${code}]: check the base URL and your network / DNS`;
  else hint = `${err.message}${code ? ` [${code}]` : ''}`;
  return new ReinError('network', 'transient', `Network error talking to ${where}: ${hint}`, {
    cause: err,
    details: code ? { code } : undefined,
  });
}

/**
 * A TLS failure, or undefined when `err` is not one. Each repeats on every attempt, so none
 * is retried. Node reports a failed handshake as `EPROTO` with OpenSSL's own text
 * (`write EPROTO 80…:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:…`):
 * the two common causes are said in words, and any other by OpenSSL's reason alone.
 */
function tlsError(err: Error, code: string, where: string): ReinError | undefined {
  const openssl = code === 'EPROTO' && /SSL routines|SSL alert|ssl3_|tlsv1/i.test(err.message);
  if (!openssl && !/CERT|TLS|SSL|SELF_SIGNED/.test(code)) return undefined;
  const details = { code };
  if (/wrong version number|packet length too long|record layer failure/i.test(err.message)) {
    // What came back to the handshake was not a TLS record: a plain-HTTP server answering it.
    return new ReinError(
      'config',
      'fatal',
      `The server at ${where} does not speak TLS (it answered the TLS handshake with something else, most likely plain HTTP): use http:// instead of https:// in the base URL`,
      { cause: err, details },
    );
  }
  if (/no application protocol/i.test(err.message)) {
    // rein offers only http/1.1 by ALPN; a server that speaks only HTTP/2 refuses that.
    return new ReinError(
      'config',
      'fatal',
      `The server at ${where} speaks only HTTP/2 (it refused the TLS connection for HTTP/1.1), which rein does not speak: use an HTTP/1.1 endpoint of the server, or a proxy in front of it that accepts HTTP/1.1`,
      { cause: err, details },
    );
  }
  if (openssl) {
    return new ReinError(
      'network',
      'fatal',
      `The TLS handshake with ${where} failed: ${opensslReason(err.message)} [${code}]. The server and rein (Node's OpenSSL) could not agree on a TLS connection; check the server's TLS settings`,
      { cause: err, details },
    );
  }
  return new ReinError(
    'network',
    'fatal',
    `TLS error connecting to ${where}: ${err.message} [${code}]. Check the server's certificate, or trust its CA with NODE_EXTRA_CA_CERTS`,
    { cause: err, details },
  );
}

/** OpenSSL's reason out of its error text (`…:SSL routines:func:reason:file:line:`), or the text cut short. */
function opensslReason(message: string): string {
  const reason = /SSL routines:[^:]*:([^:]+):/.exec(message)?.[1];
  return reason ?? quote(message.replace(/\s+/g, ' ').trim());
}

/**
 * A response rein's parser refused (see http-parser.ts). Another attempt gets the same
 * bytes, so it is not retried: either the port serves another protocol, or the server (or
 * a proxy) writes broken HTTP.
 */
function unreadableResponse(err: Error, where: string): ReinError {
  const { received, detail } = err as Error & { received?: unknown; detail?: unknown };
  const details = { code: 'HPE_INVALID_RESPONSE' };
  if (typeof received === 'string') {
    return new ReinError(
      'invalid_response',
      'fatal',
      `${where} answered with something that is not HTTP: ${received}. Check the base URL: its host and port must be those of the API server (and its scheme http:// or https:// as the server speaks)`,
      { cause: err, details },
    );
  }
  const what = typeof detail === 'string' ? detail : err.message;
  return new ReinError(
    'invalid_response',
    'fatal',
    `${where} sent a response rein cannot read as HTTP/1.1 (${what}). It would be the same on every attempt, so it is not retried; check the server, or the proxy in front of it`,
    { cause: err, details },
  );
}

/** A body in a coding rein cannot decode (see http-inflate.ts): a setting of the server or of a proxy. */
function undecodableBody(err: Error, where: string): ReinError {
  const { header, value } = err as Error & { header?: unknown; value?: unknown };
  const details = { code: 'ERR_CONTENT_ENCODING' };
  const named = typeof value === 'string' ? value : '?';
  const text =
    header === 'transfer-encoding'
      ? `${where} answered with a transfer coding rein cannot decode (Transfer-Encoding: ${named}): rein reads chunked, gzip, deflate and br. Turn that coding off in the server or the proxy in front of it`
      : `${where} answered with its body encoded as "${named}" (Content-Encoding), which rein cannot decode: rein asks for no encoding (accept-encoding: identity) and decodes gzip, deflate and br. Turn off response compression for this endpoint in the server or the proxy in front of it, or have it honour Accept-Encoding`;
  return new ReinError('invalid_response', 'fatal', text, { cause: err, details });
}

/**
 * A URL as it may be shown: without the user and password of `http://user:pass@host/`
 * (which would put a password in a terminal and a log). Text that is not a URL is returned
 * as it is, and so is a URL without them (not re-serialized).
 */
export function withoutUserinfo(url: string): string {
  return url.replace(USERINFO, '$1');
}

/** `scheme://` followed by a userinfo: everything up to the last `@` before the host ends. */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/** `ctx` with its URL fit to be shown. */
function withShownUrl(ctx: ErrorContext): ErrorContext {
  const url = withoutUserinfo(ctx.url);
  return url === ctx.url ? ctx : { ...ctx, url };
}

/**
 * The error for a 200 response that carried nothing: no text, thinking or tool call, no
 * finish_reason. A `server_error`, transient: a server that failed in a way it did not
 * report (or that rein could not read) answers like this, and another attempt usually
 * gets an answer; the message says where to look when it keeps happening.
 */
export function emptyResponseError(ctx: ErrorContext): ReinError {
  return new ReinError(
    'server_error',
    'transient',
    `${ctx.provider} (${withoutUserinfo(ctx.url)}) answered 200 for ${ctx.model} with a response that carried nothing (no text, no tool call, no finish_reason): the server most likely failed without saying why (check its log)`,
  );
}

/** The error for a stream that ended before the response was complete. */
export function streamCutError(ctx: ErrorContext, cause?: unknown): ReinError {
  const why = cause instanceof Error ? `: ${cause.message}` : '';
  return new ReinError(
    'stream_cut',
    'transient',
    `The response stream from ${withoutUserinfo(ctx.url)} (${ctx.provider}/${ctx.model}) ended before it was complete (no finish_reason and no [DONE])${why}; the request can be retried`,
    cause === undefined ? {} : { cause },
  );
}

/**
 * How long the server asked us to wait, in milliseconds: `retry-after-ms`, then
 * `retry-after` (seconds or an HTTP date), then OpenAI's "Please try again in 1.5s" hint
 * in `message`. `undefined` when there is no usable hint.
 */
export function parseRetryAfter(headers: HeaderBag, message?: string, now: number = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && /^\d+(?:\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const after = header(headers, 'retry-after')?.trim();
  if (after !== undefined && after !== '') {
    if (/^\d+(?:\.\d+)?$/.test(after)) return Math.ceil(Number(after) * 1000);
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const hint = message === undefined ? null : TRY_AGAIN.exec(message);
  if (hint?.[1] === undefined) return undefined;
  let total = 0;
  for (const part of hint[1].matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    const unit = part[2] === 'ms' ? 1 : part[2] === 's' ? 1000 : part[2] === 'm' ? 60_000 : 3_600_000;
    total += Number(part[1]) * unit;
  }
  return Math.ceil(total);
}

/** The table classify reads, made once (its advice needs helpers of this module). */
const RULES: readonly ErrorRule[] = errorRules({ apiKeyEnvName, redirectTarget, header, apiPath });

/**
 * The error of the first rule of `error-rules.ts` that holds. `statusText` says where the
 * status came from: `HTTP 400` for a response, `in the stream` (with the status an error
 * frame carried, if any) for an error inside a 200 stream.
 */
function classify(
  info: ProviderError,
  status: number | undefined,
  headers: HeaderBag,
  ctx: ErrorContext,
  statusText = status === undefined ? 'in the stream' : `HTTP ${status}`,
): ReinError {
  const { message, code = '', type = '' } = info;
  const refusal: Refusal = {
    info,
    message,
    code,
    type,
    status,
    headers,
    ctx,
    statusText,
    said: `: ${clause(message)}`,
    at: `${ctx.provider} (${ctx.url})`,
  };
  const rule = RULES.find((one) => one.when(refusal)) as ErrorRule;
  const details: Record<string, unknown> = {};
  if (info.code !== undefined) details.code = info.code;
  if (info.type !== undefined) details.type = info.type;
  if (info.param !== undefined) details.param = info.param;
  return new ReinError(rule.code, rule.kind, rule.advice(refusal), {
    status,
    details: Object.keys(details).length > 0 ? details : undefined,
    retryAfterMs: rule.kind === 'transient' ? parseRetryAfter(headers, message) : undefined,
  });
}

/** What an error response body says, when it is one of the shapes providers use. */
export function providerErrorOf(body: string): ProviderError | undefined {
  return readProviderError(parseJson(body));
}

function header(headers: HeaderBag, name: string): string | undefined {
  // Node lowercases header names; plain records from tests or other clients may not.
  let value = headers[name];
  if (value === undefined) {
    for (const key of Object.keys(headers)) if (key.toLowerCase() === name) value = headers[key];
  }
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A provider's message as a clause of rein's own sentence: without its final period, since
 * rein's text goes on with one (`does not exist. Check`, not `does not exist.. Check`).
 */
export function clause(message: string): string {
  return message.endsWith('.') && !message.endsWith('..') ? message.slice(0, -1) : message;
}

/** The redirect's absolute address, when it has one. */
function redirectTarget(location: string | undefined, url: string): string | undefined {
  if (location === undefined || location.trim() === '') return undefined;
  try {
    return withoutUserinfo(new URL(location.trim(), url).href);
  } catch {
    return quote(withoutUserinfo(location.trim()));
  }
}

/** The path part of an endpoint URL, for hints (`/v1/chat/completions`). */
function apiPath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}
