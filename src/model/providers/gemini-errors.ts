/**
 * Gemini's error bodies (`{error: {code, message, status, details[]}}`, google.rpc.Status)
 * classified into typed {@link ReinError}s. The shared classifier in http-errors.ts
 * handles the common cases (404 model, 5xx, overloaded); this adds what only Google does:
 *
 * - a bad key is HTTP **400** INVALID_ARGUMENT with ErrorInfo reason `API_KEY_INVALID`
 *   (recorded in fixtures/gemini/error-400-api-key-invalid.json), which is `auth`, not
 *   `bad_request`;
 * - the wait before a retry comes in the body, as RetryInfo `retryDelay: "37s"`, not in a
 *   `retry-after` header;
 * - an over-long prompt says "The input token count (…) exceeds the maximum number of
 *   tokens allowed (…)".
 */
import { ReinError } from '../../errors.js';
import { clause, errorFromResponse, errorFromStreamPayload, parseRetryAfter } from '../http-errors.js';
import type { ErrorContext, HeaderBag } from '../http-errors.js';
import { apiKeyEnvName } from '../resolve.js';
import { isRecord, type Json } from '../json.js';

const AUTH_REASONS = new Set([
  'API_KEY_INVALID',
  'API_KEY_SERVICE_BLOCKED',
  'API_KEY_HTTP_REFERRER_BLOCKED',
  'API_KEY_IP_ADDRESS_BLOCKED',
  'ACCESS_TOKEN_EXPIRED',
]);
const TOO_LONG = /exceeds the maximum number of tokens|input token count .*exceeds|input context is too long/i;

/** Classifies a non-2xx Gemini response (`body` is its text, JSON or not). */
export function geminiErrorFromResponse(status: number, headers: HeaderBag, body: string, ctx: ErrorContext): ReinError {
  const error = statusOf(parseJson(body));
  if (error === undefined) return errorFromResponse(status, headers, body, ctx);
  return classifyGemini(error, status, headers, () => errorFromResponse(status, headers, body, ctx), ctx);
}

/** Classifies an `error` object that arrived inside a 200 stream (or a 200 JSON body). */
export function geminiErrorFromPayload(payload: unknown, ctx: ErrorContext): ReinError {
  const error = statusOf({ error: payload });
  if (error === undefined) return errorFromStreamPayload(payload, ctx);
  const status = typeof error.code === 'number' && error.code >= 400 && error.code < 600 ? error.code : undefined;
  const fallback = (): ReinError =>
    status === undefined ? errorFromStreamPayload(payload, ctx) : errorFromResponse(status, {}, JSON.stringify({ error: payload }), ctx);
  return classifyGemini(error, status, {}, fallback, ctx);
}

function classifyGemini(
  error: Json,
  status: number | undefined,
  headers: HeaderBag,
  fallback: () => ReinError,
  ctx: ErrorContext,
): ReinError {
  const message = typeof error.message === 'string' ? error.message : JSON.stringify(error);
  const details = Array.isArray(error.details) ? error.details.filter(isRecord) : [];
  const reason = details.find((d) => typeof d.reason === 'string')?.reason as string | undefined;
  const rpcStatus = typeof error.status === 'string' ? error.status : undefined;
  const info: Json = {};
  if (rpcStatus !== undefined) info.status = rpcStatus;
  if (reason !== undefined) info.reason = reason;
  const where = `${ctx.provider} (${ctx.url})`;
  const said = `(${status === undefined ? 'in the stream' : `HTTP ${status}`}): ${clause(message)}`;
  const make = (code: ReinError['code'], kind: ReinError['kind'], text: string, retryAfterMs?: number): ReinError =>
    new ReinError(code, kind, text, { status, retryAfterMs, details: Object.keys(info).length > 0 ? info : undefined });

  if ((reason !== undefined && AUTH_REASONS.has(reason)) || rpcStatus === 'UNAUTHENTICATED' || rpcStatus === 'PERMISSION_DENIED') {
    return make(
      'auth',
      'fatal',
      `${where} refused the credentials ${said}. Set ${apiKeyEnvName(ctx.provider)} (or the provider's apiKey) to a valid key with access to ${ctx.model}`,
    );
  }
  if (TOO_LONG.test(message) && (status === undefined || status === 400)) {
    return make(
      'context_length',
      'fatal',
      `The request does not fit the context window of ${ctx.model} ${said}. Shorten the conversation (compact the history, trim long tool results) or lower max tokens`,
    );
  }
  const retryAfterMs = retryDelayOf(details) ?? parseRetryAfter(headers, message);
  if (rpcStatus === 'RESOURCE_EXHAUSTED' || status === 429) {
    return make(
      'rate_limited',
      'transient',
      `Rate limited by ${where} ${said}. Lower the concurrency or raise the quota if it persists`,
      retryAfterMs,
    );
  }
  const base = fallback();
  if (base.kind !== 'transient' || retryAfterMs === undefined || base.retryAfterMs !== undefined) return base;
  return new ReinError(base.code, base.kind, base.message, { status: base.status, retryAfterMs, details: base.details });
}

/** RetryInfo's `retryDelay` (a protobuf Duration in JSON: "37s", "1.5s") in milliseconds. */
function retryDelayOf(details: Json[]): number | undefined {
  for (const detail of details) {
    const type = typeof detail['@type'] === 'string' ? detail['@type'] : '';
    const delay = detail.retryDelay;
    if (!type.endsWith('google.rpc.RetryInfo') && delay === undefined) continue;
    if (typeof delay === 'string' && /^\d+(?:\.\d+)?s$/.test(delay)) return Math.ceil(Number(delay.slice(0, -1)) * 1000);
    if (isRecord(delay)) return Number(delay.seconds ?? 0) * 1000 + Math.ceil(Number(delay.nanos ?? 0) / 1e6);
  }
  return undefined;
}

/** The google.rpc.Status inside a body (`{error}`, or `[{error}]` as array-shaped streams send it). */
function statusOf(body: unknown): Json | undefined {
  const first: unknown = Array.isArray(body) ? body[0] : body;
  if (!isRecord(first) || !isRecord(first.error)) return undefined;
  const error = first.error;
  // Only Google's shape: a string `status` or `details`; other shapes go to the shared classifier.
  return typeof error.status === 'string' || Array.isArray(error.details) ? error : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
