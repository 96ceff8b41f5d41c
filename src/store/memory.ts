/**
 * The reference store: everything in memory, laid out like the SQL stores (a runs row,
 * JSON text per event, large events in a payloads map), so it behaves exactly like them
 * under the shared conformance suite. For tests and for embedding where nothing needs to
 * survive the process.
 */
import type { RunEvent, RunTotals, StopReasonCode } from '../events.js';
import { blobThreshold, decodeEvents, encodeBatch } from './encode.js';
import { checkLimit, duplicateRun, explainRefusal, newRunRow, notFound, toRecord, type RunRow } from './rows.js';
import type { Durability, NewRun, RunFilter, RunRecord, RunStore } from './types.js';
import { ReinError } from '../errors.js';

/** Options of a {@link MemoryRunStore}. */
export interface MemoryRunStoreOptions {
  /** Events whose JSON is longer than this many characters are kept out of the event rows (default 64 Ki). */
  blobThreshold?: number;
}

interface EventRow {
  type: string;
  at: number;
  data: string | null;
}

/**
 * A {@link RunStore} in memory. Every method copies (through JSON) what it keeps and what it
 * returns, so callers can never change the log by mutating an object.
 *
 * @example
 * const store = new MemoryRunStore();
 * const agent = new Agent({ model, store });
 */
export class MemoryRunStore implements RunStore {
  private readonly runs = new Map<string, RunRow>();
  private readonly events = new Map<string, EventRow[]>();
  private readonly payloads = new Map<string, string>();
  private readonly threshold: number;
  private closed = false;

  constructor(options: MemoryRunStoreOptions = {}) {
    this.threshold = blobThreshold(options.blobThreshold);
  }

  async createRun(run: NewRun): Promise<RunRecord> {
    this.check();
    const row = newRunRow(run, Date.now());
    if (this.runs.has(row.id)) throw duplicateRun(row.id);
    this.runs.set(row.id, row);
    this.events.set(row.id, []);
    return toRecord(row);
  }

  async acquireLease(runId: string): Promise<number> {
    const row = this.row(runId);
    row.lease_epoch = Number(row.lease_epoch) + 1;
    row.updated_at = Date.now();
    return row.lease_epoch;
  }

  async append(runId: string, epoch: number, events: readonly RunEvent[], _options?: { durability?: Durability }): Promise<void> {
    this.check();
    const encoded = encodeBatch(runId, events, this.threshold);
    const row = this.runs.get(runId);
    const first = encoded[0]?.seq ?? Number(row?.event_count ?? 0);
    if (!row || Number(row.lease_epoch) !== epoch || Number(row.event_count) !== first) throw explainRefusal(runId, epoch, row, first);
    const log = this.events.get(runId)!;
    for (const e of encoded) {
      log.push({ type: e.type, at: e.at, data: e.data });
      if (e.payload !== null) this.payloads.set(`${runId}\u0000${e.seq}`, e.payload);
    }
    row.event_count = log.length;
    row.updated_at = Date.now();
  }

  async loadEvents(runId: string, fromSeq = 0): Promise<RunEvent[]> {
    this.row(runId);
    const log = this.events.get(runId)!;
    const texts: string[] = [];
    for (let seq = Math.max(0, fromSeq); seq < log.length; seq++) texts.push(log[seq]!.data ?? this.payloads.get(`${runId}\u0000${seq}`)!);
    return decodeEvents(texts, runId, fromSeq);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    this.check();
    const row = this.runs.get(runId);
    return row ? toRecord(row) : undefined;
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    this.check();
    checkLimit(filter.limit);
    const rows = [...this.runs.values()].filter(
      (row) =>
        (filter.status === undefined || row.status === filter.status) &&
        (filter.before === undefined || Number(row.created_at) < filter.before) &&
        (filter.parentRunId === undefined || row.parent_run_id === filter.parentRunId),
    );
    // The SQL stores' order: newest first, ties broken by id, descending.
    rows.sort((a, b) => Number(b.created_at) - Number(a.created_at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return rows.slice(0, filter.limit ?? rows.length).map(toRecord);
  }

  async updateRun(
    runId: string,
    epoch: number,
    patch: { status: RunRecord['status']; reason?: StopReasonCode; totals?: RunTotals },
  ): Promise<void> {
    this.check();
    const row = this.runs.get(runId);
    if (!row || Number(row.lease_epoch) !== epoch) throw explainRefusal(runId, epoch, row);
    row.status = patch.status;
    row.reason = patch.reason ?? null;
    if (patch.totals !== undefined) row.totals = JSON.stringify(patch.totals);
    row.updated_at = Date.now();
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /**
   * Characters of JSON the events row of `(runId, seq)` holds: 0 when the event is kept in
   * the payloads map, undefined when there is no such event. For tests and diagnostics.
   */
  inlineSize(runId: string, seq: number): number | undefined {
    const event = this.events.get(runId)?.[seq];
    return event ? (event.data?.length ?? 0) : undefined;
  }

  private row(runId: string): RunRow {
    this.check();
    const row = this.runs.get(runId);
    if (!row) throw notFound(runId);
    return row;
  }

  private check(): void {
    if (this.closed) throw new ReinError('store', 'fatal', 'the store is closed');
  }
}
