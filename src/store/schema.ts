/**
 * The one schema of the SQL stores, in both dialects side by side so they stay the same.
 * `schema_version` in the `meta` table records which migrations a database has had;
 * every open applies the missing ones and refuses a database written by a newer rein.
 *
 * - `runs`: one row per run; `lease_epoch` and `event_count` make every write conditional
 *   (only the lease holder, only the next seq).
 * - `events`: one row per stored event, primary key (run_id, seq): two writers can never
 *   both store a seq, the last line of defence behind the conditional update.
 * - `payloads`: the JSON of events too large for the events row (tool output, images), so
 *   scanning and listing stay fast; `events.data` is NULL for those.
 */
import { ReinError } from '../errors.js';

/** The schema version this rein writes. */
export const SCHEMA_VERSION = 2;

/** Migrations by version: element `v - 1` takes a database from version v - 1 to v. `prefix` qualifies table names (a Postgres schema). */
export function migrations(dialect: 'sqlite' | 'postgres', prefix = ''): string[][] {
  const big = dialect === 'sqlite' ? 'INTEGER' : 'BIGINT';
  // Index names take no schema prefix: Postgres puts an index in its table's schema.
  // WITHOUT ROWID clusters events by (run_id, seq) in SQLite, so a run's log is one range read.
  const clustered = dialect === 'sqlite' ? ' WITHOUT ROWID' : '';
  const t = (name: string): string => `${prefix}${name}`;
  return [
    [
      `CREATE TABLE ${t('runs')} (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        reason TEXT,
        model TEXT NOT NULL,
        config TEXT NOT NULL,
        config_hash TEXT NOT NULL,
        parent_run_id TEXT,
        created_at ${big} NOT NULL,
        updated_at ${big} NOT NULL,
        totals TEXT,
        lease_epoch INTEGER NOT NULL DEFAULT 0,
        event_count INTEGER NOT NULL DEFAULT 0
      )`,
      `CREATE INDEX runs_newest ON ${t('runs')} (created_at DESC, id DESC)`,
      `CREATE INDEX runs_status_newest ON ${t('runs')} (status, created_at DESC, id DESC)`,
      `CREATE TABLE ${t('events')} (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        at ${big} NOT NULL,
        data TEXT,
        PRIMARY KEY (run_id, seq)
      )${clustered}`,
      `CREATE TABLE ${t('payloads')} (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      )${clustered}`,
    ],
    // 2: a run's children found through an index (the run viewer and `rein show` read trees).
    [`CREATE INDEX runs_parent ON ${t('runs')} (parent_run_id, created_at DESC, id DESC)`],
  ];
}

/** The `meta` table that holds `schema_version`. */
export function metaTable(prefix = ''): string {
  return `CREATE TABLE IF NOT EXISTS ${prefix}meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`;
}

/** Refuses a database from a newer rein, whose layout this one cannot know. */
export function checkVersion(found: number, where: string): void {
  if (!Number.isSafeInteger(found) || found < 0 || found > SCHEMA_VERSION) {
    throw new ReinError(
      'config',
      'fatal',
      `${where} has schema_version ${found}, this rein knows up to ${SCHEMA_VERSION}: upgrade rein, or point it at another database`,
    );
  }
}
