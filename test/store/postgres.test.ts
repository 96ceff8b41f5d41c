// The Postgres store against the local server (`.ci/run` starts it when it is down). Each
// store of this file gets a schema of its own; every schema is dropped in afterAll.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres.js';
import { SCHEMA_VERSION } from '../../src/store/schema.js';
import { describeStoreConformance } from '../conformance/store.suite.js';
import { events, expectCode, json, newRun, runId, writerOf } from '../conformance/store-fixtures.js';

const url = process.env.REIN_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const schemas: string[] = [];
let latest = '';
const nextSchema = (): string => {
  latest = `rein_test_${process.pid}_${schemas.length + 1}`;
  schemas.push(latest);
  return latest;
};

const admin = new pg.Client({ connectionString: url });
beforeAll(async () => {
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(
      `Postgres is not reachable at ${url} (set REIN_TEST_DATABASE_URL, or start the server: .ci/run does): ${String(error)}`,
    );
  }
});
afterAll(async () => {
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
});

describeStoreConformance('postgres', {
  fresh: () => PostgresStore.open({ url, schema: nextSchema(), pool: { max: 4 } }),
  reopen: () => PostgresStore.open({ url, schema: latest, pool: { max: 4 } }),
  inlineSize: (store, id, seq) => (store as PostgresStore).inlineSize(id, seq),
});

describe('postgres store', () => {
  const open: PostgresStore[] = [];
  const store = async (schema = nextSchema()): Promise<PostgresStore> => {
    const s = await PostgresStore.open({ url, schema, pool: { max: 4 } });
    open.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it('refuses the zombie of two processes (two pools) racing on one run, every round', async () => {
    const first = await store();
    const second = await store(latest);
    const id = runId();
    await first.createRun(newRun(id));
    const zombie = await first.acquireLease(id);
    await first.append(id, zombie, events(id, 0, 2, 1));
    const epoch = await second.acquireLease(id);
    for (let seq = 2; seq < 32; seq += 2) {
      const [old, current] = await Promise.allSettled([
        first.append(id, zombie, events(id, seq, 2, 1)),
        second.append(id, epoch, events(id, seq, 2, 2)),
      ]);
      expect(old.status === 'rejected' && (old.reason as { code: string }).code).toBe('lease_lost');
      expect(current.status).toBe('fulfilled');
    }
    expect((await first.loadEvents(id)).map(writerOf)).toEqual([1, 1, ...Array(30).fill(2)]);
  });

  it('lets exactly one of two pools store each seq under one lease', async () => {
    const first = await store();
    const second = await store(latest);
    const id = runId();
    await first.createRun(newRun(id));
    const epoch = await first.acquireLease(id);
    for (let seq = 0; seq < 45; seq += 3) {
      const outcomes = await Promise.allSettled([
        first.append(id, epoch, events(id, seq, 3, 1)),
        second.append(id, epoch, events(id, seq, 3, 2)),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    }
    const log = await second.loadEvents(id);
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: 45 }, (_, i) => i));
    for (let seq = 0; seq < 45; seq += 3) expect(new Set(log.slice(seq, seq + 3).map(writerOf)).size).toBe(1);
  });

  it('maps a seq the unique key already holds to conflict', async () => {
    const s = await store();
    const id = runId();
    await s.createRun(newRun(id));
    // A row the run's event_count does not know of: only the primary key can stop the write.
    await admin.query(`INSERT INTO "${latest}".events (run_id, seq, type, at, data) VALUES ($1, 1, 'model_request', 0, '{}')`, [id]);
    await expectCode(s.append(id, 0, events(id, 0, 2)), 'conflict');
    expect((await s.getRun(id))?.eventCount).toBe(0);
    await s.append(id, 0, events(id, 0, 1));
    expect((await s.loadEvents(id))[0]).toEqual(json(events(id, 0, 1)[0]));
  });

  it('creates its schema once when many processes open it at once, and records schema_version', async () => {
    const schema = nextSchema();
    await Promise.all(Array.from({ length: 4 }, () => store(schema)));
    const { rows } = await admin.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
    await admin.query(`UPDATE "${schema}".meta SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION + 1)]);
    await expectCode(PostgresStore.open({ url, schema }), 'config');
  });

  it('refuses a schema name that is not a plain identifier', async () => {
    await expectCode(PostgresStore.open({ url, schema: 'rein"; DROP TABLE x; --' }), 'config');
  });

  it('reports an unreachable server as a transient store error', async () => {
    const error = await expectCode(
      PostgresStore.open({ url: 'postgres://postgres@127.0.0.1:1/test', schema: 'rein_unreachable' }),
      'store',
    );
    expect(error.kind).toBe('transient');
  });
});
