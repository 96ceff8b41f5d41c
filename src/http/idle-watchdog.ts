/**
 * One shared timer that notices requests gone silent. A timer per request (or the socket's
 * own idle timeout) costs a timer-list insert and removal on every model request; here a
 * request only records when it last heard from the server, and one unref'd interval sweeps
 * them. Precision is a quarter of the shortest timeout being watched (at most 1 s).
 */

/** A request being watched. `last` is updated by its owner on every sign of life. */
export interface IdleWatch {
  last: number;
  readonly idleMs: number;
  readonly onIdle: () => void;
}

const watched = new Set<IdleWatch>();
let interval: NodeJS.Timeout | undefined;
let period = 1000;
let emptySweeps = 0;

function sweep(): void {
  if (watched.size === 0) {
    // Keep the interval through short gaps between requests; stop it when rein is idle.
    if (++emptySweeps >= 5) stopInterval();
    return;
  }
  emptySweeps = 0;
  const now = Date.now();
  for (const watch of watched) {
    if (now - watch.last >= watch.idleMs) {
      watched.delete(watch);
      watch.onIdle();
    }
  }
}

function stopInterval(): void {
  if (interval) clearInterval(interval);
  interval = undefined;
  period = 1000;
  emptySweeps = 0;
}

/** Starts watching; `onIdle` runs once if `idleMs` pass without `last` being refreshed. */
export function watchIdle(idleMs: number, onIdle: () => void): IdleWatch {
  const watch: IdleWatch = { last: Date.now(), idleMs, onIdle };
  watched.add(watch);
  const wanted = Math.max(10, Math.min(1000, Math.floor(idleMs / 4)));
  if (interval === undefined || wanted < period) {
    if (interval) clearInterval(interval);
    period = wanted;
    interval = setInterval(sweep, period);
    // Never keeps a process alive on its own.
    interval.unref();
  }
  return watch;
}

/** Stops watching (the request ended one way or another). */
export function unwatchIdle(watch: IdleWatch): void {
  watched.delete(watch);
}
