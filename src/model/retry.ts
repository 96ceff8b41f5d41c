/**
 * Re-running a model request when it failed with a transient error (network, 429, 5xx,
 * overloaded, a cut stream), with exponential backoff that honours the server's
 * `retry-after`.
 */
import { ReinError, toReinError } from '../errors.js';
import { EventStream } from './event-stream.js';
import { clause } from './http-errors.js';
import { emptyUsage } from './types.js';
import type { AssistantMessage, AssistantStream, AssistantStreamEvent, Context, ModelRef, StreamFunction, StreamOptions } from './types.js';

/** How {@link streamWithRetry} retries. */
export interface RetryPolicy {
  /** Retries after the first attempt (default 3: at most 4 requests). */
  maxRetries: number;
  /** The delay before the first retry, doubled for each further one (default 1000 ms). */
  baseDelayMs: number;
  /** No delay exceeds this; a server asking for more is not retried (default 60 000 ms). */
  maxDelayMs: number;
  /** Randomize the backoff ("equal jitter", see {@link backoffDelay}); default true. */
  jitter: boolean;
  /** Waits `ms`, rejecting when `signal` aborts. Injected by tests to run without waiting. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The defaults: 3 retries, 1 s doubling, capped at 60 s, with jitter. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, baseDelayMs: 1000, maxDelayMs: 60_000, jitter: true };

/**
 * The delay before retry number `attempt` (1-based), or `undefined` when the server asked
 * for a longer wait than `maxDelayMs` allows (then the error is final).
 *
 * Exponential backoff `baseDelayMs · 2^(attempt-1)`, capped at `maxDelayMs`, with *equal
 * jitter*: a uniformly random value between half the backoff and the whole of it. Unlike
 * full jitter (0 … backoff) it never retries at once, which matters when the server is
 * overloaded; the random half still spreads out clients that failed together.
 * A server-requested delay (`retryAfterMs`) wins when it is longer.
 */
export function backoffDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number | undefined {
  if (retryAfterMs !== undefined && retryAfterMs > policy.maxDelayMs) return undefined;
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const backoff = policy.jitter ? exponential / 2 + random() * (exponential / 2) : exponential;
  return Math.round(Math.max(backoff, retryAfterMs ?? 0));
}

/**
 * Calls `fn` and, when its stream ends with a transient error, calls it again after a
 * backoff. Events of every attempt are forwarded as they arrive; before waiting, a
 * `{ type: 'retry', attempt, delayMs, error }` event says that everything the failed
 * attempt streamed is void (the final message never contains it). `attempt` is the number
 * of the attempt that failed (1 = the first request), so also the number of the retry. Non-transient errors,
 * the last attempt's error and aborts end the stream as they are. Never throws.
 *
 * @example
 * const stream = streamWithRetry(streamOpenAIChat, model, context, { signal });
 * for await (const event of stream) if (event.type === 'retry') console.warn(`retrying in ${event.delayMs} ms`);
 */
export function streamWithRetry(
  fn: StreamFunction,
  model: ModelRef,
  context: Context,
  options: StreamOptions = {},
  policy: Partial<RetryPolicy> = {},
): AssistantStream {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  new Attempts(out, fn, model, context, options, policy).next(1);
  return out;
}

type Failure = Extract<AssistantStreamEvent, { type: 'error' }>;

/**
 * The attempts of one request. The common request (one attempt, a stream with `listen`)
 * costs one listener and one `then`: no async function, no promise per event, and the
 * policy is resolved only once an attempt failed.
 */
class Attempts {
  private full: RetryPolicy | undefined;

  constructor(
    private readonly out: EventStream<AssistantStreamEvent, AssistantMessage>,
    private readonly fn: StreamFunction,
    private readonly model: ModelRef,
    private readonly context: Context,
    private readonly options: StreamOptions,
    private readonly policy: Partial<RetryPolicy>,
  ) {}

  /** Starts attempt `attempt` and forwards its events; its failure, if any, goes to {@link Attempts.failed}. */
  next(attempt: number): void {
    const { out } = this;
    let stream: AssistantStream;
    try {
      stream = this.fn(this.model, this.context, this.options);
    } catch (thrown) {
      // Adapters must not throw; a custom StreamFunction might.
      this.failed(attempt, this.thrown(thrown));
      return;
    }
    if (!stream.listen) {
      this.iterate(stream).then(
        (failure) => failure && this.failed(attempt, failure),
        (thrown: unknown) => this.failed(attempt, this.thrown(thrown)),
      );
      return;
    }
    // Fast path: forward synchronously, no promise per event.
    let failure: Failure | undefined;
    let listening: Promise<AssistantMessage>;
    try {
      listening = stream.listen((event) => {
        if (event.type === 'error') {
          failure = event;
          return;
        }
        out.push(event);
        if (event.type === 'done') out.end(event.message);
      });
    } catch (thrown) {
      this.failed(attempt, this.thrown(thrown));
      return;
    }
    listening.then(
      () => {
        if (failure) this.failed(attempt, failure);
        else if (!out.isEnded) this.failed(attempt, this.thrown(this.unfinished()));
      },
      (thrown: unknown) => this.failed(attempt, this.thrown(thrown)),
    );
  }

  /** Forwards a stream without `listen`; resolves with its error event (not forwarded) if it failed. */
  private async iterate(stream: AssistantStream): Promise<Failure | undefined> {
    for await (const event of stream) {
      if (event.type === 'error') return event;
      this.out.push(event);
      if (event.type === 'done') {
        this.out.end(event.message);
        return undefined;
      }
    }
    throw this.unfinished();
  }

  /** Retries after a backoff when the error is transient and attempts remain; else ends the stream with it. */
  private failed(attempt: number, failure: Failure): void {
    const { out, options } = this;
    const policy = (this.full ??= { ...DEFAULT_RETRY_POLICY, ...this.policy });
    const { error } = failure;
    const retryable = error.kind === 'transient' && attempt <= policy.maxRetries && !options.signal?.aborted;
    const delayMs = retryable ? backoffDelay(attempt, error.retryAfterMs, policy) : undefined;
    if (delayMs === undefined) {
      // Without a delay a retryable error is one whose server asked for a longer wait than the cap.
      const final = retryable ? waitTooLong(failure, policy) : failure;
      out.push(final);
      out.end(final.message);
      return;
    }
    out.push({ type: 'retry', attempt, delayMs, error });
    let slept: Promise<void>;
    try {
      slept = (policy.sleep ?? defaultSleep)(delayMs, options.signal);
    } catch (thrown) {
      slept = Promise.reject(thrown);
    }
    slept.then(
      () => {
        // Said when the request goes out, not when it was scheduled: an abort during the
        // wait sends none, and the time of a request is when it was made.
        out.push({ type: 'attempt', attempt: attempt + 1 });
        this.next(attempt + 1);
      },
      () => {
        // Only an abort interrupts the wait: end now rather than after the delay.
        const aborted = new ReinError('aborted', 'fatal', 'The model request was aborted while waiting to retry', { cause: error });
        const message: AssistantMessage = { ...failure.message, content: [], stopReason: 'aborted', error: aborted.toJSON() };
        out.push({ type: 'error', error: aborted, message });
        out.end(message);
      },
    );
  }

  private unfinished(): ReinError {
    return new ReinError('internal', 'fatal', `The ${this.model.provider} adapter ended its stream without a done or error event`);
  }

  /** A thrown error as the failure of an attempt. */
  private thrown(thrown: unknown): Failure {
    const error = toReinError(thrown);
    const { model } = this;
    const message: AssistantMessage = {
      role: 'assistant',
      content: [],
      stopReason: error.code === 'aborted' ? 'aborted' : 'error',
      usage: emptyUsage(),
      provider: model.provider,
      model: model.id,
      error: error.toJSON(),
    };
    return { type: 'error', error, message };
  }
}

/** The failure, saying it was not retried because the server asked to wait longer than `maxDelayMs`. */
function waitTooLong(failure: Failure, policy: RetryPolicy): Failure {
  const { error } = failure;
  const wait = seconds(error.retryAfterMs ?? 0);
  const text = `${clause(error.message)}. Not retried: the server asked to wait ${wait}, longer than the ${seconds(policy.maxDelayMs)} rein waits at most (raise the retry option maxDelayMs, e.g. new Agent({ retry: { maxDelayMs } }), to wait that long)`;
  const capped = new ReinError(error.code, error.kind, text, {
    cause: error,
    status: error.status,
    retryAfterMs: error.retryAfterMs,
    details: error.details,
  });
  return { type: 'error', error: capped, message: { ...failure.message, error: capped.toJSON() } };
}

/** A wait for people: `500 ms`, `1.5 s`, `120 s`. */
function seconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
