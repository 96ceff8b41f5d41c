/** Small readers for untyped JSON from providers, shared by every adapter. */
import { ReinError } from '../errors.js';

/** A JSON object. */
export type Json = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A token count from a usage object: a finite number, else 0. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** The error for a stream event whose data is not JSON (transient: the next attempt may be fine). */
export function notJsonEventError(url: string, data: string): ReinError {
  return new ReinError('invalid_response', 'transient', `${url} sent a stream event that is not JSON: ${data.slice(0, 200)}`);
}
