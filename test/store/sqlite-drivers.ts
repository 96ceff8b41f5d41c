// The SQLite drivers this process can open a file with, for tests parametrised over both:
// better-sqlite3 where its native module loads (the Node it was built for), node:sqlite
// where Node has it (≥ 22.13). `npm test` on Node 20 runs the first; CI's Node 24 run, the second.
import { openSqliteFile } from '../../src/store/sqlite-file.js';
import { SQLITE_DRIVERS, type SqliteConnection, type SqliteDriverName } from '../../src/store/sqlite-driver.js';

function opens(driver: SqliteDriverName): boolean {
  try {
    openSqliteFile(':memory:', 'test', { driver }).close();
    return true;
  } catch {
    return false;
  }
}

/** The drivers that open a database here, in the order rein prefers them. */
export const drivers: SqliteDriverName[] = SQLITE_DRIVERS.filter(opens);

/** Whether this Node has node:sqlite unflagged (22.13 or newer, or 23.4 and newer). */
export const nodeHasSqlite = ((): boolean => {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 13);
})();

/** A raw connection to `path` on `driver`, for looking at (or locking) a store's file from outside it. */
export function rawConnection(path: string, driver: SqliteDriverName): SqliteConnection {
  return openSqliteFile(path, 'test', { driver });
}
