/** Timers: their longest wait, and waiting with a bound for shutdown paths that must not hang on a stuck peer. */

/**
 * The longest wait a Node timer takes (2^31-1 ms, about 24.8 days): a longer one fires after
 * 1 ms, with a TimeoutOverflowWarning, so a longer limit would end the run at once.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** True when `promise` settles (either way) within `ms`; the timer never keeps the process alive. */
export function settlesWithin(promise: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (!promise) return Promise.resolve(true);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    timeout,
  ]).finally(() => clearTimeout(timer));
}
