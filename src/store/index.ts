/**
 * `rein/store`: the durable run log (DESIGN.md: a run is an event log). Explicit named
 * exports only (STYLE 11). Importing this entry loads neither better-sqlite3 nor pg: each
 * is imported by {@link openStore} when its store is chosen.
 */
export { openPostgresStore, openSqliteStore, openStore, resolveStoreLocation } from './open.js';
export type { OpenStoreOptions, StoreLocation } from './open.js';
export { MemoryRunStore } from './memory.js';
export type { MemoryRunStoreOptions } from './memory.js';
export { DEFAULT_BLOB_THRESHOLD } from './encode.js';
export { SCHEMA_VERSION } from './schema.js';
export type { SqliteStore, SqliteStoreOptions } from './sqlite.js';
export type { PostgresStore, PostgresStoreOptions } from './postgres.js';
export type { Durability, NewRun, RunFilter, RunRecord, RunStore } from './types.js';
