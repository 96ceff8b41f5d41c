/**
 * The runs row as every store keeps it (the SQL column names), its mapping to a
 * {@link RunRecord}, and the errors a refused write reports, shared so the three stores
 * answer alike.
 */
import { ReinError } from '../errors.js';
import type { RunTotals, StopReasonCode } from '../events.js';
import type { NewRun, RunRecord } from './types.js';

/** A `runs` row. Numbers may arrive as strings from Postgres `bigint` columns. */
export interface RunRow {
  id: string;
  status: string;
  reason: string | null;
  model: string;
  /** JSON text. */
  config: string;
  config_hash: string;
  parent_run_id: string | null;
  created_at: number | string;
  updated_at: number | string;
  /** JSON text. */
  totals: string | null;
  lease_epoch: number | string;
  event_count: number | string;
}

/** The row a new run starts as. */
export function newRunRow(run: NewRun, now: number): RunRow {
  if (typeof run.id !== 'string' || run.id === '') throw new ReinError('store', 'fatal', 'a run needs a non-empty string id');
  const createdAt = run.createdAt ?? now;
  return {
    id: run.id,
    status: 'running',
    reason: null,
    model: run.model,
    config: JSON.stringify(run.config ?? null),
    config_hash: run.configHash,
    parent_run_id: run.parentRunId ?? null,
    created_at: createdAt,
    updated_at: createdAt,
    totals: null,
    lease_epoch: 0,
    event_count: 0,
  };
}

/** The record of a row; optional fields are absent (not `undefined`) when unset. */
export function toRecord(row: RunRow): RunRecord {
  const record: RunRecord = {
    id: row.id,
    status: row.status as RunRecord['status'],
    model: row.model,
    config: JSON.parse(row.config) as unknown,
    configHash: row.config_hash,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    leaseEpoch: Number(row.lease_epoch),
    eventCount: Number(row.event_count),
  };
  if (row.reason !== null) record.reason = row.reason as StopReasonCode;
  if (row.parent_run_id !== null) record.parentRunId = row.parent_run_id;
  if (row.totals !== null) record.totals = JSON.parse(row.totals) as RunTotals;
  return record;
}

/** `not_found` for a run the store does not have. */
export function notFound(runId: string): ReinError {
  return new ReinError('not_found', 'fatal', `there is no run ${runId} in the store`, { details: { runId } });
}

/** `conflict` for a run id that is taken. */
export function duplicateRun(runId: string, cause?: unknown): ReinError {
  return new ReinError('conflict', 'fatal', `a run ${runId} already exists`, { cause, details: { runId } });
}

/** `conflict` when the unique (run_id, seq) key refused a row: another writer stored that seq. */
export function seqTaken(runId: string, firstSeq: number, cause?: unknown): ReinError {
  return new ReinError(
    'conflict',
    'fatal',
    `run ${runId}: seq ${firstSeq} or a later one of the batch is already stored; nothing was written`,
    {
      cause,
      details: { runId, got: firstSeq },
    },
  );
}

/**
 * Why a conditional write (lease epoch and, for appends, the next seq) matched no row,
 * from the run's current state. Epochs only grow, so a stale epoch seen here was already
 * stale when the write was refused.
 */
export function explainRefusal(
  runId: string,
  epoch: number,
  current: { lease_epoch: number | string; event_count: number | string } | undefined,
  firstSeq?: number,
): ReinError {
  if (!current) return notFound(runId);
  const currentEpoch = Number(current.lease_epoch);
  if (currentEpoch !== epoch) {
    return new ReinError(
      'lease_lost',
      'fatal',
      `run ${runId}: lease ${epoch} was superseded by lease ${currentEpoch} (another process took the run); nothing was written`,
      { details: { runId, epoch, currentEpoch } },
    );
  }
  const expected = Number(current.event_count);
  return new ReinError('conflict', 'fatal', `run ${runId}: the next seq is ${expected}, not ${String(firstSeq)}; nothing was written`, {
    details: { runId, expected, got: firstSeq },
  });
}

/** Checks a `listRuns` limit: a non-negative integer, or undefined for all. */
export function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new ReinError('store', 'fatal', `listRuns: limit must be a non-negative integer, got ${limit}`);
  }
}
