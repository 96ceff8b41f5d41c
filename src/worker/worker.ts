/**
 * A worker: takes runs from the queue (pg-boss on the store's Postgres) and drives each
 * with the agent its record names, continuing it from its log with the durable-run rules.
 * A job is one segment of a run: it ends at `run_finished`, at an approval pause (approve
 * requeues the run), or when the worker lets the run go (drain, a lost claim). pg-boss's
 * heartbeats hand a dead worker's jobs to another; the run's lease epoch fences the dead
 * one's writes should it come back (docs/workers.md).
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import type { PgBoss, JobWithMetadata } from 'pg-boss';
import { ReinError } from '../errors.js';
import type { RunEvent, RunResult } from '../events.js';
import type { Agent } from '../loop/agent.js';
import type { RunHandle } from '../loop/handle.js';
import { importOptional } from '../optional.js';
import { openBoss, queueSchema, RUN_QUEUE, type QueueLocation, type RunJob } from '../store/postgres-queue.js';
import type { RunRecord, RunStore } from '../store/types.js';
import { FleetLimits, type ModelLimits } from './fleet-limits.js';
import { ensureFleetTables, fleetSchema, NOW_MS } from './fleet-tables.js';
import { refuseRun } from './refuse.js';
import { workerMetrics, type WorkerMetrics } from './worker-metrics.js';
import type { Meter } from '@opentelemetry/api';

/**
 * The agents a worker can drive: by name (the name a run was submitted under), or a
 * function that builds the agent of a stored run (the CLI's, from `.rein/agents/`), throwing
 * when it cannot (the run is then refused, with the error's message as the reason).
 */
export type WorkerAgents = Readonly<Record<string, Agent>> | ((record: RunRecord, name: string) => Promise<Agent>);

/** What a worker reports as it works (for logs; every field is plain data). */
export type WorkerEvent =
  | { type: 'taken'; runId: string; pickupMs: number }
  | { type: 'finished'; runId: string; status: string; reason: string }
  | { type: 'refused'; runId: string; why: string }
  | { type: 'released'; runId: string; why: string }
  | { type: 'error'; message: string };

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  /** The Postgres store (`await openStore('postgres://…')`); the agents must log to the same database. */
  store: RunStore;
  agents: WorkerAgents;
  /** Runs driven at once by this worker (default 4). */
  concurrency?: number;
  /** Fleet-wide limits on model requests (shared by every worker that sets them). */
  modelLimits?: ModelLimits;
  /** This worker's id (default `<host>-<pid>-<random>`). */
  id?: string;
  /** How often the worker's row and its model slots are renewed (default 2000 ms). */
  heartbeatMs?: number;
  /** How long a drain waits for a run to reach the end of its step before letting it go anyway (default 30 000 ms). */
  drainTimeoutMs?: number;
  onEvent?: (event: WorkerEvent) => void;
  /** Where the queue's metrics go (default: the global OpenTelemetry meter provider, when `@opentelemetry/api` is installed). */
  meter?: Meter;
}

/** A running worker. */
export interface Worker {
  readonly id: string;
  /** Runs this worker drives now. */
  readonly running: number;
  /**
   * Stops: no new jobs. With `drain` (default true) each run finishes its current step,
   * then is let go (its lease taken back, its job returned to the queue) for another
   * worker to continue; without, runs are let go at once. Resolves once every run is let go.
   */
  stop(options?: { drain?: boolean }): Promise<void>;
}

/** A run this worker drives. */
interface Driven {
  handle: RunHandle;
  controller: AbortController;
  /** Set once the worker let the run go: its end is not the run's. */
  released?: string;
}

/** Where a Postgres store's database is (the worker opens its own connections there). */
export function queueLocationOf(store: RunStore): QueueLocation {
  const pg = store as Partial<{ url: string; schemaName: string }>;
  if (!store.queue || typeof pg.url !== 'string' || typeof pg.schemaName !== 'string') {
    throw new ReinError(
      'config',
      'fatal',
      'a worker needs the Postgres store (openStore("postgres://…")): runs are queued in the database every worker reaches, which a SQLite file is not',
    );
  }
  return { url: pg.url, schema: pg.schemaName };
}

/**
 * Starts a worker on the store's queue; resolves once it takes jobs.
 *
 * @example
 * const store = await openStore(process.env.REIN_DATABASE_URL);
 * const triage = new Agent({ model: 'openai/gpt-4o-mini', store, tools });
 * const worker = await createWorker({ store, agents: { triage }, concurrency: 8 });
 * process.once('SIGTERM', () => void worker.stop());
 */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const where = queueLocationOf(options.store);
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000)
    throw new ReinError('config', 'fatal', `concurrency must be an integer from 1 to 1000, got ${String(concurrency)}`);
  const { Pool } = await importOptional<typeof import('pg')>('pg', 'a worker');
  const pool = new Pool({ connectionString: where.url, max: 4 });
  pool.on('error', () => undefined);
  const id = options.id ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  try {
    await ensureFleetTables(pool, where.schema);
    const fleet = new FleetLimits(pool, where.schema, id, options.modelLimits ?? {});
    const boss = await openBoss(where, { worker: true, max: Math.min(10, 2 + concurrency) });
    const worker = new RunWorker(options, where, pool, boss, fleet, id, concurrency);
    worker.metrics = await workerMetrics(options.meter, () => worker.queueDepth);
    await worker.start();
    return worker;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}

class RunWorker implements Worker {
  private readonly live = new Map<string, Driven>();
  private readonly s: string;
  private readonly schema: string;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private draining = false;
  metrics: WorkerMetrics = { pickedUp: () => undefined };
  /** Runs waiting in the queue, as of the last heartbeat (pg-boss's counts). */
  queueDepth: number | undefined;

  constructor(
    private readonly options: WorkerOptions,
    where: QueueLocation,
    private readonly pool: Pool,
    private readonly boss: PgBoss,
    private readonly fleet: FleetLimits,
    readonly id: string,
    private readonly concurrency: number,
  ) {
    this.s = `"${fleetSchema(where.schema)}"`;
    this.schema = where.schema;
  }

  get running(): number {
    return this.live.size;
  }

  async start(): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.s}.workers (id, host, pid, concurrency, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, ${NOW_MS}, ${NOW_MS})
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = ${NOW_MS}, stopped_at = NULL`,
      [this.id, hostname(), process.pid, this.concurrency],
    );
    const every = this.options.heartbeatMs ?? 2000;
    this.heartbeat = setInterval(() => void this.beat(), every);
    this.heartbeat.unref();
    // One pg-boss worker per slot, so each can be told to fetch again as soon as its job ends
    // (by default it would wait out the rest of its polling interval, which caps throughput).
    for (let slot = 0; slot < this.concurrency; slot++) {
      let id = '';
      id = await this.boss.work<RunJob>(
        RUN_QUEUE,
        { batchSize: 1, pollingIntervalSeconds: 0.5, includeMetadata: true, heartbeatRefreshSeconds: 2 },
        async ([job]) => {
          // includeMetadata: the job carries its times (for the pickup latency).
          if (!job) return;
          try {
            await this.take(job as JobWithMetadata<RunJob>);
          } finally {
            if (!this.draining && id) this.boss.notifyWorker(id);
          }
        },
      );
    }
  }

  private async beat(): Promise<void> {
    try {
      await this.pool.query(`UPDATE ${this.s}.workers SET heartbeat_at = ${NOW_MS} WHERE id = $1`, [this.id]);
      await this.fleet.renew();
      // Counted, not pg-boss's cached stats (up to a monitor pass old): runs waiting to be taken.
      const { rows } = await this.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${queueSchema(this.schema)}".job WHERE name = $1 AND state IN ('created', 'retry')`,
        [RUN_QUEUE],
      );
      this.queueDepth = Number(rows[0]?.n ?? 0);
    } catch (error) {
      this.report({ type: 'error', message: `heartbeat: ${(error as Error).message}` });
    }
  }

  private report(event: WorkerEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A listener's failure is not the worker's.
    }
  }

  /** One job: drive its run until it ends, pauses, or is let go. Throwing returns the job to the queue. */
  private async take(job: JobWithMetadata<RunJob>): Promise<void> {
    const runId = job.data?.runId;
    if (typeof runId !== 'string') return;
    if (this.draining) throw new Error('the worker is draining: the run goes back to the queue');
    const { store } = this.options;
    const record = await store.getRun(runId);
    // Nothing to drive: gone, ended, or paused for a person (approve requeues it).
    if (!record || record.status !== 'running') return;
    const queuedAt = Math.max(new Date(job.createdOn).getTime(), new Date(job.startAfter).getTime());
    const pickupMs = Math.max(0, Date.now() - queuedAt);
    this.metrics.pickedUp(pickupMs);
    this.report({ type: 'taken', runId, pickupMs });
    const name = agentNameOf(record);
    let agent: Agent;
    try {
      agent = await this.agentFor(record, name);
    } catch (error) {
      if (error instanceof ReinError && error.kind === 'transient') throw error;
      return this.refuse(record, (error as Error).message);
    }
    // A changed agent (its tools, prompt or model) is refused by resume itself, before it takes the run.
    const controller = new AbortController();
    const driven: Driven = { handle: agent.resume(runId, { signal: controller.signal, gateModel: this.fleet.gate }), controller };
    this.live.set(runId, driven);
    // The claim lost (our heartbeat went missing and another worker got the job): let the run go.
    const onLost = (): void => void this.release(runId, 'the queue gave the job to another worker');
    job.signal?.addEventListener('abort', onLost, { once: true });
    const unsubscribe = driven.handle.subscribe((event) => this.onRunEvent(runId, event));
    let result: RunResult;
    try {
      result = await driven.handle;
    } finally {
      unsubscribe();
      job.signal?.removeEventListener('abort', onLost);
      this.live.delete(runId);
      await this.pool.query(`DELETE FROM ${this.s}.holders WHERE run_id = $1 AND worker_id = $2`, [runId, this.id]).catch(() => undefined);
    }
    if (driven.released) {
      this.report({ type: 'released', runId, why: driven.released });
      throw new Error(`released: ${driven.released}`);
    }
    const error = result.error;
    // Could not begin: another process took the run first (fine), the store failed (try again), the agent changed.
    if (error && result.traceId === '') {
      if (error.code === 'lease_lost' || error.code === 'not_found') return;
      if (error.code === 'conflict') return this.refuse(record, error.message);
      throw new ReinError(error.code, error.kind, error.message);
    }
    if (error?.code === 'lease_lost') return;
    this.report({ type: 'finished', runId, status: result.status, reason: result.reason });
  }

  private async agentFor(record: RunRecord, name: string): Promise<Agent> {
    const agents = this.options.agents;
    if (typeof agents === 'function') return agents(record, name);
    const agent = Object.hasOwn(agents, name) ? agents[name] : undefined;
    if (!agent)
      throw new ReinError(
        'conflict',
        'fatal',
        `agent "${name}" is unknown to worker ${this.id} (it knows ${Object.keys(agents).join(', ') || 'none'})`,
      );
    return agent;
  }

  private async refuse(record: RunRecord, why: string): Promise<void> {
    const reason = `refused by worker ${this.id}: ${why}`;
    this.report({ type: 'refused', runId: record.id, why: reason });
    await refuseRun(this.options.store, record.id, reason);
  }

  /** Records who holds the run (with its lease), and lets it go at the end of its step when draining. */
  private onRunEvent(runId: string, event: RunEvent): void {
    if (event.type === 'run_resumed') {
      void this.pool
        .query(
          `INSERT INTO ${this.s}.holders (run_id, worker_id, epoch, since) VALUES ($1, $2, $3, ${NOW_MS})
           ON CONFLICT (run_id) DO UPDATE SET worker_id = excluded.worker_id, epoch = excluded.epoch, since = excluded.since
           WHERE ${this.s}.holders.epoch < excluded.epoch`,
          [runId, this.id, event.epoch],
        )
        .catch(() => undefined);
    }
    // A new step begins only once the last one's results are durable: the place to stop.
    if (this.draining && event.type === 'state_changed' && event.to === 'planning') void this.release(runId, 'the worker is draining');
  }

  /**
   * Lets a run go: takes its lease back (fencing this process's own writes, so the run's
   * log stays as its last durable write left it, `running`), then aborts what it does.
   */
  private async release(runId: string, why: string): Promise<void> {
    const driven = this.live.get(runId);
    if (!driven || driven.released) return;
    driven.released = why;
    try {
      await this.options.store.acquireLease(runId);
    } catch {
      // The store is unreachable: then nothing of this run can be written anyway.
    }
    driven.controller.abort(new ReinError('aborted', 'fatal', why));
  }

  stop(options: { drain?: boolean } = {}): Promise<void> {
    this.stopping ??= this.shutdown(options.drain !== false);
    return this.stopping;
  }

  private async shutdown(drain: boolean): Promise<void> {
    this.draining = true;
    // No new jobs from here on; the handlers running go on.
    await this.boss.offWork(RUN_QUEUE, { wait: false }).catch(() => undefined);
    const runs = [...this.live.keys()];
    if (!drain) await Promise.all(runs.map((runId) => this.release(runId, 'the worker stopped')));
    else {
      const timer = setTimeout(() => {
        for (const runId of this.live.keys()) void this.release(runId, 'the worker is draining (its step did not end in time)');
      }, this.options.drainTimeoutMs ?? 30_000);
      timer.unref();
      await this.settled();
      clearTimeout(timer);
    }
    await this.settled();
    // Graceful: pg-boss waits for the handlers to return (failing the released jobs back to the queue).
    await this.boss.stop({ graceful: true, close: true, timeout: 30_000 }).catch(() => undefined);
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.fleet.releaseAll().catch(() => undefined);
    await this.pool
      .query(`UPDATE ${this.s}.workers SET stopped_at = ${NOW_MS}, heartbeat_at = ${NOW_MS} WHERE id = $1`, [this.id])
      .catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }

  /** Resolves once no run is driven here. */
  private async settled(): Promise<void> {
    while (this.live.size > 0) await Promise.allSettled([...this.live.values()].map((d) => d.handle.then(() => undefined)));
  }
}

/** The agent a run was submitted to (`rein submit --agent`, `agent.submit(…, { agent })`). */
export function agentNameOf(record: RunRecord): string {
  const metadata = (record.config as { metadata?: { queued?: { agent?: unknown }; agent?: { name?: unknown } } } | null)?.metadata;
  const queued = metadata?.queued?.agent;
  if (typeof queued === 'string') return queued;
  const named = metadata?.agent?.name;
  return typeof named === 'string' ? named : 'default';
}
