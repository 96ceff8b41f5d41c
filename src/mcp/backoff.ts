/** How long to wait before the next attempt to reach a server that is down. */

/** Delays between reconnection attempts: `initialDelayMs` doubling up to `maxDelayMs`, with jitter. */
export interface ReconnectPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
}

/**
 * The delay before the next attempt after `failures` failed ones (0 right after a
 * connection was lost): `initialDelayMs · 2^failures`, capped at `maxDelayMs`, with equal
 * jitter (between half and all of it, so a crash loop backs off and servers restarted
 * together do not reconnect in lockstep).
 *
 * @example
 * reconnectDelay(3, { initialDelayMs: 500, maxDelayMs: 30_000 }); // between 2000 and 4000
 */
export function reconnectDelay(failures: number, policy: ReconnectPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(failures, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
