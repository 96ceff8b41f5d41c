/**
 * Opening a SQLite file through better-sqlite3, shared by the run store and the memory.
 * The driver is handed in, never imported here: the memory modules load it only when a
 * memory is opened, and this module is part of what they import.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { ReinError } from '../errors.js';

/** Options of {@link openSqliteDatabase}. */
export interface SqliteFileOptions {
  /** How long a write waits for another connection's lock (ms, default 5000). */
  busyTimeoutMs?: number;
}

/**
 * Opens (creating it and its folder when missing) the database at `path` with `Database`,
 * the better-sqlite3 constructor. A native module that cannot load is a `config` error that
 * says how to fix it; any other failure is thrown as it came, for the caller to name.
 */
export function openSqliteDatabase(Database: typeof BetterSqlite3, path: string, options: SqliteFileOptions = {}): BetterSqlite3.Database {
  if (!isInMemory(path)) mkdirSync(dirname(path), { recursive: true });
  try {
    return new Database(path, { timeout: options.busyTimeoutMs ?? 5000 });
  } catch (error) {
    // A native module that was never built (its install script skipped) or built for another Node.
    if (/bindings file|NODE_MODULE_VERSION|ERR_DLOPEN/.test(String((error as Error)?.message) + String((error as { code?: unknown })?.code))) {
      const first = String((error as Error)?.message ?? error).split('\n')[0];
      throw new ReinError('config', 'fatal', `better-sqlite3 cannot load its native module (${first}): run \`npm rebuild better-sqlite3\``, { cause: error });
    }
    throw error;
  }
}

/**
 * WAL with `synchronous=NORMAL`: readers never wait for the writer, and a commit survives
 * kill -9 of the process (only an OS crash or power loss can drop the last commits).
 */
export function useWal(db: BetterSqlite3.Database): void {
  // An in-memory database has no journal file to switch.
  if (!isInMemory(db.name)) db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
}

function isInMemory(path: string): boolean {
  return path === ':memory:' || path === '';
}
