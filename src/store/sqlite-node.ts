/**
 * A {@link SqliteConnection} over Node's built-in `node:sqlite` (Node ≥ 22.13): no package
 * to install and nothing to compile. Its statements return null-prototype rows and its
 * errors carry the SQLite result code as a number (`errcode`); see `sqliteErrorCode`.
 */
import type { SqliteConnection, SqliteParams, SqliteStatement } from './sqlite-driver.js';

// What rein uses of `node:sqlite`, declared here: the Node 20 types rein builds against have none.
interface StatementSync {
  run(...params: unknown[]): { changes: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface DatabaseSync {
  exec(sql: string): void;
  prepare(sql: string): StatementSync;
  close(): void;
}
/** The `node:sqlite` module (the part rein uses). */
export interface NodeSqlite {
  DatabaseSync: new (path: string) => DatabaseSync;
}

/** The module once looked for (`undefined`: this Node has none); `null` before. */
let loaded: NodeSqlite | undefined | null = null;

/**
 * `node:sqlite` when this Node has it, else `undefined`. Loaded through
 * `process.getBuiltinModule`, synchronously, so opening a store stays a constructor call.
 */
export function loadNodeSqlite(): NodeSqlite | undefined {
  if (loaded !== null) return loaded;
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof get !== 'function') return (loaded = undefined);
  // Node 22 warns on stderr that SQLite is experimental when the module loads: rein chose
  // it knowingly, and a warning on every command would only be noise to its users.
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (/SQLite is an experimental feature/.test(String(warning))) return;
    (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return (loaded = (get.call(process, 'node:sqlite') as NodeSqlite | undefined) ?? undefined);
  } catch {
    return (loaded = undefined);
  } finally {
    process.emitWarning = emit;
  }
}

/** Opens `path` with `node:sqlite`; its errors are thrown as they come. */
export function openNodeSqlite(sqlite: NodeSqlite, path: string, busyTimeoutMs: number): SqliteConnection {
  const db = new sqlite.DatabaseSync(path);
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  } catch (error) {
    db.close();
    throw error;
  }
  return new NodeConnection(db);
}

class NodeConnection implements SqliteConnection {
  readonly driver = 'node:sqlite';
  private closed = false;
  private readonly begin: StatementSync;
  private readonly commit: StatementSync;
  private readonly rollback: StatementSync;

  constructor(private readonly db: DatabaseSync) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  get open(): boolean {
    return !this.closed;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  prepare(sql: string): SqliteStatement {
    return new NodeStatement(this.db.prepare(sql));
  }

  immediate<T>(fn: () => T): T {
    this.begin.run();
    let result: T;
    try {
      result = fn();
    } catch (error) {
      // SQLite may have rolled back already (a failed COMMIT-time constraint, a full disk):
      // a second rollback then fails with "no transaction is active", which says nothing new.
      try {
        this.rollback.run();
      } catch {}
      throw error;
    }
    try {
      this.commit.run();
    } catch (error) {
      try {
        this.rollback.run();
      } catch {}
      throw error;
    }
    return result;
  }

  pragma(name: string): unknown {
    return firstColumn(this.db.prepare(`PRAGMA ${name}`).get());
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }
}

class NodeStatement implements SqliteStatement {
  constructor(private readonly stmt: StatementSync) {}

  run(...params: SqliteParams): { changes: number } {
    return { changes: Number(this.stmt.run(...params).changes) };
  }

  get(...params: SqliteParams): unknown {
    return this.stmt.get(...params);
  }

  all(...params: SqliteParams): unknown[] {
    return this.stmt.all(...params);
  }

  value(...params: SqliteParams): unknown {
    return firstColumn(this.stmt.get(...params));
  }

  values(...params: SqliteParams): unknown[] {
    return this.stmt.all(...params).map(firstColumn);
  }
}

function firstColumn(row: unknown): unknown {
  if (row === undefined || row === null) return undefined;
  for (const key in row as Record<string, unknown>) return (row as Record<string, unknown>)[key];
  return undefined;
}
