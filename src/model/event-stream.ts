/**
 * One small push-to-pull event stream used by every stream in rein (model responses, runs).
 * A producer calls `push` and finally `end(result)`; any number of consumers may iterate,
 * but each event is delivered once, to the iterator that is waiting (single consumer is
 * the normal case). `result()` resolves when the stream ends.
 */
export class EventStream<T, R> implements AsyncIterable<T> {
  private readonly queue: T[] = [];
  private head = 0;
  private waiting: ((value: IteratorResult<T>) => void) | undefined;
  private listener: ((event: T) => void) | undefined;
  private ended = false;
  private readonly resultPromise: Promise<R>;
  private resolveResult!: (value: R) => void;

  constructor() {
    this.resultPromise = new Promise<R>((resolve) => {
      this.resolveResult = resolve;
    });
  }

  /** Delivers an event. Ignored after `end`. */
  push(event: T): void {
    if (this.ended) return;
    if (this.listener) {
      this.listener(event);
      return;
    }
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting({ value: event, done: false });
      return;
    }
    this.queue.push(event);
  }

  /** Ends the stream with its result. Later calls are ignored. */
  end(result: R): void {
    if (this.ended) return;
    this.ended = true;
    this.resolveResult(result);
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting({ value: undefined, done: true });
    }
  }

  /**
   * Consumes the stream with a synchronous callback instead of iterating: events already
   * queued are delivered at once, later ones as they are pushed. Cheaper than `for await`
   * (no promise per event) for consumers that do not need to wait between events. Use one
   * way of consuming per stream. Resolves with the result.
   */
  listen(listener: (event: T) => void): Promise<R> {
    for (let i = this.head; i < this.queue.length; i++) listener(this.queue[i] as T);
    this.queue.length = 0;
    this.head = 0;
    this.listener = listener;
    return this.resultPromise;
  }

  /** True once `end` was called. */
  get isEnded(): boolean {
    return this.ended;
  }

  /** The result the producer ended the stream with. */
  result(): Promise<R> {
    return this.resultPromise;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: (): Promise<IteratorResult<T>> => {
        if (this.head < this.queue.length) {
          const value = this.queue[this.head] as T;
          this.queue[this.head] = undefined as T;
          this.head++;
          // Compact now and then so a long stream does not keep a long array alive.
          if (this.head > 1024 && this.head * 2 > this.queue.length) {
            this.queue.splice(0, this.head);
            this.head = 0;
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
      return: (): Promise<IteratorResult<T>> => Promise.resolve({ value: undefined, done: true }),
    };
  }
}
