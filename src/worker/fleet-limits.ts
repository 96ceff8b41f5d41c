/**
 * Fleet-wide model limits (docs/workers.md): at most N model requests at once per provider
 * (or per base URL + model) across every worker, and a 429's `retry-after` holding back
 * that provider's requests on every worker until then. Both live in Postgres:
 *
 * - a request takes one of N slot rows of its key (`INSERT … ON CONFLICT DO UPDATE WHERE
 *   expired`: two workers can never take the same slot) and deletes it when its response
 *   ends. A slot expires 30 s after its worker's last heartbeat renewed it, so a worker
 *   killed mid-request frees its slots by itself; no row waits for a dead worker.
 * - a 429 with a retry-after writes `until` for the provider (never moving it earlier);
 *   every request first waits until then.
 */
import type { Pool } from 'pg';
import type { ModelGate } from '../loop/agent.js';
import { EventStream } from '../model/event-stream.js';
import {
  emptyUsage,
  type AssistantMessage,
  type AssistantStream,
  type AssistantStreamEvent,
  type Context,
  type ModelRef,
  type StreamFunction,
  type StreamOptions,
} from '../model/types.js';
import { ReinError } from '../errors.js';
import { fleetSchema, NOW_MS } from './fleet-tables.js';

/** How the fleet limits model requests. */
export interface ModelLimits {
  /** At most this many model requests at once, across every worker, per key (see `by`). Absent: no limit on concurrency (429 holds still apply). */
  maxConcurrent?: number;
  /** What a limit counts: `provider` (provider + base URL: one server, every model; default) or `model` (base URL + model). */
  by?: 'provider' | 'model';
}

/** How long a slot outlives its worker's last renewal. */
export const SLOT_TTL_MS = 30_000;
/** The longest a 429 may hold a provider back (a bad header must not stop the fleet for a day). */
const MAX_HOLD_MS = 10 * 60_000;

/** The fleet's limits as seen by one worker. */
export class FleetLimits {
  private readonly s: string;

  constructor(
    private readonly pool: Pool,
    schema: string,
    private readonly workerId: string,
    private readonly limits: ModelLimits,
  ) {
    this.s = `"${fleetSchema(schema)}"`;
    const max = limits.maxConcurrent;
    if (max !== undefined && (!Number.isInteger(max) || max < 1 || max > 10_000)) {
      throw new ReinError(
        'config',
        'fatal',
        `the fleet's maxConcurrent model requests must be an integer from 1 to 10000, got ${String(max)}`,
      );
    }
    if (limits.by !== undefined && limits.by !== 'provider' && limits.by !== 'model')
      throw new ReinError('config', 'fatal', `model limits by "${String(limits.by)}": use provider or model`);
  }

  /** Wraps a provider call so each attempt waits for the provider's hold and a free slot. */
  readonly gate: ModelGate =
    (fn: StreamFunction): StreamFunction =>
    (model, context, options) =>
      this.limited(fn, model, context, options ?? {});

  /** Keeps this worker's slots alive (called with each heartbeat). */
  async renew(): Promise<void> {
    await this.pool.query(`UPDATE ${this.s}.slots SET expires_at = ${NOW_MS} + $2 WHERE worker_id = $1`, [this.workerId, SLOT_TTL_MS]);
  }

  /** Frees every slot of this worker (at its stop). */
  async releaseAll(): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.s}.slots WHERE worker_id = $1`, [this.workerId]);
  }

  private limited(fn: StreamFunction, model: ModelRef, context: Context, options: StreamOptions): AssistantStream {
    const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
    void this.drive(out, fn, model, context, options);
    return out;
  }

  private async drive(
    out: EventStream<AssistantStreamEvent, AssistantMessage>,
    fn: StreamFunction,
    model: ModelRef,
    context: Context,
    options: StreamOptions,
  ): Promise<void> {
    const holdKey = `${model.provider} ${model.baseUrl}`;
    const slotKey = this.limits.by === 'model' ? `${model.baseUrl} ${model.id}` : holdKey;
    let slot: number | undefined;
    try {
      slot = await this.take(holdKey, slotKey, options.signal);
    } catch (error) {
      const reason = toFailure(error, model);
      out.push(reason);
      out.end(reason.message);
      return;
    }
    try {
      for await (const event of fn(model, context, options)) {
        if (event.type === 'error' && event.error.status === 429 && event.error.retryAfterMs !== undefined) {
          // Said before the retry's wait begins, so the other workers hold back as long as this one.
          await this.hold(holdKey, event.error.retryAfterMs).catch(() => undefined);
        }
        out.push(event);
        if (event.type === 'done' || event.type === 'error') {
          out.end(event.message);
          break;
        }
      }
      if (!out.isEnded) {
        const failure = toFailure(
          new ReinError('internal', 'fatal', `the ${model.provider} adapter ended its stream without a done or error event`),
          model,
        );
        out.push(failure);
        out.end(failure.message);
      }
    } finally {
      if (slot !== undefined)
        await this.pool
          .query(`DELETE FROM ${this.s}.slots WHERE key = $1 AND slot = $2 AND worker_id = $3`, [slotKey, slot, this.workerId])
          .catch(() => undefined);
    }
  }

  /** Waits for the provider's hold to pass and (with a limit) for a slot; returns the slot taken. */
  private async take(holdKey: string, slotKey: string, signal: AbortSignal | undefined): Promise<number | undefined> {
    const max = this.limits.maxConcurrent;
    for (let tries = 0; ; tries++) {
      if (signal?.aborted) throw new ReinError('aborted', 'fatal', 'the model request was aborted while waiting for the fleet limits');
      const { rows } = await this.pool.query<{ wait: string | null }>(
        `SELECT until_ms - ${NOW_MS} AS wait FROM ${this.s}.holds WHERE key = $1`,
        [holdKey],
      );
      const wait = Number(rows[0]?.wait ?? 0);
      if (wait > 0) {
        await sleep(Math.min(wait, 1000), signal);
        continue;
      }
      if (max === undefined) return undefined;
      const taken = await this.pool.query<{ slot: number }>(
        `INSERT INTO ${this.s}.slots (key, slot, worker_id, expires_at)
         SELECT $1, s, $3, ${NOW_MS} + $4 FROM generate_series(0, $2 - 1) AS s
         WHERE NOT EXISTS (SELECT 1 FROM ${this.s}.slots f WHERE f.key = $1 AND f.slot = s AND f.expires_at > ${NOW_MS})
         ORDER BY s LIMIT 1
         ON CONFLICT (key, slot) DO UPDATE SET worker_id = excluded.worker_id, expires_at = excluded.expires_at
         WHERE ${this.s}.slots.expires_at <= ${NOW_MS}
         RETURNING slot`,
        [slotKey, max, this.workerId, SLOT_TTL_MS],
      );
      if (taken.rows[0]) return taken.rows[0].slot;
      // Every slot is busy: look again soon (jittered, so waiting workers do not move in step).
      await sleep(20 + Math.random() * Math.min(200, 20 * (tries + 1)), signal);
    }
  }

  private async hold(key: string, ms: number): Promise<void> {
    const wait = Math.max(0, Math.min(ms, MAX_HOLD_MS));
    await this.pool.query(
      `INSERT INTO ${this.s}.holds (key, until_ms) VALUES ($1, ${NOW_MS} + $2)
       ON CONFLICT (key) DO UPDATE SET until_ms = GREATEST(${this.s}.holds.until_ms, excluded.until_ms)`,
      [key, wait],
    );
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** A failure of the limits themselves (the database, an abort) as the end of the model stream. */
function toFailure(error: unknown, model: ModelRef): Extract<AssistantStreamEvent, { type: 'error' }> {
  const reinError =
    error instanceof ReinError
      ? error
      : new ReinError('store', 'transient', `the fleet limits could not be checked: ${(error as Error).message}`, { cause: error });
  const message: AssistantMessage = {
    role: 'assistant',
    content: [],
    stopReason: reinError.code === 'aborted' ? 'aborted' : 'error',
    usage: emptyUsage(),
    provider: model.provider,
    model: model.id,
    error: reinError.toJSON(),
  };
  return { type: 'error', error: reinError, message };
}
