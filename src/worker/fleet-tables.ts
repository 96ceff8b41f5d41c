/**
 * The fleet's own tables, in a schema beside the store's (`<schema>_fleet`): the workers
 * and their heartbeats, which worker holds which run, and the fleet-wide model limits
 * (request slots and 429 holds). Every row a worker owns expires with its heartbeat, so a
 * dead worker can never wedge the fleet: no row is freed only by the worker that took it.
 * Times are the database's clock (`now_ms()`), never a worker's: machines' clocks differ.
 */
import type { Pool } from 'pg';
import { ReinError } from '../errors.js';

/** The schema of the fleet tables for a store in `schema`. */
export function fleetSchema(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,56}$/.test(schema))
    throw new ReinError('config', 'fatal', `the Postgres schema name ${JSON.stringify(schema)} must be lowercase letters, digits and _`);
  return `${schema}_fleet`;
}

/** The database's clock in epoch milliseconds, as SQL. */
export const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** Creates the fleet tables when missing, once even when many workers start at once. */
export async function ensureFleetTables(pool: Pool, schema: string): Promise<void> {
  const s = `"${fleetSchema(schema)}"`;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`rein-fleet:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.workers (
      id TEXT PRIMARY KEY,
      host TEXT NOT NULL,
      pid INTEGER NOT NULL,
      concurrency INTEGER NOT NULL,
      started_at BIGINT NOT NULL,
      heartbeat_at BIGINT NOT NULL,
      stopped_at BIGINT
    )`);
    // One row per run being driven: the primary key makes "held by two workers" impossible to record.
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.holders (
      run_id TEXT PRIMARY KEY,
      worker_id TEXT NOT NULL,
      epoch INTEGER NOT NULL,
      since BIGINT NOT NULL
    )`);
    await client.query(`CREATE INDEX IF NOT EXISTS holders_worker ON ${s}.holders (worker_id)`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.slots (
      key TEXT NOT NULL,
      slot INTEGER NOT NULL,
      worker_id TEXT NOT NULL,
      expires_at BIGINT NOT NULL,
      PRIMARY KEY (key, slot)
    )`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.holds (
      key TEXT PRIMARY KEY,
      until_ms BIGINT NOT NULL
    )`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new ReinError('store', 'fatal', `cannot set up the fleet tables (schema ${fleetSchema(schema)}): ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    client.release();
  }
}
