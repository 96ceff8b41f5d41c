/**
 * Typed errors. Every error rein raises or reports carries a stable `code` and a `kind`
 * that decides what happens next (STYLE 7: dispatch on `code`, never on message text):
 *
 * - `transient`: retried with backoff (network, 408/409/429/5xx, overloaded, a cut stream).
 * - `correctable`: fed back to the model (bad tool arguments, a failing tool).
 * - `fatal`: the run stops as `failed`, its history intact (auth, unknown model, context overflow).
 */
export type ErrorKind = 'transient' | 'correctable' | 'fatal';

/** Stable error codes. Strings, so they survive JSON and can be matched across versions. */
export type ErrorCode =
  | 'network'
  | 'stream_cut'
  | 'timeout'
  | 'rate_limited'
  | 'overloaded'
  | 'server_error'
  | 'bad_request'
  | 'auth'
  | 'permission_denied'
  | 'not_found'
  | 'model_not_found'
  | 'context_length'
  | 'content_filter'
  | 'invalid_response'
  | 'aborted'
  | 'config'
  | 'unknown_tool'
  | 'invalid_arguments'
  | 'tool_failed'
  | 'tool_timeout'
  | 'tool_denied'
  | 'unknown_outcome'
  | 'lease_lost'
  | 'conflict'
  | 'store'
  /** An MCP server is not connected (starting, crashed, reconnecting) or refused a request. */
  | 'mcp_unavailable'
  /** An MCP server answered a request with a protocol error. */
  | 'mcp_error'
  /** A workspace path is outside the root, or otherwise refused. */
  | 'path_refused'
  /** One model answer passed rein's size limit (`MAX_ANSWER_CHARS`); the stream was cut there. */
  | 'answer_too_long'
  /** Compaction could not bring the context under the model's window. */
  | 'context_overflow'
  | 'internal';

/** Options of a {@link ReinError} beyond code, kind and message. */
export interface ReinErrorOptions {
  cause?: unknown;
  /** For transient errors: how long the server asked us to wait, in milliseconds. */
  retryAfterMs?: number;
  /** The HTTP status that produced the error, when there was one. */
  status?: number;
  /** Provider-specific detail (the error body's `type`, `param`, …) for logs. */
  details?: Record<string, unknown>;
}

/** The JSON form of a {@link ReinError}, as stored in events. */
export interface ErrorInfo {
  name: string;
  code: ErrorCode;
  kind: ErrorKind;
  message: string;
  status?: number;
  retryAfterMs?: number;
  details?: Record<string, unknown>;
}

/**
 * The one error class of rein. Subclass only when a caller needs `instanceof`.
 *
 * @example
 * throw new ReinError('config', 'fatal', 'OPENAI_API_KEY is not set: export it or pass apiKey');
 */
export class ReinError extends Error {
  override readonly name: string = 'ReinError';
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, kind: ErrorKind, message: string, options: ReinErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.kind = kind;
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
    this.details = options.details;
  }

  /** A plain, JSON-serializable description of this error. */
  toJSON(): ErrorInfo {
    const info: ErrorInfo = { name: this.name, code: this.code, kind: this.kind, message: this.message };
    if (this.status !== undefined) info.status = this.status;
    if (this.retryAfterMs !== undefined) info.retryAfterMs = this.retryAfterMs;
    if (this.details !== undefined) info.details = this.details;
    return info;
  }
}

/** Wraps anything thrown into a {@link ReinError}, keeping a ReinError as it is. */
export function toReinError(error: unknown, fallback: ErrorCode = 'internal', kind: ErrorKind = 'fatal'): ReinError {
  if (error instanceof ReinError) return error;
  if (error instanceof Error && error.name === 'AbortError') {
    return new ReinError('aborted', 'fatal', 'aborted', { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ReinError(fallback, kind, message, { cause: error });
}

/** The typed error a failed model response carried (its code, kind, status and details). */
export function errorFromMessage(message: { error?: ErrorInfo }): ReinError {
  const info = message.error;
  if (!info) return new ReinError('internal', 'fatal', 'the model call failed without an error');
  return new ReinError(info.code, info.kind, info.message, {
    ...(info.status === undefined ? {} : { status: info.status }),
    ...(info.details === undefined ? {} : { details: info.details }),
  });
}
