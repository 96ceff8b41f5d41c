/**
 * The shared store: Postgres through `pg` (a Pool), the same schema and behaviour as the
 * SQLite store, so `rein worker` processes on many machines can drive runs from one
 * database. Every write is one statement, conditional on the lease epoch (and for appends
 * on the next seq) under the run row's lock; the unique (run_id, seq) key stays as the last
 * line of defence and maps to `conflict`. Every commit is durable (Postgres'
 * `synchronous_commit` is on by default), so `durability: 'full'` asks nothing more here.
 */
import { DatabaseError, Pool, type PoolClient, type PoolConfig, type QueryResultRow } from 'pg';
import { ReinError } from '../errors.js';
import type { RunEvent, RunTotals, StopReasonCode } from '../events.js';
import { blobThreshold, decodeEvents, encodeBatch } from './encode.js';
import { postgresStatements, type PostgresStatements } from './postgres-sql.js';
import { PostgresRunQueue } from './postgres-queue.js';
import { checkLimit, duplicateRun, explainRefusal, newRunRow, notFound, seqTaken, toRecord, type RunRow } from './rows.js';
import { checkVersion, metaTable, migrations, SCHEMA_VERSION } from './schema.js';
import type { Durability, NewRun, RunFilter, RunQueue, RunRecord, RunStore } from './types.js';

/** Where a statement runs: the pool, or one client inside a transaction (the queue's). */
type Executor = Pick<Pool, 'query'> | PoolClient;

/** Options of {@link PostgresStore.open}. */
export interface PostgresStoreOptions {
  /** `postgres://user@host:port/database`. */
  url: string;
  /** The schema holding rein's tables, created when missing (default `rein`). Lowercase letters, digits and `_`. */
  schema?: string;
  /** Events whose JSON is longer than this many characters are kept out of the event rows (default 64 Ki). */
  blobThreshold?: number;
  /** Pool settings beyond the URL (`max` connections, timeouts…). */
  pool?: Omit<PoolConfig, 'connectionString'>;
}

/**
 * A {@link RunStore} on Postgres. Create it with `await PostgresStore.open({ url })` (or
 * `openStore('postgres://…')`): opening creates or migrates the schema.
 *
 * @example
 * const store = await PostgresStore.open({ url: process.env.REIN_DATABASE_URL! });
 */
export class PostgresStore implements RunStore {
  private closed = false;
  private runQueue: PostgresRunQueue | undefined;

  private constructor(
    private readonly pool: Pool,
    private readonly sql: PostgresStatements,
    private readonly schema: string,
    private readonly threshold: number,
    /** The database's URL: the run queue's pg-boss opens its own connections to it. */
    readonly url: string,
  ) {}

  /** The schema holding rein's tables. */
  get schemaName(): string {
    return this.schema;
  }

  /** Hands runs to `rein worker` processes (pg-boss is loaded on the first use). */
  get queue(): RunQueue {
    this.runQueue ??= new PostgresRunQueue(
      this.pool,
      { url: this.url, schema: this.schema },
      {
        insertRun: (client, run) => this.insertRun(run, client),
        append: (client, runId, epoch, events) => this.appendWith(client, runId, epoch, events),
        markRunning: async (client, runId, epoch) => {
          const { rowCount } = await client.query({
            name: this.name('update'),
            text: this.sql.update,
            values: [runId, epoch, 'running', null, null, Date.now()],
          });
          if (rowCount !== 1) throw explainRefusal(runId, epoch, await this.state(runId));
        },
      },
    );
    return this.runQueue;
  }

  /** Connects, creates or migrates the schema, and returns the store. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = options.schema ?? 'rein';
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
      throw new ReinError('config', 'fatal', `the Postgres schema name ${JSON.stringify(schema)} must be lowercase letters, digits and _`);
    const threshold = blobThreshold(options.blobThreshold);
    const pool = new Pool({ ...options.pool, connectionString: options.url });
    // An idle client whose connection drops emits 'error' on the pool; unhandled, that would
    // end the process. The next query on a new client reports the outage instead.
    pool.on('error', () => undefined);
    try {
      await migrate(pool, schema);
    } catch (error) {
      await pool.end();
      throw pgError(error, `cannot set up the Postgres store (schema ${schema})`);
    }
    return new PostgresStore(pool, postgresStatements(schema), schema, threshold, options.url);
  }

  async createRun(run: NewRun): Promise<RunRecord> {
    return this.insertRun(run, this.pool);
  }

  private async insertRun(run: NewRun, on: Executor): Promise<RunRecord> {
    const r = newRunRow(run, Date.now());
    const values = [
      r.id,
      r.status,
      r.reason,
      r.model,
      r.config,
      r.config_hash,
      r.parent_run_id,
      r.created_at,
      r.updated_at,
      r.totals,
      r.lease_epoch,
      r.event_count,
    ];
    try {
      if (this.closed) throw new ReinError('store', 'fatal', 'the store is closed');
      await on.query({ name: this.name('insertRun'), text: this.sql.insertRun, values });
    } catch (error) {
      if (error instanceof DatabaseError && error.code === '23505') throw duplicateRun(r.id, error);
      throw pgError(error, `cannot create run ${r.id}`);
    }
    return toRecord(r);
  }

  async acquireLease(runId: string): Promise<number> {
    const { rows } = await this.run('lease', this.sql.lease, [runId, Date.now()], `cannot take the lease of run ${runId}`);
    if (rows.length === 0) throw notFound(runId);
    return Number(rows[0]!.lease_epoch);
  }

  async append(runId: string, epoch: number, events: readonly RunEvent[], _options?: { durability?: Durability }): Promise<void> {
    return this.appendWith(this.pool, runId, epoch, events);
  }

  private async appendWith(on: Executor, runId: string, epoch: number, events: readonly RunEvent[]): Promise<void> {
    const rows = encodeBatch(runId, events, this.threshold);
    const what = `cannot append to run ${runId}`;
    if (rows.length === 0) {
      // Nothing to write: only say whether the lease is still held.
      const state = await this.state(runId);
      if (!state || Number(state.lease_epoch) !== epoch) throw explainRefusal(runId, epoch, state);
      return;
    }
    const first = rows[0]!.seq;
    const large = rows.filter((e) => e.payload !== null);
    const values = [
      runId,
      epoch,
      first,
      rows.length,
      Date.now(),
      rows.map((e) => e.seq),
      rows.map((e) => e.type),
      rows.map((e) => e.at),
      rows.map((e) => e.data),
      large.map((e) => e.seq),
      large.map((e) => e.payload),
    ];
    let inserted: number;
    try {
      if (this.closed) throw new ReinError('store', 'fatal', 'the store is closed');
      inserted = (await on.query({ name: this.name('append'), text: this.sql.append, values })).rowCount ?? 0;
    } catch (error) {
      // The primary key on (run_id, seq) caught a write the conditional update did not.
      if (error instanceof DatabaseError && error.code === '23505') throw seqTaken(runId, first, error);
      throw pgError(error, what);
    }
    if (inserted !== rows.length) throw explainRefusal(runId, epoch, await this.state(runId), first);
  }

  async loadEvents(runId: string, fromSeq = 0): Promise<RunEvent[]> {
    const what = `cannot load run ${runId}`;
    let texts: string[];
    try {
      const result = await this.pool.query<[string]>({
        name: this.name('load'),
        text: this.sql.load,
        values: [runId, fromSeq],
        rowMode: 'array',
      });
      texts = result.rows.map((row) => row[0]);
    } catch (error) {
      throw pgError(error, what);
    }
    if (texts.length === 0 && !(await this.state(runId))) throw notFound(runId);
    return decodeEvents(texts, runId, fromSeq);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const { rows } = await this.run('getRun', this.sql.getRun, [runId], `cannot read run ${runId}`);
    return rows[0] ? toRecord(rows[0] as RunRow) : undefined;
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    checkLimit(filter.limit);
    const status = filter.status !== undefined;
    const before = filter.before !== undefined;
    const parent = filter.parentRunId !== undefined;
    const values: unknown[] = [filter.limit ?? null];
    if (status) values.push(filter.status);
    if (before) values.push(filter.before);
    if (parent) values.push(filter.parentRunId);
    const name = `list_${Number(status)}${Number(before)}${Number(parent)}`;
    const { rows } = await this.run(name, this.sql.list(status, before, parent), values, 'cannot list runs');
    return rows.map((row) => toRecord(row as RunRow));
  }

  async updateRun(
    runId: string,
    epoch: number,
    patch: { status: RunRecord['status']; reason?: StopReasonCode; totals?: RunTotals },
  ): Promise<void> {
    const totals = patch.totals === undefined ? null : JSON.stringify(patch.totals);
    const values = [runId, epoch, patch.status, patch.reason ?? null, totals, Date.now()];
    const { rowCount } = await this.run('update', this.sql.update, values, `cannot update run ${runId}`);
    if (rowCount !== 1) throw explainRefusal(runId, epoch, await this.state(runId));
  }

  /** Ends the pool (waits for queries in flight). Calling it again does nothing. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.runQueue?.close();
    await this.pool.end();
  }

  /** Characters of JSON the events row of `(runId, seq)` holds: 0 when the event is in the payloads table. For tests and diagnostics. */
  async inlineSize(runId: string, seq: number): Promise<number | undefined> {
    const { rows } = await this.pool.query(
      `SELECT coalesce(length(data), 0) AS n FROM "${this.schema}".events WHERE run_id = $1 AND seq = $2`,
      [runId, seq],
    );
    return rows[0] ? Number(rows[0].n) : undefined;
  }

  private async state(runId: string): Promise<{ lease_epoch: number; event_count: number } | undefined> {
    const { rows } = await this.run('runState', this.sql.runState, [runId], `cannot read run ${runId}`);
    return rows[0] as { lease_epoch: number; event_count: number } | undefined;
  }

  /** A named (so prepared once per connection) statement. */
  private query(key: string, text: string, values: unknown[]): Promise<{ rows: QueryResultRow[]; rowCount: number | null }> {
    if (this.closed) return Promise.reject(new ReinError('store', 'fatal', 'the store is closed'));
    return this.pool.query({ name: this.name(key), text, values });
  }

  private async run(
    key: string,
    text: string,
    values: unknown[],
    what: string,
  ): Promise<{ rows: QueryResultRow[]; rowCount: number | null }> {
    try {
      return await this.query(key, text, values);
    } catch (error) {
      throw pgError(error, what);
    }
  }

  private name(key: string): string {
    return `rein_${this.schema}_${key}`;
  }
}

/** Creates or migrates the schema under a transaction-scoped advisory lock, so processes opening a new database at once migrate it once. */
async function migrate(pool: Pool, schema: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rein:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(metaTable(`"${schema}".`));
    const { rows } = await client.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
    const found = Number(rows[0]?.value ?? 0);
    checkVersion(found, `the Postgres schema ${schema}`);
    for (const steps of migrations('postgres', `"${schema}".`).slice(found)) for (const sql of steps) await client.query(sql);
    if (found !== SCHEMA_VERSION) {
      await client.query(
        `INSERT INTO "${schema}".meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [String(SCHEMA_VERSION)],
      );
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Connection failures and server shutdowns are transient (a retry may reach it); everything else is fatal. */
function pgError(error: unknown, what: string): ReinError {
  if (error instanceof ReinError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  const sqlState = error instanceof DatabaseError ? error.code : undefined;
  const transient =
    (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN)$/.test(code)) ||
    (sqlState !== undefined && /^(08|57P0[123]|53|40001|40P01)/.test(sqlState));
  const message = error instanceof Error ? error.message : String(error);
  return new ReinError('store', transient ? 'transient' : 'fatal', `${what}: ${message}`, {
    cause: error,
    ...(sqlState ? { details: { sqlState } } : {}),
  });
}
