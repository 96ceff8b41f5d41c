/**
 * A {@link SqliteConnection} over better-sqlite3 (an optional package: a native module,
 * compiled on install where no prebuilt binary can be fetched).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteConnection, SqliteParams, SqliteStatement } from './sqlite-driver.js';

type Stmt = BetterSqlite3.Statement<unknown[], unknown>;

/** Opens `path` with `Database` (the better-sqlite3 constructor); its errors are thrown as they come. */
export function openBetterSqlite(Database: typeof BetterSqlite3, path: string, busyTimeoutMs: number): SqliteConnection {
  return new BetterConnection(new Database(path, { timeout: busyTimeoutMs }));
}

class BetterConnection implements SqliteConnection {
  readonly driver = 'better-sqlite3';
  private readonly tx: BetterSqlite3.Transaction<(fn: () => unknown) => unknown>;

  constructor(private readonly db: BetterSqlite3.Database) {
    this.tx = db.transaction((fn: () => unknown) => fn());
  }

  get open(): boolean {
    return this.db.open;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  prepare(sql: string): SqliteStatement {
    return new BetterStatement(this.db.prepare(sql));
  }

  immediate<T>(fn: () => T): T {
    return this.tx.immediate(fn) as T;
  }

  pragma(name: string): unknown {
    return this.db.pragma(name, { simple: true });
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

class BetterStatement implements SqliteStatement {
  // A statement that returns no rows cannot be put in pluck mode: make the plucked one on first use.
  private plucked: Stmt | undefined;

  constructor(private readonly stmt: Stmt) {}

  run(...params: SqliteParams): { changes: number } {
    return this.stmt.run(...params);
  }

  get(...params: SqliteParams): unknown {
    return this.stmt.get(...params);
  }

  all(...params: SqliteParams): unknown[] {
    return this.stmt.all(...params);
  }

  value(...params: SqliteParams): unknown {
    return this.pluck().get(...params);
  }

  values(...params: SqliteParams): unknown[] {
    return this.pluck().all(...params);
  }

  private pluck(): Stmt {
    return (this.plucked ??= this.stmt.database.prepare(this.stmt.source).pluck());
  }
}
