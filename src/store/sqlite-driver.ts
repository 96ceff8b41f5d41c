/**
 * The little of a SQLite driver that the run store and the memory use, so both run on
 * better-sqlite3 (when installed and loadable) or on Node's built-in `node:sqlite`
 * (Node ≥ 22.13), over the same file format.
 */

/** The drivers rein can open a SQLite file with. */
export type SqliteDriverName = 'better-sqlite3' | 'node:sqlite';

/** The SQLite drivers, in the order rein tries them. */
export const SQLITE_DRIVERS: readonly SqliteDriverName[] = ['better-sqlite3', 'node:sqlite'];

/** Parameters of a statement: positional values, or one object of named ones (`@name` in the SQL). */
export type SqliteParams = unknown[];

/** A prepared statement. Rows are plain column → value records; integers come back as numbers. */
export interface SqliteStatement {
  /** Runs the statement; `changes` is the number of rows it inserted, updated or deleted. */
  run(...params: SqliteParams): { changes: number };
  /** The first row (a column → value record), or `undefined`. */
  get(...params: SqliteParams): unknown;
  /** Every row. */
  all(...params: SqliteParams): unknown[];
  /** The first column of the first row, or `undefined` when there is no row. */
  value(...params: SqliteParams): unknown;
  /** The first column of every row. */
  values(...params: SqliteParams): unknown[];
}

/** An open connection. */
export interface SqliteConnection {
  /** Which driver this connection runs on. */
  readonly driver: SqliteDriverName;
  /** Whether the connection is still open. */
  readonly open: boolean;
  /** Runs SQL text (several statements allowed), returning nothing. */
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  /**
   * Runs `fn` in an IMMEDIATE transaction (the write lock taken up front, so two
   * connections never deadlock upgrading a read): committed when it returns, rolled back
   * when it throws.
   */
  immediate<T>(fn: () => T): T;
  /** A pragma's value (`journal_mode`, `synchronous`, …); set one with `exec('PRAGMA x = y')`. */
  pragma(name: string): unknown;
  /** Closes the connection; closing twice is harmless. */
  close(): void;
}

/** Primary SQLite result codes by number (https://sqlite.org/rescode.html), for error codes both drivers name alike. */
const PRIMARY: Record<number, string> = {
  1: 'ERROR',
  2: 'INTERNAL',
  3: 'PERM',
  4: 'ABORT',
  5: 'BUSY',
  6: 'LOCKED',
  7: 'NOMEM',
  8: 'READONLY',
  9: 'INTERRUPT',
  10: 'IOERR',
  11: 'CORRUPT',
  12: 'NOTFOUND',
  13: 'FULL',
  14: 'CANTOPEN',
  15: 'PROTOCOL',
  16: 'EMPTY',
  17: 'SCHEMA',
  18: 'TOOBIG',
  19: 'CONSTRAINT',
  20: 'MISMATCH',
  21: 'MISUSE',
  22: 'NOLFS',
  23: 'AUTH',
  24: 'FORMAT',
  25: 'RANGE',
  26: 'NOTADB',
};

/** Extended codes worth their own name (the constraint kinds, the busy and locked cases). */
const EXTENDED: Record<number, string> = {
  261: 'BUSY_RECOVERY',
  517: 'BUSY_SNAPSHOT',
  773: 'BUSY_TIMEOUT',
  262: 'LOCKED_SHAREDCACHE',
  518: 'LOCKED_VTAB',
  275: 'CONSTRAINT_CHECK',
  531: 'CONSTRAINT_COMMITHOOK',
  787: 'CONSTRAINT_FOREIGNKEY',
  1043: 'CONSTRAINT_FUNCTION',
  1299: 'CONSTRAINT_NOTNULL',
  1555: 'CONSTRAINT_PRIMARYKEY',
  1811: 'CONSTRAINT_TRIGGER',
  2067: 'CONSTRAINT_UNIQUE',
  2323: 'CONSTRAINT_VTAB',
  2579: 'CONSTRAINT_ROWID',
  264: 'READONLY_RECOVERY',
  520: 'READONLY_CANTLOCK',
};

/**
 * The SQLite result code of a driver error as better-sqlite3 names it (`SQLITE_BUSY`,
 * `SQLITE_CONSTRAINT_PRIMARYKEY`…); `undefined` for an error that did not come from SQLite.
 */
export function sqliteErrorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; errcode?: unknown } | undefined;
  // better-sqlite3's SqliteError carries the name itself.
  if (typeof e?.code === 'string' && e.code.startsWith('SQLITE_')) return e.code;
  // node:sqlite: code ERR_SQLITE_ERROR, the extended result code as a number.
  if (e?.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') {
    const name = EXTENDED[e.errcode] ?? PRIMARY[e.errcode & 0xff];
    return name === undefined ? 'SQLITE_ERROR' : `SQLITE_${name}`;
  }
  return undefined;
}
