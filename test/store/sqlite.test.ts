import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/schema.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { describeStoreConformance } from '../conformance/store.suite.js';
import { bigText, events, expectCode, json, newRun, runId, toolFinished } from '../conformance/store-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'rein-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
let latest = '';
const nextPath = (): string => join(dir, `store-${++files}`, 'rein.db');

describeStoreConformance('sqlite', {
  fresh: async () => new SqliteStore({ path: (latest = nextPath()) }),
  reopen: async () => new SqliteStore({ path: latest }),
  inlineSize: (store, id, seq) => (store as SqliteStore).inlineSize(id, seq),
});

describe('sqlite store', () => {
  const open: SqliteStore[] = [];
  const store = (options: ConstructorParameters<typeof SqliteStore>[0] = {}): SqliteStore => {
    const s = new SqliteStore({ path: nextPath(), ...options });
    open.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it('runs in WAL mode with synchronous=NORMAL, creating the folder of its file', () => {
    const s = store();
    expect(s.pragma('journal_mode')).toBe('wal');
    expect(s.pragma('synchronous')).toBe(1);
    expect(s.pragma('busy_timeout')).toBe(5000);
  });

  it("switches to synchronous=FULL for the duration of a 'full' append only", async () => {
    const seen: number[] = [];
    const s = store({ probeSynchronous: (level) => seen.push(level) });
    const id = runId();
    await s.createRun(newRun(id));
    const epoch = await s.acquireLease(id);
    await s.append(id, epoch, events(id, 0, 2));
    await s.append(id, epoch, events(id, 2, 1), { durability: 'full' });
    expect(s.pragma('synchronous')).toBe(1);
    await s.append(id, epoch, events(id, 3, 1));
    expect(seen).toEqual([1, 2, 1]);
  });

  it('goes back to synchronous=NORMAL when a full append is refused', async () => {
    const s = store();
    const id = runId();
    await s.createRun(newRun(id));
    await expectCode(s.append(id, 7, events(id, 0, 1), { durability: 'full' }), 'lease_lost');
    expect(s.pragma('synchronous')).toBe(1);
  });

  it('passes integrity_check after many appends, large ones included', async () => {
    const s = store({ blobThreshold: 4096 });
    const ids = Array.from({ length: 10 }, () => runId('many'));
    for (const id of ids) {
      await s.createRun(newRun(id));
      const epoch = await s.acquireLease(id);
      for (let seq = 0; seq < 60; seq += 6) await s.append(id, epoch, [...events(id, seq, 5), toolFinished(id, seq + 5, bigText(10_000))]);
    }
    expect(s.pragma('integrity_check')).toBe('ok');
    expect((await s.loadEvents(ids[3]!)).length).toBe(60);
  });

  it('records its schema_version and refuses a file from a newer rein', async () => {
    const s = store();
    const path = (s as unknown as { db: { name: string } }).db.name;
    await s.close();
    const raw = new Database(path);
    expect(raw.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe(String(SCHEMA_VERSION));
    raw.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION + 1));
    raw.close();
    expect(() => new SqliteStore({ path })).toThrow(expect.objectContaining({ code: 'config' }));
  });

  it('shares a file with a second connection that respects the lease', async () => {
    const first = store();
    const path = (first as unknown as { db: { name: string } }).db.name;
    const second = new SqliteStore({ path });
    open.push(second);
    const id = runId();
    await first.createRun(newRun(id));
    const zombie = await first.acquireLease(id);
    await first.append(id, zombie, events(id, 0, 3));
    const epoch = await second.acquireLease(id);
    await expectCode(first.append(id, zombie, events(id, 3, 1), { durability: 'full' }), 'lease_lost');
    await second.append(id, epoch, events(id, 3, 1));
    expect(await first.loadEvents(id)).toEqual(json(events(id, 0, 4)));
  });

  it('reports a busy file as a transient store error instead of waiting forever', async () => {
    const s = store({ busyTimeoutMs: 0 });
    const path = (s as unknown as { db: { name: string } }).db.name;
    const id = runId();
    await s.createRun(newRun(id));
    const blocker = new Database(path);
    try {
      blocker.exec('BEGIN IMMEDIATE');
      const error = await expectCode(s.append(id, 0, events(id, 0, 1)), 'store');
      expect(error.kind).toBe('transient');
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    await s.append(id, 0, events(id, 0, 1));
  });
});

describe('a damaged run log', () => {
  it('an event row that is not JSON fails the load with a store error naming the run and the seq', async () => {
    const path = nextPath();
    const s = new SqliteStore({ path });
    const id = runId();
    await s.createRun(newRun(id));
    const epoch = await s.acquireLease(id);
    await s.append(id, epoch, events(id, 0, 3));
    await s.close();
    const db = new Database(path);
    db.prepare('UPDATE events SET data = ? WHERE run_id = ? AND seq = 1').run('{"type":"state_chan', id);
    db.close();
    const reopened = new SqliteStore({ path });
    try {
      const error = await reopened.loadEvents(id).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'store', kind: 'fatal' });
      expect((error as Error).message).toMatch(new RegExp(`^run ${id}: the stored event at seq 1 is not JSON`));
      expect(((await reopened.loadEvents(id, 2).catch((e: unknown) => e)) as RunEventLike[]).length).toBe(1);
    } finally {
      await reopened.close();
    }
  });
});

type RunEventLike = { seq: number };
