/**
 * How every store turns a batch of events into rows, so the three implementations validate
 * and lay out events identically: each event is kept as its JSON text; one whose JSON is
 * longer than the threshold (a tool's large output, an image) goes to the `payloads`
 * table and its events row keeps only seq, type and time, so scanning a log stays cheap.
 * The store never looks inside an event beyond `runId`, `seq`, `type` and `at`.
 */
import { ReinError } from '../errors.js';
import { DELTA_EVENT_TYPES, type RunEvent } from '../events.js';

/** Events whose JSON is longer than this many characters are stored out of the events row. */
export const DEFAULT_BLOB_THRESHOLD = 64 * 1024;

/** One event as the stores write it. Exactly one of `data` and `payload` is set. */
export interface EncodedEvent {
  seq: number;
  type: string;
  at: number;
  /** The event's JSON, kept in the events row. */
  data: string | null;
  /** The event's JSON, kept in the payloads table (large events). */
  payload: string | null;
}

/**
 * Validates a batch and serializes it. Refuses (writing nothing, since nothing has been
 * written yet) a delta event, an event of another run, a seq that does not follow the
 * previous one, or an event that is not JSON.
 */
export function encodeBatch(runId: string, events: readonly RunEvent[], threshold: number): EncodedEvent[] {
  const first = events[0]?.seq ?? 0;
  if (!Number.isSafeInteger(first) || first < 0) throw invalid(runId, `seq ${String(first)} is not a non-negative integer`);
  const rows: EncodedEvent[] = [];
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    // Deltas are streamed, never stored (DESIGN.md); the loop does not send them, so one
    // arriving here is a bug upstream, refused loudly rather than dropped, since dropping it
    // would also leave a hole in the seq numbering.
    if (DELTA_EVENT_TYPES.has(event.type)) throw invalid(runId, `${event.type} events are streamed, never stored (seq ${event.seq})`);
    if (event.runId !== runId) throw invalid(runId, `event seq ${event.seq} belongs to run ${String(event.runId)}`);
    if (event.seq !== first + i) {
      throw new ReinError(
        'conflict',
        'fatal',
        `run ${runId}: the batch's seqs must be consecutive; expected ${first + i}, got ${event.seq}`,
        {
          details: { runId, expected: first + i, got: event.seq },
        },
      );
    }
    if (typeof event.at !== 'number' || !Number.isFinite(event.at)) throw invalid(runId, `event seq ${event.seq} has no time (at)`);
    let json: string;
    try {
      json = JSON.stringify(event);
    } catch (error) {
      throw new ReinError('store', 'fatal', `run ${runId}: event seq ${event.seq} is not JSON: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const large = json.length > threshold;
    rows.push({ seq: event.seq, type: event.type, at: event.at, data: large ? null : json, payload: large ? json : null });
  }
  return rows;
}

/**
 * Parses stored event JSON (the rows of `runId` from seq `fromSeq` on, in order) back into
 * events. A row that is not JSON (a damaged database, a hand edit) is a `store` error
 * naming the run and the seq, not a bare parser message.
 */
export function decodeEvents(texts: readonly string[], runId: string, fromSeq = 0): RunEvent[] {
  const events = new Array<RunEvent>(texts.length);
  for (let i = 0; i < texts.length; i++) {
    try {
      events[i] = JSON.parse(texts[i]!) as RunEvent;
    } catch (error) {
      const seq = Math.max(0, fromSeq) + i;
      throw new ReinError(
        'store',
        'fatal',
        `run ${runId}: the stored event at seq ${seq} is not JSON (${(error as Error).message}); the run log is damaged from there on`,
        { cause: error },
      );
    }
  }
  return events;
}

/** Checks a blob threshold option. */
export function blobThreshold(value: number | undefined): number {
  if (value === undefined) return DEFAULT_BLOB_THRESHOLD;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new ReinError('config', 'fatal', `blobThreshold must be a non-negative integer, got ${value}`);
  return value;
}

function invalid(runId: string, message: string): ReinError {
  return new ReinError('store', 'fatal', `run ${runId}: ${message}; nothing was written`, { details: { runId } });
}
