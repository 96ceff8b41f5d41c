/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): reading a `traceparent` a
 * caller hands a run, writing the one rein sends on, and the span ids rein makes itself
 * when no OpenTelemetry SDK makes them. Needed without any OpenTelemetry package: a run's
 * trace id and its log lines' span ids exist either way.
 */
import { createHash } from 'node:crypto';
import { ReinError } from '../errors.js';

/** A parent span as a `traceparent` names it. */
export interface ParentContext {
  traceId: string;
  spanId: string;
  /** The `sampled` flag of the caller. */
  sampled: boolean;
  /** The `tracestate` header that came with it, kept as is. */
  traceState?: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * Reads a `traceparent` header (`00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`),
 * as the W3C recommendation does: lowercase hex, version `ff` invalid, no all-zero ids,
 * version `00` with nothing after the flags (a later version may add fields). Throws a
 * `config` ReinError saying what is wrong, naming `source` (the option or variable).
 */
export function parseTraceparent(value: string, source = 'traceparent', traceState?: string): ParentContext {
  const text = value.trim();
  const match = TRACEPARENT.exec(text);
  const shape =
    '00-<32 lowercase hex trace id>-<16 lowercase hex parent span id>-<2 hex flags>, e.g. 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  if (!match)
    throw new ReinError(
      'config',
      'fatal',
      `${source} is not a W3C traceparent: expected ${shape}, got ${JSON.stringify(text.slice(0, 80))}`,
    );
  const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === 'ff') throw new ReinError('config', 'fatal', `${source}: version ff is invalid in a traceparent (expected ${shape})`);
  if (version === '00' && rest !== undefined)
    throw new ReinError('config', 'fatal', `${source}: a version 00 traceparent ends after its flags (expected ${shape})`);
  if (traceId === ZERO_TRACE)
    throw new ReinError('config', 'fatal', `${source}: the trace id is all zeros, which W3C Trace Context forbids`);
  if (spanId === ZERO_SPAN)
    throw new ReinError('config', 'fatal', `${source}: the parent span id is all zeros, which W3C Trace Context forbids`);
  const parent: ParentContext = { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
  if (traceState !== undefined && traceState.trim() !== '') parent.traceState = traceState.trim();
  return parent;
}

/** The `traceparent` of a span (version 00). */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/**
 * The span id rein gives a span of run `runId` that began at event `seq` when no SDK made
 * one: the same from the live run, from its log and from `rein trace`, so log lines, a
 * later export of the stored run and the resume links agree. 16 hex, never all zero.
 */
export function derivedSpanId(traceId: string, runId: string, seq: number, kind: string): string {
  const id = createHash('sha256').update(`${traceId}/${runId}/${seq}/${kind}`).digest('hex').slice(0, 16);
  return id === ZERO_SPAN ? '0000000000000001' : id;
}
