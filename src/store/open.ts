/**
 * Opening a store from a location string. The drivers (better-sqlite3 or node:sqlite, pg)
 * are loaded only when their store is chosen, so the core entry never loads them (the core
 * must import in ≤ 50 ms), and the optional packages are needed only by those who use them.
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ReinError } from '../errors.js';
import { asMissing } from '../optional.js';
import type { PostgresStore, PostgresStoreOptions } from './postgres.js';
import type { SqliteStore, SqliteStoreOptions } from './sqlite.js';
import type { RunStore } from './types.js';

/** Where a store lives, as {@link resolveStoreLocation} understood it. */
export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** Events whose JSON is longer than this many characters are kept out of the event rows (default 64 Ki). */
  blobThreshold?: number;
  /** Postgres only: the schema holding rein's tables (default `rein`). */
  schema?: string;
  /** SQLite only: how long a write waits for another connection's lock (ms, default 5000). */
  busyTimeoutMs?: number;
  /** Where `REIN_DATABASE_URL` is read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** What a relative SQLite path is resolved against (default `process.cwd()`). */
  cwd?: string;
}

/**
 * The store location someone chose: `location` if given, else `REIN_DATABASE_URL`;
 * `undefined` when neither is set (the default file).
 */
export function namedStoreLocation(
  location: string | undefined,
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  return location || env.REIN_DATABASE_URL || undefined;
}

/** `location` fit to print: a URL's user and password (and a `password=` parameter) become `…`. */
export function maskStoreLocation(location: string): string {
  // Greedy up to the authority's last `@`: an unescaped `@` in a password must not leave its tail.
  return location.replace(/\/\/[^/?#]*@/, '//…@').replace(/([?&]password=)[^&#]*/gi, '$1…');
}

/**
 * Where the store lives: `location` if given, else `REIN_DATABASE_URL`, else
 * `.rein/rein.db`. `postgres://` and `postgresql://` URLs mean Postgres; `file:` URLs and
 * paths mean a SQLite file (`:memory:` a private in-memory one); other URL schemes are refused.
 */
export function resolveStoreLocation(
  location?: string,
  env: Record<string, string | undefined> = process.env,
  cwd: string = process.cwd(),
): StoreLocation {
  const chosen = namedStoreLocation(location, env) ?? '.rein/rein.db';
  if (/^postgres(ql)?:\/\//i.test(chosen)) return { kind: 'postgres', url: chosen };
  if (/^file:/i.test(chosen)) return { kind: 'sqlite', path: fileURLToPath(chosen) };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(chosen)) {
    throw new ReinError('config', 'fatal', `unsupported store location ${maskStoreLocation(chosen)}: use a file path or postgres://…`);
  }
  if (chosen === ':memory:') return { kind: 'sqlite', path: chosen };
  return { kind: 'sqlite', path: isAbsolute(chosen) ? chosen : resolve(cwd, chosen) };
}

/**
 * Opens the run store: SQLite at `.rein/rein.db` by default, a path for another SQLite
 * file, `postgres://…` (or `REIN_DATABASE_URL`) for Postgres. Creates the file's folder,
 * the schema or the tables when missing.
 *
 * @example
 * const store = await openStore();                       // .rein/rein.db
 * const shared = await openStore('postgres://localhost/rein');
 * const agent = new Agent({ model: 'openai/gpt-4o-mini', store });
 */
export async function openStore(location?: string, options: OpenStoreOptions = {}): Promise<RunStore> {
  const where = resolveStoreLocation(location, options.env, options.cwd);
  const threshold = options.blobThreshold === undefined ? {} : { blobThreshold: options.blobThreshold };
  if (where.kind === 'postgres') {
    return openPostgresStore({ url: where.url, ...threshold, ...(options.schema === undefined ? {} : { schema: options.schema }) });
  }
  return openSqliteStore({
    path: where.path,
    ...threshold,
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  });
}

/** Opens a {@link SqliteStore} with all its options, loading its driver on first use. */
export async function openSqliteStore(options: SqliteStoreOptions = {}): Promise<SqliteStore> {
  const { SqliteStore } = await import('./sqlite.js');
  return new SqliteStore(options);
}

/** Opens a {@link PostgresStore} with all its options, loading pg on first use (`npm install pg`: an optional package). */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const { PostgresStore } = await import('./postgres.js').catch((error: unknown) => {
    throw asMissing(error, ['pg'], 'the Postgres store');
  });
  return PostgresStore.open(options);
}
