/**
 * The run store: the durable, append-only log of every run (DESIGN.md: a run is an event
 * log). One interface, several implementations (memory, SQLite, Postgres) held to one
 * conformance suite. The store keeps events; it never interprets them.
 */
import type { RunEvent, RunStatus, RunTotals, StopReasonCode } from '../events.js';

/** A run's row. `status` is `running` until its `run_finished` is stored. */
export interface RunRecord {
  id: string;
  status: RunStatus | 'running';
  reason?: StopReasonCode;
  /** `provider/model`. */
  model: string;
  /** The agent configuration the run started with (tools, system prompt, model, limits): JSON. */
  config: unknown;
  /** A stable hash of `config`, to refuse resuming a run whose agent changed. */
  configHash: string;
  parentRunId?: string;
  /** Epoch ms. */
  createdAt: number;
  updatedAt: number;
  totals?: RunTotals;
  /** The number of the current lease; only its holder may append. */
  leaseEpoch: number;
  /** Events stored (the next seq to append). */
  eventCount: number;
}

/** What a new run starts with. */
export interface NewRun {
  id: string;
  model: string;
  config: unknown;
  configHash: string;
  parentRunId?: string;
  createdAt?: number;
}

/** How hard an append must reach the disk before it returns. */
export type Durability = 'normal' | 'full';

/** Filters of {@link RunStore.listRuns}, newest first. */
export interface RunFilter {
  status?: RunRecord['status'];
  /** At most this many (default: all). */
  limit?: number;
  /** Only runs created before this epoch ms (for paging). */
  before?: number;
  /** Only the runs this run started (its sub-agents), through an index: a tree is read without the whole list. */
  parentRunId?: string;
}

/**
 * The durable log. Every method may be called concurrently from many runs; appends to one
 * run are serialized by its lease.
 */
export interface RunStore {
  /**
   * Creates the run row (status `running`, lease epoch 0, no events). Rejects a duplicate id
   * with `conflict`. Epoch 0 is a lease like any other: the creator may write with it until
   * someone calls {@link RunStore.acquireLease}.
   */
  createRun(run: NewRun): Promise<RunRecord>;
  /**
   * Takes the run's lease for this process: bumps and returns the epoch. Appends made with
   * an older epoch are refused from then on (a zombie process can never write again).
   * `not_found` for an unknown run.
   */
  acquireLease(runId: string): Promise<number>;
  /**
   * Appends events in one transaction. `events[0].seq` must equal the run's event count
   * (no gap, no overlap); `epoch` must be the current lease. Throws a ReinError with code
   * `lease_lost` or `conflict` otherwise, writing nothing. `durability: 'full'` makes the
   * write reach the disk before returning (used before a tool with side effects).
   *
   * Delta events (`DELTA_EVENT_TYPES`) are never stored: a batch holding one, or an event
   * of another run, is refused with code `store`, writing nothing. An empty batch writes
   * nothing and only checks the lease. Events whose JSON exceeds the store's blob threshold
   * (64 Ki characters by default) are kept out of the events row and loaded back whole.
   */
  append(runId: string, epoch: number, events: readonly RunEvent[], options?: { durability?: Durability }): Promise<void>;
  /** The run's events in seq order, from `fromSeq` (default 0), large payloads included. `not_found` for an unknown run. */
  loadEvents(runId: string, fromSeq?: number): Promise<RunEvent[]>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  listRuns(filter?: RunFilter): Promise<RunRecord[]>;
  /**
   * Updates status, reason and totals (with the current lease; `lease_lost` otherwise).
   * The reason goes with the status (omitted: cleared); omitted totals keep the stored ones.
   */
  updateRun(
    runId: string,
    epoch: number,
    patch: { status: RunRecord['status']; reason?: StopReasonCode; totals?: RunTotals },
  ): Promise<void>;
  /**
   * Present on stores every worker of a fleet reaches (Postgres): hands runs to `rein
   * worker` processes. Absent on the others (SQLite, memory), which cannot queue runs.
   */
  readonly queue?: RunQueue;
  close(): Promise<void>;
}

/**
 * The store side of the run queue (docs/workers.md): each method writes the run's log and
 * its job in ONE transaction, so a run is never logged without a job to drive it, nor
 * queued without its log.
 */
export interface RunQueue {
  /**
   * Creates the run (status `running`), appends `events` (its `run_started`, seq 0…) under
   * lease epoch 0 and enqueues a job for it. Rejects a duplicate id with `conflict`.
   */
  submit(run: NewRun, events: readonly RunEvent[]): Promise<RunRecord>;
  /**
   * Appends `events` with lease `epoch` (as {@link RunStore.append}), marks the run
   * `running` and enqueues a job for it: what approving a paused run of the queue does.
   */
  requeue(runId: string, epoch: number, events: readonly RunEvent[]): Promise<void>;
}
