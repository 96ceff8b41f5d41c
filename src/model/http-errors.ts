/**
 * Turning what a provider sent back (an HTTP status with headers and a body, a network
 * failure, an error object inside a stream) into one typed {@link ReinError} whose `kind`
 * decides what happens next and whose message says what to fix, quoting the provider.
 */
import { ReinError } from '../errors.js';
import type { ErrorCode, ErrorKind } from '../errors.js';
import { apiKeyEnvName } from './resolve.js';
import { isRecord } from './json.js';

/** Which request failed, for messages. */
export interface ErrorContext {
  provider: string;
  /** The model id as sent. */
  model: string;
  /** The URL requested. */
  url: string;
}

/** Header values as Node gives them (`IncomingHttpHeaders`) or as plain records. */
export type HeaderBag = Record<string, string | string[] | undefined>;

/** What a provider said about its error, from whichever body shape it used. */
export interface ProviderError {
  message: string;
  code?: string;
  type?: string;
  param?: string;
  /** A status carried inside the body (OpenRouter `code: 429`, Groq `status_code`). */
  status?: number;
}

// OpenAI `context_length_exceeded`, DeepSeek (same message, other code), Anthropic
// "prompt is too long", and the usual wording of other servers: vLLM; llama.cpp ("request
// (4390 tokens) exceeds the available context size", and "Context size has been exceeded."
// with HTTP 500); TGI ("`inputs` tokens + `max_new_tokens` must be <= 4096", "`inputs` must
// have less than 4096 tokens").
const CONTEXT_LENGTH =
  /context[_ ]length|maximum context|context window|prompt is too long|too many tokens in (?:the )?prompt|exceeds? the (?:available )?context size|context size (?:has been |was )?exceeded|`?inputs`? tokens \+ `?max_new_tokens`? must be <=|`?inputs`? must have less than \d+ tokens/i;
/**
 * An unknown model refused with 400 instead of 404: OpenRouter "x is not a valid model ID",
 * DeepSeek "Model Not Exist", and other servers' wordings. Each names the model as what is
 * missing, so "model x does not support tools" is not one.
 */
const UNKNOWN_MODEL = /is not a valid model|\bmodel(?: \S+)? (?:does not|doesn't|not) exists?\b|\b(?:unknown|invalid) model\b(?! (?:output|response|request|parameters?))|\bno such model\b/i;
const OVERLOADED = /overloaded/i;
const TRY_AGAIN = /try again in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)/i;
const MAX_QUOTED = 500;

/**
 * Classifies a non-2xx response. `body` is the response text (JSON or not).
 *
 * @example
 * errorFromResponse(429, { 'retry-after': '1' }, '{"error":{"message":"Rate limit reached"}}', ctx);
 * // ReinError { code: 'rate_limited', kind: 'transient', retryAfterMs: 1000, status: 429 }
 */
export function errorFromResponse(status: number, headers: HeaderBag, body: string, ctx: ErrorContext): ReinError {
  const info = readProviderError(parseJson(body)) ?? { message: quote(body.trim()) || `HTTP ${status} with an empty body` };
  return classify(info, status, headers, ctx);
}

/**
 * Classifies an error object that arrived inside a 200 stream: OpenRouter's top-level
 * `error` in a chunk, Groq's `event: error` frame, a Responses/Anthropic `error` event.
 * Pass the object found (the `error` member or the whole frame).
 */
export function errorFromStreamPayload(payload: unknown, ctx: ErrorContext): ReinError {
  const info = readProviderError(payload) ?? readProviderError({ error: payload }) ?? { message: quote(JSON.stringify(payload) ?? '') };
  return classify(info, info.status, {}, ctx);
}

/** Classifies a failure to reach the server or to read its answer (no HTTP status). */
export function errorFromNetwork(error: unknown, ctx: ErrorContext): ReinError {
  if (error instanceof ReinError) return error;
  const err = error instanceof Error ? error : new Error(String(error));
  if (err.name === 'AbortError') return new ReinError('aborted', 'fatal', 'The model request was aborted', { cause: err });
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const where = `${ctx.url} (${ctx.provider}/${ctx.model})`;
  if (/CERT|TLS|SSL|SELF_SIGNED/.test(code)) {
    return new ReinError('network', 'fatal', `TLS error connecting to ${where}: ${err.message} [${code}]. Check the server's certificate, or trust its CA with NODE_EXTRA_CA_CERTS`, { cause: err, details: { code } });
  }
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
  return new ReinError('network', 'transient', `Network error talking to ${where}: ${hint}`, { cause: err, details: code ? { code } : undefined });
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
    `${ctx.provider} (${ctx.url}) answered 200 for ${ctx.model} with a response that carried nothing (no text, no tool call, no finish_reason): the server most likely failed without saying why (check its log)`,
  );
}

/** The error for a stream that ended before the response was complete. */
export function streamCutError(ctx: ErrorContext, cause?: unknown): ReinError {
  const why = cause instanceof Error ? `: ${cause.message}` : '';
  return new ReinError(
    'stream_cut',
    'transient',
    `The response stream from ${ctx.url} (${ctx.provider}/${ctx.model}) ended before it was complete (no finish_reason and no [DONE])${why}; the request can be retried`,
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

function classify(info: ProviderError, status: number | undefined, headers: HeaderBag, ctx: ErrorContext): ReinError {
  const { message, code = '', type = '' } = info;
  const said = `: ${clause(message)}`;
  const at = `${ctx.provider} (${ctx.url})`;
  const statusText = status === undefined ? 'in the stream' : `HTTP ${status}`;
  const details: Record<string, unknown> = {};
  if (info.code !== undefined) details.code = info.code;
  if (info.type !== undefined) details.type = info.type;
  if (info.param !== undefined) details.param = info.param;
  const make = (c: ErrorCode, kind: ErrorKind, text: string): ReinError =>
    new ReinError(c, kind, text, {
      status,
      details: Object.keys(details).length > 0 ? details : undefined,
      retryAfterMs: kind === 'transient' ? parseRetryAfter(headers, message) : undefined,
    });

  // 500: llama.cpp's "Context size has been exceeded." (retrying would send the same request).
  if (
    (status === undefined || status === 400 || status === 413 || status === 422 || status === 500) &&
    (code === 'context_length_exceeded' || type === 'exceed_context_size_error' || CONTEXT_LENGTH.test(message))
  ) {
    return make('context_length', 'fatal', `The request does not fit the context window of ${ctx.model} (${statusText})${said}. Shorten the conversation (compact the history, trim long tool results) or lower max tokens`);
  }
  if (code === 'insufficient_quota') {
    return make('rate_limited', 'fatal', `${at} reports the quota of this API key is used up (${statusText})${said}. Add credit or check the plan of the key; retrying will not help`);
  }
  if (status === 529 || type === 'overloaded_error' || ((status === undefined || status >= 500) && OVERLOADED.test(message))) {
    return make('overloaded', 'transient', `${at} is overloaded (${statusText})${said}. This is on the provider's side; retry later`);
  }
  if (code === 'tool_use_failed') {
    // Groq: the model wrote a tool call the server could not parse. Another sample usually
    // gets it right, so this is retried rather than stopping the run.
    return make('invalid_response', 'transient', `The model ${ctx.model} produced a tool call ${ctx.provider} could not parse (${statusText})${said}. It is retried; if it keeps failing, simplify the tool schemas or lower the temperature`);
  }
  if (status !== undefined && status >= 300 && status < 400) {
    // Following it would send the request and its API key to an address nobody configured
    // (and turn a POST into a GET on 301/302/303): say where the server points instead.
    const target = redirectTarget(header(headers, 'location'), ctx.url);
    const where = target === undefined ? 'without saying where (no Location header)' : `to ${target}`;
    return make('config', 'fatal', `${at} redirected the request ${where} (${statusText}). rein does not follow redirects of model requests; set the base URL to the address the server uses now (an http:// URL that moved to https://, a path that gained or lost a trailing slash or /v1)`);
  }
  if (status === 407) {
    return make('auth', 'fatal', `The proxy between rein and ${at} wants credentials (${statusText})${said}. Put them in the proxy URL: HTTP_PROXY=http://user:password@host:port`);
  }
  if (status === 401 || status === 403 || code === 'invalid_api_key' || type === 'authentication_error') {
    return make('auth', 'fatal', `${at} refused the credentials (${statusText})${said}. Set ${apiKeyEnvName(ctx.provider)} (or the provider's apiKey) to a valid key with access to ${ctx.model}`);
  }
  if (status === 404 || code === 'model_not_found' || (status === 400 && UNKNOWN_MODEL.test(message))) {
    if (code === 'model_not_found' || /model/i.test(message)) {
      return make('model_not_found', 'fatal', `Model "${ctx.model}" is not available at ${at} (${statusText})${said}. Check the model id ("${ctx.provider}/${ctx.model}") and that your key has access to it`);
    }
    return make('not_found', 'fatal', `${ctx.url} was not found (${statusText})${said}. Check the base URL: the API's path (${apiPath(ctx.url)}) must exist under it`);
  }
  if (status === 429 || code === 'rate_limit_exceeded' || type === 'rate_limit_error' || type === 'tokens') {
    return make('rate_limited', 'transient', `Rate limited by ${at} (${statusText})${said}. Lower the concurrency or raise the rate limit if it persists`);
  }
  if (status === 408) {
    return make('timeout', 'transient', `${at} timed out waiting for the request (${statusText})${said}`);
  }
  if (status === 409 || status === undefined || status >= 500) {
    return make('server_error', 'transient', `${at} failed to answer (${statusText})${said}. This is on the provider's side; retry later`);
  }
  const param = info.param ? ` (parameter "${info.param}")` : '';
  return make('bad_request', 'fatal', `${at} rejected the request for ${ctx.model} (${statusText})${said}. Fix the request${param}: remove the option or message kind this model or server does not support`);
}

/** What an error response body says, when it is one of the shapes providers use. */
export function providerErrorOf(body: string): ProviderError | undefined {
  return readProviderError(parseJson(body));
}

function readProviderError(body: unknown): ProviderError | undefined {
  if (!isRecord(body)) return undefined;
  const error = body.error;
  if (typeof error === 'string') return { message: quote(error) };
  if (error === undefined && body.detail !== undefined) return readValidationDetail(body.detail);
  const source = isRecord(error) ? error : typeof body.message === 'string' ? body : undefined;
  if (source === undefined) return undefined;
  const info: ProviderError = { message: quote(typeof source.message === 'string' ? source.message : JSON.stringify(source)) };
  // OpenRouter puts the upstream provider's own words in metadata.raw.
  const raw = isRecord(source.metadata) ? source.metadata.raw : undefined;
  if (typeof raw === 'string' && raw !== '') info.message += ` (${quote(raw)})`;
  if (typeof source.code === 'string') info.code = source.code;
  else if (typeof source.code === 'number' && source.code >= 400 && source.code < 600) info.status = source.code;
  if (typeof source.type === 'string') info.type = source.type;
  if (typeof source.param === 'string') info.param = source.param;
  if (typeof source.status_code === 'number') info.status = source.status_code;
  return info;
}

/**
 * A validation error of a server built on FastAPI / pydantic (vLLM, SGLang, LiteLLM, many
 * gateways): `{ detail: [{ loc: ['body', 'stream_options'], msg: 'Extra inputs are not
 * permitted', input }] }`, or `{ detail: "text" }`. Each entry's location and words; the
 * echoed `input` (the request itself) is left out.
 */
function readValidationDetail(detail: unknown): ProviderError | undefined {
  if (typeof detail === 'string') return { message: quote(detail) };
  if (!Array.isArray(detail)) return undefined;
  const parts: string[] = [];
  let param: string | undefined;
  for (const item of detail) {
    if (!isRecord(item)) continue;
    const loc = Array.isArray(item.loc) ? item.loc.filter((p) => p !== 'body').join('.') : '';
    const last = Array.isArray(item.loc) ? item.loc[item.loc.length - 1] : undefined;
    if (param === undefined && typeof last === 'string') param = last;
    parts.push(`${loc ? `${loc}: ` : ''}${typeof item.msg === 'string' ? item.msg : 'invalid'}`);
  }
  if (parts.length === 0) return undefined;
  return { message: quote(parts.join('; ')), ...(param !== undefined ? { param } : {}) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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

function quote(text: string): string {
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
}

/** The redirect's absolute address, when it has one. */
function redirectTarget(location: string | undefined, url: string): string | undefined {
  if (location === undefined || location.trim() === '') return undefined;
  try {
    return new URL(location.trim(), url).href;
  } catch {
    return quote(location);
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
