/**
 * Group commit: the appends that arrive while the event loop works through one round of
 * I/O (concurrent runs each finishing a tool or a model answer) are written in one
 * transaction, one commit and, when one of them asks for it, one full sync, instead of one
 * each. Each append still succeeds or fails alone (a savepoint each, in the store), and
 * resolves only once the commit holding it is done: the durability rules are unchanged.
 */

/** One append waiting for its group's commit. */
export interface QueuedAppend<R> {
  runId: string;
  epoch: number;
  rows: R;
  full: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The queue of one store connection. */
export class GroupCommit<R> {
  private queue: Array<QueuedAppend<R>> = [];
  private scheduled = false;

  /** `commit` writes a group and settles each of its appends; it must not throw. */
  constructor(private readonly commit: (group: Array<QueuedAppend<R>>) => void) {}

  /** Queues an append; resolves once it is committed. */
  add(runId: string, epoch: number, rows: R, full: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ runId, epoch, rows, full, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the current round of I/O callbacks: the appends they made join one group.
        setImmediate(this.drain);
      }
    });
  }

  /** Commits what is queued now (before any other statement of the connection, so every call sees earlier appends). */
  readonly drain = (): void => {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    const group = this.queue;
    this.queue = [];
    this.commit(group);
  };
}
