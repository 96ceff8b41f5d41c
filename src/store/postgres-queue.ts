/**
 * The run queue's store side on Postgres: a run's log and its pg-boss job written in ONE
 * transaction (docs/workers.md). pg-boss (an optional package, like pg) is loaded on the
 * first submit. The workers (src/worker/) take the jobs; this file only puts them there,
 * so the queue's name, schema and settings live here, where both sides read them.
 */
import type { Pool, PoolClient } from 'pg';
import type { PgBoss } from 'pg-boss';
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import { importOptional } from '../optional.js';
import type { NewRun, RunQueue, RunRecord } from './types.js';

/** The pg-boss queue of runs. */
export const RUN_QUEUE = 'rein-runs';

/** What a job of {@link RUN_QUEUE} carries: only the run's id; the run's log is the truth. */
export interface RunJob {
  runId: string;
}

/**
 * The queue's settings. `heartbeatSeconds` 10 (pg-boss's least), refreshed every 2 s by the
 * worker, with a 1 s monitor, hands a dead worker's job to another 8–12 s after its death; a job is a segment of a run, so a run
 * lives through any number of retries (each death or drain is one), and 24 h (pg-boss's
 * most) bounds a segment, after which another worker continues the run from its log.
 */
export const RUN_QUEUE_OPTIONS = {
  heartbeatSeconds: 10,
  expireInSeconds: 24 * 3600,
  retryLimit: 1_000_000,
  retryDelay: 0,
  deleteAfterSeconds: 7 * 24 * 3600,
} as const;

/** The schema pg-boss keeps its tables in, beside the store's `schema`. */
export function queueSchema(schema: string): string {
  return `${schema}_queue`;
}

/** How to reach the store's database, for a pg-boss instance of its own. */
export interface QueueLocation {
  url: string;
  schema: string;
}

/**
 * A pg-boss instance on the store's database, its schema installed and the run queue
 * created. `worker` instances supervise (expire jobs whose heartbeat stopped); a sender's
 * does not (every worker already does, and a sender may be a short CLI process).
 */
export async function openBoss(where: QueueLocation, options: { worker: boolean; max?: number }): Promise<PgBoss> {
  const { PgBoss } = await importOptional<typeof import('pg-boss')>('pg-boss', 'the run queue (rein submit, rein worker)');
  const boss = new PgBoss({
    connectionString: where.url,
    schema: queueSchema(where.schema),
    max: options.max ?? (options.worker ? 4 : 2),
    supervise: options.worker,
    schedule: false,
    // The monitor pass (which fails jobs whose heartbeat stopped) runs once per supervise interval.
    ...(options.worker ? { monitorIntervalSeconds: 1, superviseIntervalSeconds: 1 } : {}),
  });
  // pg-boss reports background failures (a lost connection while polling) as 'error'
  // events; unhandled, one would end the process. The next call reports the outage.
  boss.on('error', () => undefined);
  await boss.start();
  // createQueue does nothing when the queue exists.
  await boss.createQueue(RUN_QUEUE, { ...RUN_QUEUE_OPTIONS });
  return boss;
}

/** The store's statements and helpers the queue writes with (the store keeps them private otherwise). */
export interface QueueWriter {
  /** Inserts the run row with the client given (inside the queue's transaction). */
  insertRun(client: PoolClient, run: NewRun): Promise<RunRecord>;
  /** Appends events with the client given; throws as {@link RunStore.append} does. */
  append(client: PoolClient, runId: string, epoch: number, events: readonly RunEvent[]): Promise<void>;
  /** Marks the run `running` under lease `epoch`. */
  markRunning(client: PoolClient, runId: string, epoch: number): Promise<void>;
}

/**
 * The {@link RunQueue} of a Postgres store. Its pg-boss instance is opened on the first
 * submit and closed with the store.
 */
export class PostgresRunQueue implements RunQueue {
  private boss: Promise<PgBoss> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly where: QueueLocation,
    private readonly writer: QueueWriter,
  ) {}

  async submit(run: NewRun, events: readonly RunEvent[]): Promise<RunRecord> {
    return this.inTransaction(run.id, async (client, boss) => {
      const record = await this.writer.insertRun(client, run);
      await this.writer.append(client, run.id, 0, events);
      await send(boss, client, run.id);
      return { ...record, eventCount: events.length };
    });
  }

  async requeue(runId: string, epoch: number, events: readonly RunEvent[]): Promise<void> {
    await this.inTransaction(runId, async (client, boss) => {
      await this.writer.append(client, runId, epoch, events);
      await this.writer.markRunning(client, runId, epoch);
      await send(boss, client, runId);
    });
  }

  async close(): Promise<void> {
    const boss = this.boss;
    this.boss = undefined;
    if (boss)
      await boss.then(
        (b) => b.stop({ graceful: false, close: true }),
        () => undefined,
      );
  }

  private async inTransaction<T>(runId: string, work: (client: PoolClient, boss: PgBoss) => Promise<T>): Promise<T> {
    if (!this.boss) {
      this.boss = openBoss(this.where, { worker: false });
      this.boss.catch(() => (this.boss = undefined));
    }
    let boss: PgBoss;
    try {
      boss = await this.boss;
    } catch (error) {
      if (error instanceof ReinError) throw error;
      throw new ReinError('store', 'fatal', `cannot set up the run queue: ${(error as Error).message}`, { cause: error });
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const out = await work(client, boss);
      await client.query('COMMIT');
      return out;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (error instanceof ReinError) throw error;
      throw new ReinError('store', 'fatal', `cannot queue run ${runId}: ${(error as Error).message}`, { cause: error });
    } finally {
      client.release();
    }
  }
}

/** Enqueues the run's job through `client`, so it commits (or not) with the run's log. */
async function send(boss: PgBoss, client: PoolClient, runId: string): Promise<void> {
  const db = { executeSql: (text: string, values?: unknown[]) => client.query(text, values) };
  const data: RunJob = { runId };
  await boss.send(RUN_QUEUE, data, { db });
}
