/**
 * The errors of the HTTP API: a status, a stable `code` for programs and a message for
 * people (`{"error":{"code","message","field"}}`). Made only at the edge: the rooms below
 * throw ReinErrors, which {@link apiErrorOf} maps.
 */
import { ReinError } from '../errors.js';

/** The codes the API answers with, by HTTP status. */
export type ApiErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unavailable'
  | 'internal';

/** An error answered as `status` with `{"error":{"code","message","field"?}}`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 500 | 503,
    readonly code: ApiErrorCode,
    message: string,
    /** The request field at fault (400). */
    readonly field?: string,
  ) {
    super(message);
  }

  /** The body of the response. */
  toBody(): { error: { code: ApiErrorCode; message: string; field?: string } } {
    return { error: { code: this.code, message: this.message, ...(this.field === undefined ? {} : { field: this.field }) } };
  }
}

/** Any error as the API answers it: ReinErrors by their code, anything else as a 500 that hides its detail. */
export function apiErrorOf(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ReinError) {
    if (error.code === 'not_found') return new ApiError(404, 'not_found', error.message);
    if (error.code === 'conflict' || error.code === 'lease_lost') return new ApiError(409, 'conflict', error.message);
  }
  return new ApiError(500, 'internal', `the server failed to answer: ${error instanceof Error ? error.message : String(error)}`);
}
