/**
 * Opening a SQLite file, shared by the run store and the memory: through better-sqlite3
 * when it is installed and loads, else through Node's built-in `node:sqlite` (Node ≥ 22.13).
 * A copy of better-sqlite3 built for another Node (one checkout used by two Node versions)
 * does not load, and falls back the same way. Both drivers read and write the same files.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { ReinError } from '../errors.js';
import { isMissingPackage, missingPackage } from '../optional.js';
import { openBetterSqlite } from './sqlite-better.js';
import { SQLITE_DRIVERS, type SqliteConnection, type SqliteDriverName } from './sqlite-driver.js';
import { loadNodeSqlite, openNodeSqlite } from './sqlite-node.js';

/** Options of {@link openSqliteFile}. */
export interface SqliteFileOptions {
  /** How long a write waits for another connection's lock (ms, default 5000). */
  busyTimeoutMs?: number;
  /**
   * The driver: `better-sqlite3` or `node:sqlite`. Default: `REIN_SQLITE_DRIVER` if set,
   * else better-sqlite3 when it is installed and loads, else `node:sqlite` where Node has it.
   */
  driver?: SqliteDriverName;
}

/** better-sqlite3 as this process found it: the constructor, or why it cannot be used. */
let better: { Database: typeof BetterSqlite3 } | { missing: unknown } | { broken: unknown } | undefined;

/**
 * Opens (creating it and its folder when missing) the database at `path`. A driver that
 * cannot be used is a `config` error that says what to install or rebuild; any other
 * failure (a file that is not a database, a folder that cannot be written) is thrown as it
 * came, for the caller to name. `purpose` names the feature in those messages.
 */
export function openSqliteFile(path: string, purpose: string, options: SqliteFileOptions = {}): SqliteConnection {
  const wanted = options.driver ?? driverFromEnv();
  const timeout = options.busyTimeoutMs ?? 5000;
  if (!isInMemory(path)) mkdirSync(dirname(path), { recursive: true });
  if (wanted !== 'node:sqlite') {
    const found = loadBetter();
    if ('Database' in found) {
      try {
        return openBetterSqlite(found.Database, path, timeout);
      } catch (error) {
        if (!isNativeLoadFailure(error)) throw error;
        better = { broken: error };
      }
    }
    if (wanted === 'better-sqlite3') throw betterError(purpose);
  }
  const sqlite = loadNodeSqlite();
  if (sqlite) return openNodeSqlite(sqlite, path, timeout);
  if (wanted === 'node:sqlite') {
    throw new ReinError(
      'config',
      'fatal',
      `${purpose} was asked to use node:sqlite, which Node ${process.version} does not have (it needs Node 22.13 or newer): use better-sqlite3 (npm install better-sqlite3) or a newer Node`,
    );
  }
  throw betterError(purpose);
}

/**
 * WAL with `synchronous=NORMAL`: readers never wait for the writer, and a commit survives
 * kill -9 of the process (only an OS crash or power loss can drop the last commits).
 */
export function useWal(db: SqliteConnection, path: string): void {
  // An in-memory database has no journal file to switch.
  if (!isInMemory(path)) db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
}

/** The driver `REIN_SQLITE_DRIVER` names (`undefined` when unset); a `config` error for another value. */
function driverFromEnv(): SqliteDriverName | undefined {
  const value = process.env.REIN_SQLITE_DRIVER?.trim();
  if (value === undefined || value === '' || value === 'auto') return undefined;
  if ((SQLITE_DRIVERS as readonly string[]).includes(value)) return value as SqliteDriverName;
  throw new ReinError('config', 'fatal', `REIN_SQLITE_DRIVER is "${value}": use better-sqlite3, node:sqlite or auto (or unset it)`);
}

/** better-sqlite3, required once per process from rein's own folder (synchronously: opening a store is a constructor call). */
function loadBetter(): NonNullable<typeof better> {
  if (better) return better;
  try {
    better = { Database: createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3 };
  } catch (error) {
    if (!isMissingPackage(error, 'better-sqlite3')) throw error;
    better = { missing: error };
  }
  return better;
}

/** Why better-sqlite3 cannot be used, as an error for `purpose` that says what to do. */
function betterError(purpose: string): ReinError {
  const newer = 'run on Node 22.13 or newer, where rein uses the built-in node:sqlite';
  if (better && 'missing' in better) {
    const error = missingPackage(purpose, ['better-sqlite3'], better.missing);
    return new ReinError('config', 'fatal', `${error.message} (or ${newer})`, { cause: better.missing, details: error.details });
  }
  const cause = better && 'broken' in better ? better.broken : undefined;
  const first = String((cause as Error)?.message ?? cause).split('\n')[0];
  return new ReinError(
    'config',
    'fatal',
    `${purpose}: better-sqlite3 cannot load its native module (${first}): run \`npm rebuild better-sqlite3\`, or ${newer}`,
    { cause },
  );
}

/** A native module that was never built (its install script skipped) or was built for another Node. */
function isNativeLoadFailure(error: unknown): boolean {
  return /bindings file|NODE_MODULE_VERSION|ERR_DLOPEN/.test(
    String((error as Error)?.message) + String((error as { code?: unknown })?.code),
  );
}

function isInMemory(path: string): boolean {
  return path === ':memory:' || path === '';
}
