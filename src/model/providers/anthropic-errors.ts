/**
 * Classifying Anthropic Messages API errors into typed {@link ReinError}s.
 *
 * The shared rules of http-errors.ts already read Anthropic's body shape
 * (`{type: 'error', error: {type, message}, request_id}`) and its statuses: 529
 * `overloaded_error` and 500 `api_error` "Overloaded" → overloaded (transient), 429 →
 * rate_limited (transient, `retry-after` honoured), 401/403 → auth, 404 about a model →
 * model_not_found, 400 "prompt is too long" → context_length. This file adds only what is
 * Anthropic's own:
 *
 * - an `error` event inside a 200 stream has no HTTP status, only `error.type`; the type
 *   is read as the status Anthropic documents for it, so a mid-stream
 *   `invalid_request_error` is as fatal as its HTTP twin while `overloaded_error` stays
 *   transient (https://docs.anthropic.com/en/api/errors);
 * - "input length and `max_tokens` exceed context limit" is a context overflow too;
 * - `billing_error` / "credit balance is too low" is a used-up quota, not a bad request;
 * - a 404 that is not about a model points at the base URL as this adapter takes it.
 */
import { ReinError } from '../../errors.js';
import { clause, errorFromResponse, errorFromStreamPayload } from '../http-errors.js';
import type { ErrorContext, HeaderBag } from '../http-errors.js';
import { isRecord } from '../json.js';

// The HTTP status Anthropic pairs with each error type (docs: "HTTP errors").
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

const CONTEXT_LIMIT = /exceeds? (?:the )?context limit/i;
const NO_CREDIT = /credit balance is too low/i;

/** Classifies a non-2xx response of `POST /v1/messages`. */
export function anthropicResponseError(status: number, headers: HeaderBag, body: string, ctx: ErrorContext): ReinError {
  return refine(errorFromResponse(status, headers, body, ctx), readError(parseJson(body)), `HTTP ${status}`, ctx);
}

/**
 * Classifies the payload of an `event: error` frame (or an error body inside a 200 JSON
 * answer): `{type: 'error', error: {type, message}}`. The result carries no `status`: the
 * HTTP status was 200.
 *
 * @example
 * anthropicStreamError({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, ctx);
 * // ReinError { code: 'overloaded', kind: 'transient' }
 */
export function anthropicStreamError(payload: unknown, ctx: ErrorContext): ReinError {
  const info = readError(payload);
  const implied = info?.type === undefined ? undefined : STATUS_OF_TYPE[info.type];
  if (implied === undefined) return refine(errorFromStreamPayload(payload, ctx), info, 'in the stream', ctx);
  // Classify as the HTTP twin of this error type would be, then drop the borrowed status
  // from the error and its message: the response itself was a 200.
  const twin = errorFromResponse(implied, {}, JSON.stringify(payload), ctx);
  const error = new ReinError(twin.code, twin.kind, twin.message.replace(`(HTTP ${implied})`, '(in the stream)'), {
    details: twin.details,
    retryAfterMs: twin.retryAfterMs,
  });
  return refine(error, info, 'in the stream', ctx);
}

/** The error for a stream that ended before Anthropic said how the message ended. */
export function anthropicStreamCut(ctx: ErrorContext, cause?: unknown): ReinError {
  const why = cause instanceof Error ? `: ${cause.message}` : '';
  return new ReinError(
    'stream_cut',
    'transient',
    `The response stream from ${ctx.url} (${ctx.provider}/${ctx.model}) ended before it was complete (no message_delta with a stop_reason, no message_stop)${why}; the request can be retried`,
    cause === undefined ? {} : { cause },
  );
}

interface AnthropicErrorInfo {
  type?: string;
  message: string;
}

/** Anthropic-only corrections on top of the shared classification. */
function refine(error: ReinError, info: AnthropicErrorInfo | undefined, where: string, ctx: ErrorContext): ReinError {
  if (info === undefined) return error;
  const options = { status: error.status, details: error.details };
  const said = `: ${clause(info.message)}`;
  if (error.code === 'bad_request' && CONTEXT_LIMIT.test(info.message)) {
    return new ReinError(
      'context_length',
      'fatal',
      `The request does not fit the context window of ${ctx.model} (${where})${said}. Shorten the conversation (compact the history, trim long tool results) or lower max tokens`,
      options,
    );
  }
  if (info.type === 'billing_error' || NO_CREDIT.test(info.message)) {
    return new ReinError(
      'rate_limited',
      'fatal',
      `${ctx.provider} (${ctx.url}) refused the request for billing reasons (${where})${said}. Add credit or check the plan of the key; retrying will not help`,
      options,
    );
  }
  if (error.code === 'not_found') {
    return new ReinError(
      'not_found',
      'fatal',
      `${ctx.url} was not found (${where})${said}. Check the base URL: rein posts to <base>/v1/messages, so give the host (e.g. https://api.anthropic.com) or a proxy's Anthropic root`,
      options,
    );
  }
  return error;
}

function readError(body: unknown): AnthropicErrorInfo | undefined {
  if (!isRecord(body)) return undefined;
  const error = isRecord(body.error) ? body.error : body;
  if (typeof error.message !== 'string') return undefined;
  return typeof error.type === 'string' ? { type: error.type, message: error.message } : { message: error.message };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
