/**
 * Seeing the fleet: the live workers (id, host, pid, runs held, last heartbeat) and which
 * worker holds a run, read from the fleet tables (fleet-tables.ts). A worker is live while
 * its heartbeat is younger than {@link LIVE_MS} and it has not stopped; a run is held by the
 * live worker whose holder row names it.
 */
import type { Pool } from 'pg';
import { importOptional } from '../optional.js';
import type { RunStore } from '../store/types.js';
import { fleetSchema, NOW_MS } from './fleet-tables.js';
import { queueLocationOf } from './worker.js';

/** A worker whose heartbeat is older than this is not live (pg-boss hands its jobs on after 10 s). */
export const LIVE_MS = 15_000;

/** A live worker, as `rein workers` lists it. */
export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  concurrency: number;
  /** Runs it drives now. */
  runsHeld: number;
  /** Epoch ms of its last heartbeat (the database's clock). */
  heartbeatAt: number;
  startedAt: number;
}

/** Reads the fleet of a Postgres store (its own short-lived connections). */
export class FleetView {
  private constructor(
    private readonly pool: Pool,
    private readonly s: string,
  ) {}

  /** The fleet of `store` (a Postgres store; others have none: `undefined`). */
  static async of(store: RunStore): Promise<FleetView | undefined> {
    let where;
    try {
      where = queueLocationOf(store);
    } catch {
      return undefined;
    }
    const { Pool } = await importOptional<typeof import('pg')>('pg', 'the fleet view');
    const pool = new Pool({ connectionString: where.url, max: 1 });
    pool.on('error', () => undefined);
    return new FleetView(pool, `"${fleetSchema(where.schema)}"`);
  }

  /** The live workers, most recently started first. No fleet tables yet: none. */
  async workers(): Promise<WorkerInfo[]> {
    const rows = await this.read<Record<string, string | number>>(
      `SELECT w.id, w.host, w.pid, w.concurrency, w.started_at, w.heartbeat_at,
        (SELECT count(*) FROM ${this.s}.holders h WHERE h.worker_id = w.id) AS runs_held
       FROM ${this.s}.workers w WHERE w.stopped_at IS NULL AND w.heartbeat_at > ${NOW_MS} - $1
       ORDER BY w.started_at DESC, w.id`,
      [LIVE_MS],
    );
    return rows.map((r) => ({
      id: String(r.id),
      host: String(r.host),
      pid: Number(r.pid),
      concurrency: Number(r.concurrency),
      runsHeld: Number(r.runs_held),
      heartbeatAt: Number(r.heartbeat_at),
      startedAt: Number(r.started_at),
    }));
  }

  /** The live worker holding each of `runIds` (runs no live worker holds are left out). */
  async holders(runIds: readonly string[]): Promise<Map<string, string>> {
    if (runIds.length === 0) return new Map();
    const rows = await this.read<{ run_id: string; worker_id: string }>(
      `SELECT h.run_id, h.worker_id FROM ${this.s}.holders h JOIN ${this.s}.workers w ON w.id = h.worker_id
       WHERE h.run_id = ANY($1) AND w.stopped_at IS NULL AND w.heartbeat_at > ${NOW_MS} - $2`,
      [runIds, LIVE_MS],
    );
    return new Map(rows.map((r) => [r.run_id, r.worker_id]));
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async read<T>(text: string, values: unknown[]): Promise<T[]> {
    try {
      return (await this.pool.query(text, values)).rows as T[];
    } catch (error) {
      // 42P01 / 3F000: no worker ever started on this store, so there are no fleet tables.
      const code = (error as { code?: string }).code;
      if (code === '42P01' || code === '3F000') return [];
      throw error;
    }
  }
}
