/**
 * Waiting on code rein does not control — a person answering `onConfirm`, a hook, a
 * context transform — must not outlast an abort: the run ends `aborted` at once and
 * whatever the callback answers later is ignored (nothing is logged after `run_finished`).
 */

/** What {@link untilAborted} resolves to when the signal fired first. */
export const ABORTED: unique symbol = Symbol('aborted');

/**
 * `value` as it settles, or {@link ABORTED} as soon as `signal` fires (at once when it
 * already has). A plain value costs nothing; a rejection after the abort is swallowed.
 */
export function untilAborted<T>(value: T | Promise<T>, signal: AbortSignal | undefined): T | Promise<T | typeof ABORTED> {
  if (!(value instanceof Promise) || signal === undefined) return value;
  if (signal.aborted) {
    value.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    value.then(
      (settled) => {
        signal.removeEventListener('abort', onAbort);
        resolve(settled);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
