/** How long to wait before the next attempt to reach a server that is down. */
import { backoffDelay } from '../model/retry.js';

/** Delays between reconnection attempts: `initialDelayMs` doubling up to `maxDelayMs`, with jitter. */
export interface ReconnectPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
}

/**
 * The delay before the next attempt after `failures` failed ones (0 right after a
 * connection was lost): `initialDelayMs · 2^failures`, capped at `maxDelayMs`, with equal
 * jitter (between half and all of it, so a crash loop backs off and servers restarted
 * together do not reconnect in lockstep) — the model retries' {@link backoffDelay}.
 *
 * @example
 * reconnectDelay(3, { initialDelayMs: 500, maxDelayMs: 30_000 }); // between 2000 and 4000
 */
export function reconnectDelay(failures: number, policy: ReconnectPolicy, random: () => number = Math.random): number {
  const retry = { maxRetries: Infinity, baseDelayMs: policy.initialDelayMs, maxDelayMs: policy.maxDelayMs, jitter: true };
  // The exponent is bounded (a host retries forever; 0 · 2^1024 would be NaN), and without a
  // server-requested wait backoffDelay always answers a number.
  return backoffDelay(Math.min(failures, 30) + 1, undefined, retry, random) ?? policy.maxDelayMs;
}
