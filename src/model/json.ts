/** Small readers for untyped JSON from providers, shared by every adapter. */
import { ReinError } from '../errors.js';

import { isRecord, type Json } from '../util/json.js';

// The adapters read both from here, beside the readers below; other rooms import them from util/.
export { isRecord, type Json };

/** A token count from a usage object: a finite number, else 0. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** The error for a stream event whose data is not JSON (transient: the next attempt may be fine). */
export function notJsonEventError(url: string, data: string): ReinError {
  return new ReinError('invalid_response', 'transient', `${url} sent a stream event that is not JSON: ${data.slice(0, 200)}`);
}
