/** Waiting with a bound, for shutdown paths that must not hang on a stuck peer. */

/** True when `promise` settles (either way) within `ms`; the timer never keeps the process alive. */
export function settlesWithin(promise: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (!promise) return Promise.resolve(true);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  return Promise.race([promise.then(() => true, () => true), timeout]).finally(() => clearTimeout(timer));
}
