/** Identifiers for runs, traces and generated tool call ids. */
import { randomUUID } from 'node:crypto';

// randomUUID draws from a cached entropy pool; randomBytes goes to the system per call.
const hex = (): string => randomUUID().replace(/-/g, '');

/** A run id that sorts by creation time: `run_` + 12 hex of ms time + 8 random hex. */
export function newRunId(now = Date.now()): string {
  return `run_${now.toString(16).padStart(12, '0')}${hex().slice(0, 8)}`;
}

/** A W3C trace-context trace id (32 lowercase hex; a UUID v4 is never all zero). */
export function newTraceId(): string {
  return hex();
}
