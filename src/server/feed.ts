/**
 * Who hears of a run's events. The stored events a stream sends are the ones the store
 * has made durable (heard here as the server's store appends them): an `id:` a client saw
 * is in the log, so after a crash its `Last-Event-ID` resumes with no gap and no
 * duplicate, and a live client sees what a replay shows (redacted, in seq order). Deltas
 * (never stored) come from the run's handle, only while someone listens.
 */
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import type { RunStore } from '../store/types.js';

/** A listener of one run: stored events as they become durable, deltas as they stream, and the run's drives ending. */
export interface FeedListener {
  stored(events: readonly RunEvent[]): void;
  delta(event: RunEvent): void;
  /** The run is no longer driven by this server (its handle settled, or the server stops). */
  idle(): void;
  /** A sub-agent run of this run started (its `run_started` became durable here). */
  child?(child: ChildRunNotice): void;
}

/** A child run that began, as a stream of its parent tells it (`event: child_run`): enough to follow it. */
export interface ChildRunNotice {
  runId: string;
  parentRunId: string;
  parentToolCallId: string | null;
  agent: string | null;
  depth: number;
}

/** The listeners of every run, and the runs this server drives. */
export class RunFeeds {
  private readonly listeners = new Map<string, Set<FeedListener>>();
  private readonly deltaSources = new Map<string, { attach(): void; detach(): void }>();
  private readonly driven = new Set<string>();

  /** Adds a listener of `runId`; returns what removes it. */
  listen(runId: string, listener: FeedListener): () => void {
    let set = this.listeners.get(runId);
    if (!set) this.listeners.set(runId, (set = new Set()));
    set.add(listener);
    if (set.size === 1) this.deltaSources.get(runId)?.attach();
    return () => {
      const current = this.listeners.get(runId);
      if (!current?.delete(listener)) return;
      if (current.size > 0) return;
      this.listeners.delete(runId);
      this.deltaSources.get(runId)?.detach();
    };
  }

  /** Stored events of `runId` that just became durable. */
  appended(runId: string, events: readonly RunEvent[]): void {
    const set = this.listeners.get(runId);
    if (set) for (const listener of [...set]) listener.stored(events);
    // A sub-agent's first event: whoever follows its parent hears of it, to follow it too.
    const first = events[0];
    if (first?.type === 'run_started' && first.parentRunId !== undefined) {
      const parents = this.listeners.get(first.parentRunId);
      if (parents) {
        const notice: ChildRunNotice = {
          runId,
          parentRunId: first.parentRunId,
          parentToolCallId: first.parentToolCallId ?? null,
          agent: first.agent ?? null,
          depth: first.depth ?? 1,
        };
        for (const listener of [...parents]) listener.child?.(notice);
      }
    }
  }

  /** A delta of `runId` as the run streams it. */
  delta(runId: string, event: RunEvent): void {
    const set = this.listeners.get(runId);
    if (set) for (const listener of [...set]) listener.delta(event);
  }

  /**
   * Marks `runId` as driven here, with where its deltas come from: `subscribe` is called
   * while the run has listeners (a run nobody watches builds no deltas). Returns what marks
   * the drive's end.
   */
  drive(runId: string, subscribe: (onDelta: (event: RunEvent) => void) => () => void): () => void {
    this.driven.add(runId);
    let unsubscribe: (() => void) | undefined;
    const source = {
      attach: () => {
        unsubscribe ??= subscribe((event) => this.delta(runId, event));
      },
      detach: () => {
        unsubscribe?.();
        unsubscribe = undefined;
      },
    };
    this.deltaSources.set(runId, source);
    if (this.listeners.has(runId)) source.attach();
    return () => {
      if (this.deltaSources.get(runId) !== source) return;
      source.detach();
      this.deltaSources.delete(runId);
      this.driven.delete(runId);
      const set = this.listeners.get(runId);
      if (set) for (const listener of [...set]) listener.idle();
    };
  }

  /** Whether this server drives `runId` now. */
  isDriven(runId: string): boolean {
    return this.driven.has(runId);
  }
}

/**
 * The store the server's agents write to: appends and record updates pass through to
 * `inner`, and each durable append is told to `feeds`. Once {@link GatedStore.close} is
 * called (the server stops), every write is refused: a run stopped then keeps its log as
 * it was, `running`, and the next start continues it as after a crash.
 */
export interface GatedStore extends RunStore {
  /** Refuses every write from now on. */
  closeGate(): void;
}

/** Wraps `inner` (see {@link GatedStore}). Closing it does not close `inner`. */
export function gatedStore(inner: RunStore, feeds: RunFeeds): GatedStore {
  let open = true;
  const refuse = (): never => {
    throw new ReinError('store', 'fatal', 'the server is stopping: the run is left as it is, to be continued when the server starts again');
  };
  return {
    closeGate: () => {
      open = false;
    },
    createRun: (run) => (open ? inner.createRun(run) : Promise.reject(refuse())),
    acquireLease: (runId) => (open ? inner.acquireLease(runId) : Promise.reject(refuse())),
    append: async (runId, epoch, events, options) => {
      if (!open) refuse();
      await inner.append(runId, epoch, events, options);
      if (events.length > 0) feeds.appended(runId, events);
    },
    loadEvents: (runId, fromSeq) => inner.loadEvents(runId, fromSeq),
    getRun: (runId) => inner.getRun(runId),
    listRuns: (filter) => inner.listRuns(filter),
    updateRun: (runId, epoch, patch) => (open ? inner.updateRun(runId, epoch, patch) : Promise.reject(refuse())),
    // A Postgres store's queue (rein serve --no-execute submits runs to the workers).
    ...(inner.queue
      ? {
          queue: {
            submit: (run, events) => (open ? inner.queue!.submit(run, events) : Promise.reject(refuse())),
            requeue: (runId, epoch, events) => (open ? inner.queue!.requeue(runId, epoch, events) : Promise.reject(refuse())),
          },
        }
      : {}),
    // The server closes the inner store itself, after its runs have stopped.
    close: () => Promise.resolve(),
  };
}
