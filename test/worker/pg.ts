/**
 * A fresh Postgres schema per test file (the store's, and the queue's and fleet's beside
 * it), all dropped in `dropSchemas`. Postgres: REIN_TEST_DATABASE_URL, else the local server.
 */
import pg from 'pg';

export const url = process.env.REIN_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

const made: string[] = [];

/** A schema name no other test file (or process) uses. */
export function freshSchema(tag: string): string {
  const schema = `rein_w_${tag}_${process.pid}_${made.length + 1}`;
  made.push(schema);
  return schema;
}

/** Drops every schema `freshSchema` made, with its queue and fleet schemas. */
export async function dropSchemas(): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    for (const schema of made.splice(0)) {
      for (const s of [schema, `${schema}_queue`, `${schema}_fleet`]) await admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    }
  } finally {
    await admin.end();
  }
}

/** One query on a short-lived client. */
export async function query<T extends pg.QueryResultRow>(text: string, values: unknown[] = [], on = url): Promise<T[]> {
  const client = new pg.Client({ connectionString: on });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const databases: string[] = [];

/** A database of its own (for the CLI, whose store is in the default schema); its URL. */
export async function freshDatabase(tag: string): Promise<string> {
  const name = `rein_w_${tag}_${process.pid}_${databases.length + 1}`;
  databases.push(name);
  await query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await query(`CREATE DATABASE "${name}"`);
  const at = new URL(url);
  at.pathname = `/${name}`;
  return at.href;
}

/** Drops every database `freshDatabase` made (closing what still connects to it). */
export async function dropDatabases(): Promise<void> {
  for (const name of databases.splice(0)) await query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
