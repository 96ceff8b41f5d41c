/**
 * The durable side of a run: events are buffered as they happen and appended to the
 * store at the write points the loop names (DESIGN.md: appending is the checkpoint). One
 * append is in flight at a time, so the log is written in seq order.
 */
import type { RunEvent } from '../events.js';
import type { Durability, RunStore } from '../store/types.js';
import { crashPoint } from './crash-points.js';

/** A run's connection to its store, holding the lease `epoch`. */
export class RunLog {
  private pending: RunEvent[] = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: RunStore,
    readonly runId: string,
    readonly epoch: number,
  ) {}

  /** Buffers a stored event (the caller filters out deltas: the stores refuse them). */
  record(event: RunEvent): void {
    this.pending.push(event);
  }

  /**
   * Appends everything buffered in one transaction and resolves once it is durable.
   * Rejects (with the store's `lease_lost` / `conflict` / `store` error) when the append
   * failed: the run must stop, since what it does next would not be logged.
   */
  flush(durability: Durability = 'normal'): Promise<void> {
    if (this.pending.length === 0) return this.writing;
    const batch = this.pending;
    this.pending = [];
    this.writing = this.writing.then(async () => {
      crashPoint('before-append');
      await this.store.append(this.runId, this.epoch, batch, { durability });
      crashPoint('after-append');
    });
    return this.writing;
  }
}
