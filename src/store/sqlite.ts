/**
 * The embedded default store: one SQLite file, through better-sqlite3 12 (13 needs Node 22)
 * when it is installed and loads, else Node's built-in `node:sqlite` (`sqlite-file.ts`).
 * WAL with `synchronous=NORMAL`: a commit survives kill -9 of the process (only an OS crash
 * or power loss can drop the last commits); an append with `durability: 'full'` runs with
 * `synchronous=FULL`, so it is on disk before a tool with side effects starts. Every write
 * is one IMMEDIATE transaction (the write lock taken up front, so two connections never
 * deadlock upgrading a read), conditional on the lease epoch and the next seq; appends
 * that arrive together (concurrent runs) share one transaction, a savepoint each
 * (`group-commit.ts`).
 */
import { ReinError } from '../errors.js';
import type { RunEvent, RunTotals, StopReasonCode } from '../events.js';
import { blobThreshold, decodeEvents, encodeBatch, type EncodedEvent } from './encode.js';
import { checkLimit, duplicateRun, explainRefusal, newRunRow, notFound, toRecord, type RunRow } from './rows.js';
import { checkVersion, metaTable, migrations, SCHEMA_VERSION } from './schema.js';
import type { SqliteConnection, SqliteDriverName, SqliteStatement } from './sqlite-driver.js';
import { sqliteErrorCode } from './sqlite-driver.js';
import { openSqliteFile, useWal } from './sqlite-file.js';
import { GroupCommit, type QueuedAppend } from './group-commit.js';
import type { Durability, NewRun, RunFilter, RunRecord, RunStore } from './types.js';

/** The file used when no location is given, relative to the working directory. */
export const DEFAULT_SQLITE_PATH = '.rein/rein.db';

/** Options of a {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /** The database file (its folder is created); `:memory:` for a private in-memory database. Default `.rein/rein.db`. */
  path?: string;
  /** Events whose JSON is longer than this many characters are kept out of the event rows (default 64 Ki). */
  blobThreshold?: number;
  /** How long a write waits for another connection's write lock before failing (ms, default 5000). */
  busyTimeoutMs?: number;
  /**
   * The driver: `better-sqlite3` or `node:sqlite` (Node ≥ 22.13). Default: `REIN_SQLITE_DRIVER`
   * if set, else better-sqlite3 when it is installed and loads, else `node:sqlite`.
   */
  driver?: SqliteDriverName;
  /**
   * Test hook: called inside every append's transaction with the connection's
   * `PRAGMA synchronous` at that moment (1 = NORMAL, 2 = FULL).
   */
  probeSynchronous?: (level: number) => void;
}

type Stmt = SqliteStatement;

/** Event rows inserted by one statement at most (5 parameters each, far below SQLite's limit). */
const ROWS_PER_INSERT = 16;

/**
 * A {@link RunStore} in one SQLite file. Open it with `openStore()` (which loads
 * the driver only when needed) or construct it directly.
 *
 * @example
 * const store = new SqliteStore({ path: '.rein/rein.db' });
 */
export class SqliteStore implements RunStore {
  private readonly db: SqliteConnection;
  private readonly threshold: number;
  private readonly probe: ((level: number) => void) | undefined;
  private readonly s: Record<'insertRun' | 'getRun' | 'runState' | 'lease' | 'claim' | 'insertPayload' | 'load' | 'update', Stmt>;
  private readonly lists = new Map<string, Stmt>();
  /** The event inserts by row count (index n: n rows in one statement), prepared on first use. */
  private readonly inserts: Array<Stmt | undefined> = [];
  private readonly groupTx: (group: Array<QueuedAppend<EncodedEvent[]>>, failures: unknown[]) => void;
  private readonly group = new GroupCommit<EncodedEvent[]>((group) => this.commitGroup(group));

  /** The database file this store was opened on, as given. */
  readonly path: string;

  constructor(options: SqliteStoreOptions = {}) {
    const path = (this.path = options.path ?? DEFAULT_SQLITE_PATH);
    this.threshold = blobThreshold(options.blobThreshold);
    this.probe = options.probeSynchronous;
    try {
      this.db = openSqliteFile(path, 'the SQLite store', {
        busyTimeoutMs: options.busyTimeoutMs,
        ...(options.driver === undefined ? {} : { driver: options.driver }),
      });
    } catch (error) {
      throw storeError(error, `cannot open the SQLite store ${path}`);
    }
    try {
      useWal(this.db, path);
      migrate(this.db, path);
    } catch (error) {
      this.db.close();
      throw storeError(error, `cannot set up the SQLite store ${path}`);
    }
    const p = (sql: string): Stmt => this.db.prepare(sql);
    this.s = {
      insertRun:
        p(`INSERT INTO runs (id, status, reason, model, config, config_hash, parent_run_id, created_at, updated_at, totals, lease_epoch, event_count)
        VALUES (@id, @status, @reason, @model, @config, @config_hash, @parent_run_id, @created_at, @updated_at, @totals, @lease_epoch, @event_count)`),
      getRun: p('SELECT * FROM runs WHERE id = ?'),
      runState: p('SELECT lease_epoch, event_count FROM runs WHERE id = ?'),
      lease: p('UPDATE runs SET lease_epoch = lease_epoch + 1, updated_at = ? WHERE id = ? RETURNING lease_epoch'),
      claim: p('UPDATE runs SET event_count = event_count + ?, updated_at = ? WHERE id = ? AND lease_epoch = ? AND event_count = ?'),
      insertPayload: p('INSERT INTO payloads (run_id, seq, data) VALUES (?, ?, ?)'),
      load: p(`SELECT coalesce(e.data, p.data) FROM events e LEFT JOIN payloads p ON p.run_id = e.run_id AND p.seq = e.seq
        WHERE e.run_id = ? AND e.seq >= ? ORDER BY e.seq`),
      update: p('UPDATE runs SET status = ?, reason = ?, totals = coalesce(?, totals), updated_at = ? WHERE id = ? AND lease_epoch = ?'),
    };
    const appendRows = (runId: string, epoch: number, rows: EncodedEvent[], first: number): void => {
      const claimed = this.s.claim.run(rows.length, Date.now(), runId, epoch, first).changes === 1;
      if (!claimed) throw explainRefusal(runId, epoch, this.s.runState.get(runId) as RunRow | undefined, first);
      this.insertEvents(runId, rows);
      if (this.probe) this.probe(this.db.pragma('synchronous') as number);
    };
    const savepoint = { begin: p('SAVEPOINT rein_append'), release: p('RELEASE rein_append'), undo: p('ROLLBACK TO rein_append') };
    this.groupTx = (group, failures) =>
      this.db.immediate(() => {
        // An append alone in its group needs no savepoint: when it is refused, rolling back
        // the transaction undoes only it (commitGroup then rejects it).
        if (group.length === 1) {
          const { runId, epoch, rows } = group[0]!;
          appendRows(runId, epoch, rows, rows[0]!.seq);
          return;
        }
        for (let i = 0; i < group.length; i++) {
          const { runId, epoch, rows } = group[i]!;
          // One savepoint per append: a refused one (lease lost, seq taken) leaves the others in.
          savepoint.begin.run();
          try {
            appendRows(runId, epoch, rows, rows[0]!.seq);
          } catch (error) {
            savepoint.undo.run();
            failures[i] = error;
          }
          savepoint.release.run();
        }
      });
  }

  /**
   * Inserts a batch's event rows with one statement per {@link ROWS_PER_INSERT} rows (a
   * turn's five or six events are one statement, not six: each statement run costs the
   * driver's binding and result more than SQLite's own insert), then the large ones' payloads.
   */
  private insertEvents(runId: string, rows: EncodedEvent[]): void {
    for (let from = 0; from < rows.length; from += ROWS_PER_INSERT) {
      const n = Math.min(ROWS_PER_INSERT, rows.length - from);
      let stmt = this.inserts[n];
      if (stmt === undefined) {
        const values = Array.from({ length: n }, () => '(?, ?, ?, ?, ?)').join(', ');
        stmt = this.inserts[n] = this.db.prepare(`INSERT INTO events (run_id, seq, type, at, data) VALUES ${values}`);
      }
      const params = new Array<unknown>(n * 5);
      for (let i = 0; i < n; i++) {
        const e = rows[from + i]!;
        params[i * 5] = runId;
        params[i * 5 + 1] = e.seq;
        params[i * 5 + 2] = e.type;
        params[i * 5 + 3] = e.at;
        params[i * 5 + 4] = e.data;
      }
      stmt.run(...params);
    }
    for (const e of rows) if (e.payload !== null) this.s.insertPayload.run(runId, e.seq, e.payload);
  }

  /** Writes a group of appends in one transaction and settles each. */
  private commitGroup(group: Array<QueuedAppend<EncodedEvent[]>>): void {
    const full = group.some((a) => a.full);
    const failures = new Array<unknown>(group.length);
    try {
      // Through db.pragma every time: SQLite applies a setting pragma when the statement is
      // prepared, not when it runs, so a statement prepared once would not switch anything.
      if (full) this.db.exec('PRAGMA synchronous = FULL');
      try {
        this.groupTx(group, failures);
      } finally {
        if (full) this.db.exec('PRAGMA synchronous = NORMAL');
      }
    } catch (error) {
      for (const a of group) a.reject(storeError(error, `cannot append to run ${a.runId}`));
      return;
    }
    group.forEach((a, i) => (i in failures ? a.reject(storeError(failures[i], `cannot append to run ${a.runId}`)) : a.resolve()));
  }

  async createRun(run: NewRun): Promise<RunRecord> {
    this.group.drain();
    const row = newRunRow(run, Date.now());
    try {
      this.s.insertRun.run(row);
    } catch (error) {
      if (isConstraint(error)) throw duplicateRun(row.id, error);
      throw storeError(error, `cannot create run ${row.id}`);
    }
    return toRecord(row);
  }

  async acquireLease(runId: string): Promise<number> {
    this.group.drain();
    const epoch = this.guard(() => this.s.lease.value(Date.now(), runId) as number | undefined, `cannot take the lease of run ${runId}`);
    if (epoch === undefined) throw notFound(runId);
    return epoch;
  }

  async append(runId: string, epoch: number, events: readonly RunEvent[], options: { durability?: Durability } = {}): Promise<void> {
    const rows = encodeBatch(runId, events, this.threshold);
    if (rows.length > 0) return this.group.add(runId, epoch, rows, options.durability === 'full');
    this.group.drain();
    this.guard(() => {
      // Nothing to write: only say whether the lease is still held.
      const state = this.s.runState.get(runId) as RunRow | undefined;
      if (!state || Number(state.lease_epoch) !== epoch) throw explainRefusal(runId, epoch, state);
    }, `cannot append to run ${runId}`);
  }

  async loadEvents(runId: string, fromSeq = 0): Promise<RunEvent[]> {
    this.group.drain();
    const texts = this.guard(() => this.s.load.values(runId, fromSeq) as string[], `cannot load run ${runId}`);
    if (texts.length === 0 && this.guard(() => this.s.runState.get(runId), `cannot load run ${runId}`) === undefined) throw notFound(runId);
    return decodeEvents(texts, runId, fromSeq);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    this.group.drain();
    const row = this.guard(() => this.s.getRun.get(runId) as RunRow | undefined, `cannot read run ${runId}`);
    return row ? toRecord(row) : undefined;
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    this.group.drain();
    checkLimit(filter.limit);
    const where = [
      filter.status === undefined ? '' : 'status = @status',
      filter.before === undefined ? '' : 'created_at < @before',
      filter.parentRunId === undefined ? '' : 'parent_run_id = @parent',
    ].filter(Boolean);
    const sql = `SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT @limit`;
    const rows = this.guard(() => {
      let stmt = this.lists.get(sql);
      if (!stmt) this.lists.set(sql, (stmt = this.db.prepare(sql)));
      // SQLite reads a negative LIMIT as "no limit".
      const params: Record<string, unknown> = { limit: filter.limit ?? -1 };
      if (filter.status !== undefined) params.status = filter.status;
      if (filter.before !== undefined) params.before = filter.before;
      if (filter.parentRunId !== undefined) params.parent = filter.parentRunId;
      return stmt.all(params) as RunRow[];
    }, 'cannot list runs');
    return rows.map(toRecord);
  }

  async updateRun(
    runId: string,
    epoch: number,
    patch: { status: RunRecord['status']; reason?: StopReasonCode; totals?: RunTotals },
  ): Promise<void> {
    this.group.drain();
    const totals = patch.totals === undefined ? null : JSON.stringify(patch.totals);
    this.guard(() => {
      const changed = this.s.update.run(patch.status, patch.reason ?? null, totals, Date.now(), runId, epoch).changes === 1;
      if (!changed) throw explainRefusal(runId, epoch, this.s.runState.get(runId) as RunRow | undefined);
    }, `cannot update run ${runId}`);
  }

  async close(): Promise<void> {
    this.group.drain();
    this.db.close();
  }

  /** The driver this store runs on. */
  get driver(): SqliteDriverName {
    return this.db.driver;
  }

  /** Characters of JSON the events row of `(runId, seq)` holds: 0 when the event is in the payloads table. For tests and diagnostics. */
  async inlineSize(runId: string, seq: number): Promise<number | undefined> {
    const row = this.db.prepare('SELECT coalesce(length(data), 0) FROM events WHERE run_id = ? AND seq = ?').value(runId, seq);
    return row === undefined ? undefined : Number(row);
  }

  /** Reads a pragma on this store's own connection (`journal_mode`, `synchronous`, `integrity_check`…). For tests and diagnostics. */
  pragma(name: string): unknown {
    return this.db.pragma(name);
  }

  /** Runs `fn`, turning a driver error into a `store` error (a ReinError passes as it is). */
  private guard<T>(fn: () => T, what: string): T {
    try {
      return fn();
    } catch (error) {
      throw storeError(error, what);
    }
  }
}

/** Creates or migrates the schema in one IMMEDIATE transaction, so two processes opening a new file at once cannot both migrate it. */
function migrate(db: SqliteConnection, path: string): void {
  db.immediate(() => {
    db.exec(metaTable());
    const found = Number((db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").value() as string | undefined) ?? 0);
    checkVersion(found, `the SQLite store ${path}`);
    for (const steps of migrations('sqlite').slice(found)) for (const sql of steps) db.exec(sql);
    if (found !== SCHEMA_VERSION)
      db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)").run(String(SCHEMA_VERSION));
  });
}

function isConstraint(error: unknown): boolean {
  return sqliteErrorCode(error)?.startsWith('SQLITE_CONSTRAINT') === true;
}

/** A driver error as a ReinError: a busy or locked database is transient (another writer held the lock too long), the rest fatal. */
function storeError(error: unknown, what: string): ReinError {
  if (error instanceof ReinError) return error;
  const code = sqliteErrorCode(error);
  // A unique (run_id, seq) violation means another writer stored that seq first.
  if (code?.startsWith('SQLITE_CONSTRAINT'))
    return new ReinError('conflict', 'fatal', `${what}: ${(error as Error).message}; nothing was written`, { cause: error });
  const transient = code !== undefined && /^SQLITE_(BUSY|LOCKED)/.test(code);
  const message = error instanceof Error ? error.message : String(error);
  return new ReinError('store', transient ? 'transient' : 'fatal', `${what}: ${message}`, {
    cause: error,
    ...(code ? { details: { sqliteCode: code } } : {}),
  });
}
