/** Identifiers for runs, traces and generated tool call ids. */
import { randomBytes } from 'node:crypto';

/** A run id that sorts by creation time: `run_` + 12 hex of ms time + 8 random hex. */
export function newRunId(now = Date.now()): string {
  return `run_${now.toString(16).padStart(12, '0')}${randomBytes(4).toString('hex')}`;
}

/** A W3C trace-context trace id (32 lowercase hex, never all zero). */
export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}
