/**
 * Pinging a connected server: a link that is gone (a refused socket) is reported at the
 * first failed ping, a server that stops answering (a frozen event loop) after two missed
 * pings in a row. Stdio crashes are seen at once without it; this catches the rest.
 */

/** What {@link startHeartbeat} needs. */
export interface HeartbeatOptions {
  everyMs: number;
  /** Sends one ping with this timeout. */
  ping: (timeoutMs: number) => Promise<unknown>;
  timeoutMs: number;
  /** Whether a ping failure means the link is gone (rather than a slow answer). */
  isLost: (error: unknown) => boolean;
  onLost: (reason: string) => void;
}

/** Starts pinging; returns the function that stops it. `everyMs` ≤ 0 pings never. */
export function startHeartbeat(options: HeartbeatOptions): () => void {
  if (!(options.everyMs > 0)) return () => undefined;
  let misses = 0;
  let inFlight = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (inFlight || stopped) return;
    inFlight = true;
    options
      .ping(options.timeoutMs)
      .then(
        () => (misses = 0),
        (error: unknown) => {
          if (stopped) return;
          if (options.isLost(error)) options.onLost(`ping failed: ${error instanceof Error ? error.message : String(error)}`);
          else if (++misses >= 2) options.onLost(`did not answer ${misses} pings in a row`);
        },
      )
      .finally(() => (inFlight = false));
  }, options.everyMs);
  // Pinging must not keep a finished program alive.
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
