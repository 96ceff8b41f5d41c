/**
 * The handle of a running run: an async iterable of its events and a promise of its
 * result, with controls to steer, queue follow-ups and abort.
 */
import type { RunEvent, RunResult } from '../events.js';
import type { UserMessage } from '../model/types.js';
import { toUser } from './validate.js';

/** Queues shared between a handle and its loop. */
export interface RunControls {
  readonly steering: UserMessage[];
  readonly followUps: UserMessage[];
  readonly abortController: AbortController;
}

type Listener = (event: RunEvent) => void;

/**
 * Returned by `Agent.run`. Iterate it for events, await it for the {@link RunResult}.
 *
 * Events are buffered from the start for iterators, so `for await (const e of agent.run(x))`
 * sees every event. Once the result is taken (`await run`, `run.result`) and no iterator
 * is reading — each one releases its hold when it ends or is left with `break` — the
 * buffer goes (nobody can read it any more), but not while the code that took the result
 * still runs: the decision waits for the run's next event or its end (for a run that had
 * already ended, a microtask). So an iterator attached in the same synchronous code as the
 * await, in either order — `Promise.all([run.result, iterate(run)])` — still sees every
 * event from the start, and a run that is only awaited keeps no event list while it runs
 * (the awaited runs of the 100-concurrent benchmark rely on it: from the first event after
 * the await on, nothing is kept and no delta is built). Iterating once the awaited result has
 * arrived throws (unless an iterator attached earlier is still reading): by then the run
 * has ended, and its end made the decision.
 *
 * Listeners ({@link subscribe}) run synchronously as each event is emitted, before the loop
 * acts on it; an iterator reads the buffer later, after the loop moved on. So a follow-up
 * or steer in reaction to an event (say, the final `assistant_message`) must be queued from
 * a listener (or from the `shouldStopAfterTurn` hook) to be in time; queued from an
 * iterator it may come after the run decided to end, and is then in {@link unsent}.
 *
 * @example
 * const run = agent.run('roll two dice and add them');
 * for await (const event of run) if (event.type === 'text_delta') process.stdout.write(event.delta);
 * const result = await run;
 */
export class RunHandle<O = unknown> implements AsyncIterable<RunEvent>, PromiseLike<RunResult<O>> {
  readonly runId: string;
  private readonly controls: RunControls;
  private readonly resultPromise: Promise<RunResult<O>>;
  private buffer: RunEvent[] | undefined = [];
  // Made on first use: most runs have no listener and no waiting iterator.
  private listeners: Set<Listener> | undefined;
  private listenerFailed = false;
  private finished = false;
  private wakeups: Set<() => void> | undefined;
  /** Iterators that may still read the buffer. */
  private iterators = 0;
  private resultTaken = false;
  /** A decision on the buffer is queued (its result was taken after the run's end). */
  private dropQueued = false;

  constructor(runId: string, controls: RunControls, result: Promise<RunResult<O>>) {
    this.runId = runId;
    this.controls = controls;
    this.resultPromise = result;
  }

  /** Called by the loop for every event. */
  deliver(event: RunEvent): void {
    // A run that is only awaited has no buffer, listener or iterator: nothing to do.
    if (this.buffer !== undefined && !this.dropIfUnread()) this.buffer.push(event);
    if (this.listeners !== undefined && this.listeners.size > 0) for (const listener of this.listeners) this.tell(listener, event);
    if (this.wakeups !== undefined && this.wakeups.size > 0) for (const wake of this.wakeups) wake();
  }

  /**
   * Whether an event delivered now would reach anyone: a listener, or the buffer kept for
   * iterators. A run that is only awaited has neither, and the loop then skips building its
   * streamed deltas (they are never stored). The loop asks as it emits each event, so this
   * is also where a buffer nobody can read any more goes (see {@link takeResult}).
   */
  get observed(): boolean {
    if (this.buffer !== undefined) this.dropIfUnread();
    return this.buffer !== undefined || (this.listeners !== undefined && this.listeners.size > 0);
  }

  /** Called by the loop after the terminal event. */
  finish(): void {
    this.finished = true;
    // No event follows to make the decision a taken result waits for: it is made now.
    this.dropIfUnread();
    if (this.wakeups !== undefined) for (const wake of this.wakeups) wake();
  }

  /**
   * One listener, one event. A listener that throws must not break the run (a run never
   * throws): the error is reported once per run as a process warning, and the listener
   * keeps getting the events after it.
   */
  private tell(listener: Listener, event: RunEvent): void {
    try {
      listener(event);
    } catch (error) {
      if (this.listenerFailed) return;
      this.listenerFailed = true;
      process.emitWarning(
        `a listener of run ${this.runId} threw on its ${event.type} event (later errors of this run's listeners are not reported): ${error instanceof Error ? error.message : String(error)}`,
        'ReinListenerWarning',
      );
    }
  }

  /** Adds a live listener (no replay of earlier events). Returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    const listeners = (this.listeners ??= new Set());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /**
   * Queues a steering message: it enters before the next model call — the first one when
   * sent before the run began, else after the current tool batch (its results are kept).
   * Throws a `config` {@link ReinError} for anything but a string or a user message.
   */
  steer(message: string | UserMessage): void {
    this.controls.steering.push(toUser(message, 'steer'));
  }

  /**
   * Queues a follow-up: it runs when the agent would otherwise stop with a final answer.
   * Throws a `config` {@link ReinError} for anything but a string or a user message.
   */
  followUp(message: string | UserMessage): void {
    this.controls.followUps.push(toUser(message, 'followUp'));
  }

  /**
   * Steering and follow-up messages that never entered the run: the run ended first (a
   * stop rule, `terminate`, a budget, an abort, or they were sent after it decided to end —
   * as a follow-up queued by a `for await` loop on the final answer is). A queued
   * message enters only when the run goes on, so it is never left unanswered in the
   * history; it is kept here instead, to send again (e.g. as the next run's input). Read
   * it once the run has ended: until then a queued message may still enter.
   */
  get unsent(): { steering: readonly UserMessage[]; followUps: readonly UserMessage[] } {
    return { steering: [...this.controls.steering], followUps: [...this.controls.followUps] };
  }

  /** Aborts the run; the result still arrives, with reason `aborted` and a valid history. */
  abort(reason?: string): void {
    this.controls.abortController.abort(reason ?? 'aborted');
  }

  /** The run's result; never rejects. */
  get result(): Promise<RunResult<O>> {
    this.takeResult();
    return this.resultPromise;
  }

  then<A = RunResult<O>, B = never>(
    onFulfilled?: ((value: RunResult<O>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    this.takeResult();
    return this.resultPromise.then(onFulfilled, onRejected);
  }

  /**
   * The result is taken: the buffer stays only while an iterator reads it. Not decided
   * now: an iterator attached in the same synchronous code (`Promise.all([run.result,
   * iterate(run)])`, or an await written before the loop) must still find every event. The next event
   * decides (see {@link observed}, {@link deliver}), or the run's end; a run that has
   * already ended emits no more, so a microtask decides for it — before the awaited result
   * arrives, so `await run` then iterating is refused whether or not the run had ended.
   */
  private takeResult(): void {
    this.resultTaken = true;
    if (!this.finished || this.dropQueued || this.buffer === undefined) return;
    this.dropQueued = true;
    queueMicrotask(() => {
      this.dropQueued = false;
      this.dropIfUnread();
    });
  }

  /** Drops the buffer when the result was taken and no iterator reads it; true when it went. */
  private dropIfUnread(): boolean {
    if (!this.resultTaken || this.iterators > 0) return false;
    this.buffer = undefined;
    return true;
  }

  /** An iterator ended or was left: the last one out after the result was taken drops the buffer. */
  private release(): void {
    this.iterators--;
    this.dropIfUnread();
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    let buffer = this.buffer;
    if (!buffer) {
      throw new Error(
        'RunHandle: this run no longer keeps its events: its result was taken (await run, run.result) and no iterator was reading them. ' +
          'Start iterating before awaiting it, or beside the await in the same synchronous code (Promise.all([run.result, iterate(run)])), or use run.subscribe(listener) for live events',
      );
    }
    this.iterators++;
    let position = 0;
    const close = (): IteratorResult<RunEvent> => {
      if (buffer !== undefined) {
        buffer = undefined;
        this.release();
      }
      return { value: undefined, done: true };
    };
    return {
      next: async (): Promise<IteratorResult<RunEvent>> => {
        for (;;) {
          if (buffer === undefined) return { value: undefined, done: true };
          if (position < buffer.length) return { value: buffer[position++] as RunEvent, done: false };
          if (this.finished) return close();
          await new Promise<void>((resolve) => {
            const wakeups = (this.wakeups ??= new Set());
            const wake = (): void => {
              wakeups.delete(wake);
              resolve();
            };
            wakeups.add(wake);
          });
        }
      },
      return: async (): Promise<IteratorResult<RunEvent>> => close(),
    };
  }
}
