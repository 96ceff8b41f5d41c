import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/store/schema.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { describeStoreConformance } from '../conformance/store.suite.js';
import { bigText, events, expectCode, json, newRun, runId, toolFinished } from '../conformance/store-fixtures.js';
import { drivers, nodeHasSqlite, rawConnection } from './sqlite-drivers.js';

const dir = mkdtempSync(join(tmpdir(), 'rein-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
let latest = '';
const nextPath = (): string => join(dir, `store-${++files}`, 'rein.db');

for (const driver of drivers) {
  describeStoreConformance(`sqlite on ${driver}`, {
    fresh: async () => new SqliteStore({ path: (latest = nextPath()), driver }),
    reopen: async () => new SqliteStore({ path: latest, driver }),
    inlineSize: (store, id, seq) => (store as SqliteStore).inlineSize(id, seq),
  });

  describe(`sqlite store on ${driver}`, () => {
    const open: SqliteStore[] = [];
    const store = (options: ConstructorParameters<typeof SqliteStore>[0] = {}): SqliteStore => {
      const s = new SqliteStore({ path: nextPath(), driver, ...options });
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

    it('commits appends that arrive together in one transaction, each succeeding or failing alone', async () => {
      const seen: number[] = [];
      const s = store({ probeSynchronous: (level) => seen.push(level) });
      const [a, b, c] = [runId('a'), runId('b'), runId('c')];
      const epochs: number[] = [];
      for (const id of [a, b, c]) {
        await s.createRun(newRun(id));
        epochs.push(await s.acquireLease(id));
      }
      // Three runs append at once; c's lease is wrong, and one append asks for a full sync.
      const results = await Promise.allSettled([
        s.append(a, epochs[0]!, events(a, 0, 2)),
        s.append(b, epochs[1]!, events(b, 0, 3), { durability: 'full' }),
        s.append(c, epochs[2]! + 1, events(c, 0, 1)),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
      expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'lease_lost' });
      // One commit, under the full sync one of them needed.
      expect(seen).toEqual([2, 2]);
      expect(s.pragma('synchronous')).toBe(1);
      expect((await s.loadEvents(a)).map((e) => e.seq)).toEqual([0, 1]);
      expect((await s.loadEvents(b)).map((e) => e.seq)).toEqual([0, 1, 2]);
      expect(await s.loadEvents(c)).toEqual([]);
      expect((await s.getRun(c))?.eventCount).toBe(0);
    });

    it('an append not yet committed is seen by the next read of the same store', async () => {
      const s = store();
      const id = runId();
      await s.createRun(newRun(id));
      const epoch = await s.acquireLease(id);
      const pending = s.append(id, epoch, events(id, 0, 2));
      expect((await s.loadEvents(id)).map((e) => e.seq)).toEqual([0, 1]);
      await pending;
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
        for (let seq = 0; seq < 60; seq += 6)
          await s.append(id, epoch, [...events(id, seq, 5), toolFinished(id, seq + 5, bigText(10_000))]);
      }
      expect(s.pragma('integrity_check')).toBe('ok');
      expect((await s.loadEvents(ids[3]!)).length).toBe(60);
    });

    it('stores a batch longer than one insert statement holds, large events among them, in seq order', async () => {
      const s = store({ blobThreshold: 4096 });
      const id = runId();
      await s.createRun(newRun(id));
      const epoch = await s.acquireLease(id);
      const batch = [
        ...events(id, 0, 20),
        toolFinished(id, 20, bigText(10_000)),
        ...events(id, 21, 16),
        toolFinished(id, 37, bigText(5_000)),
      ];
      await s.append(id, epoch, batch);
      expect(await s.loadEvents(id)).toEqual(batch);
      expect(await s.inlineSize(id, 20)).toBe(0);
      expect((await s.getRun(id))?.eventCount).toBe(38);
      await s.append(id, epoch, events(id, 38, 3));
      expect((await s.loadEvents(id, 36)).map((e) => e.seq)).toEqual([36, 37, 38, 39, 40]);
    });

    it('a refused append alone in its commit leaves nothing behind, and the next one goes in', async () => {
      const s = store();
      const id = runId();
      await s.createRun(newRun(id));
      const epoch = await s.acquireLease(id);
      await s.append(id, epoch, events(id, 0, 2));
      // A seq already taken: refused, nothing of the batch written.
      await expectCode(s.append(id, epoch, events(id, 1, 3)), 'conflict');
      expect((await s.loadEvents(id)).map((e) => e.seq)).toEqual([0, 1]);
      expect((await s.getRun(id))?.eventCount).toBe(2);
      await s.append(id, epoch, events(id, 2, 2));
      expect((await s.loadEvents(id)).map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    });

    it('records its schema_version and refuses a file from a newer rein', async () => {
      const s = store();
      const path = s.path;
      await s.close();
      const raw = rawConnection(path, driver);
      expect(raw.prepare("SELECT value FROM meta WHERE key = 'schema_version'").value()).toBe(String(SCHEMA_VERSION));
      raw.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION + 1));
      raw.close();
      expect(() => new SqliteStore({ path, driver })).toThrow(expect.objectContaining({ code: 'config' }));
    });

    it('takes a file of schema version 1 to the current one on open, its runs kept, children listed through the new index', async () => {
      const s = store();
      const path = s.path;
      const parent = runId();
      const child = runId();
      await s.createRun(newRun(parent));
      await s.createRun(newRun(child, { parentRunId: parent }));
      await s.close();
      // As rein wrote it before version 2: without the index by parent.
      const raw = rawConnection(path, driver);
      raw.prepare('DROP INDEX runs_parent').run();
      raw.prepare("UPDATE meta SET value = '1' WHERE key = 'schema_version'").run();
      raw.close();
      const reopened = new SqliteStore({ path, driver });
      open.push(reopened);
      expect((await reopened.listRuns({ parentRunId: parent })).map((r) => r.id)).toEqual([child]);
      const check = rawConnection(path, driver);
      expect(check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").value()).toBe(String(SCHEMA_VERSION));
      expect(check.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'runs_parent'").value()).toBe(1);
      check.close();
    });

    it('shares a file with a second connection that respects the lease', async () => {
      const first = store();
      const path = first.path;
      const second = new SqliteStore({ path, driver });
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
      const path = s.path;
      const id = runId();
      await s.createRun(newRun(id));
      const blocker = rawConnection(path, driver);
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
}

describe('sqlite drivers', () => {
  it('this Node opens SQLite files with the drivers it can have', () => {
    // better-sqlite3 is a dev dependency: a development install has it built for the Node that
    // installed it; node:sqlite is there from Node 22.13. At least one runs every test above.
    expect(drivers.length).toBeGreaterThan(0);
    expect(drivers.includes('node:sqlite')).toBe(nodeHasSqlite);
  });

  it('with no driver named, a store opens on better-sqlite3 when it loads, else on node:sqlite', async () => {
    const s = new SqliteStore({ path: nextPath() });
    try {
      expect(s.driver).toBe(drivers[0]);
    } finally {
      await s.close();
    }
    // Installed but built for another Node (CI's Node 24 run over a Node 20 install): named
    // explicitly, it says how to fix it; unnamed, the store above fell back to node:sqlite.
    if (!drivers.includes('better-sqlite3')) {
      createRequire(import.meta.url).resolve('better-sqlite3');
      expect(() => new SqliteStore({ path: nextPath(), driver: 'better-sqlite3' })).toThrow(/npm rebuild better-sqlite3/);
    }
  });

  it('REIN_SQLITE_DRIVER names the driver, and a value that is none is refused', async () => {
    const saved = process.env.REIN_SQLITE_DRIVER;
    try {
      process.env.REIN_SQLITE_DRIVER = drivers.at(-1);
      const s = new SqliteStore({ path: nextPath() });
      expect(s.driver).toBe(drivers.at(-1));
      await s.close();
      process.env.REIN_SQLITE_DRIVER = 'sqlite3';
      expect(() => new SqliteStore({ path: nextPath() })).toThrow(
        /REIN_SQLITE_DRIVER is "sqlite3": use better-sqlite3, node:sqlite or auto/,
      );
    } finally {
      if (saved === undefined) delete process.env.REIN_SQLITE_DRIVER;
      else process.env.REIN_SQLITE_DRIVER = saved;
    }
  });
});

// One file, both drivers: what one writes the other reads and continues. Both drivers in
// this process (a better-sqlite3 built for this Node, on Node ≥ 22.13), or the other one in
// `REIN_TEST_OTHER_NODE`, a second Node binary (CI gives the Node 20 run its Node 24 and
// the Node 24 run its Node 20), which opens the file with whichever driver it has.
const otherNode = process.env.REIN_TEST_OTHER_NODE;
const crossDriver = drivers.length === 2 || (drivers.length === 1 && otherNode !== undefined && otherNode !== '');

/** Continues run `id` in `path` on the driver that is not `mine`: reads it, appends `more`, creates run `id`-2. */
function continueElsewhere(path: string, id: string, mine: string, more: unknown[]): { driver: string; before: number; after: number } {
  const code = `
    const { SqliteStore } = await import(${JSON.stringify(new URL('../../dist/store/sqlite.js', import.meta.url).href)});
    const [path, id, mine, more] = JSON.parse(process.argv[1]);
    const store = new SqliteStore({ path, blobThreshold: 1000, ...(mine === 'better-sqlite3' ? { driver: 'node:sqlite' } : {}) });
    const before = (await store.loadEvents(id)).length;
    const epoch = await store.acquireLease(id);
    await store.append(id, epoch, more);
    await store.createRun({ id: id + '-2', model: 'm', configHash: 'h' });
    const after = (await store.loadEvents(id)).length;
    console.log(JSON.stringify({ driver: store.driver, before, after }));
    await store.close();`;
  const args = ['--input-type=module', '-e', code, JSON.stringify([path, id, mine, more])];
  if (drivers.length === 2) {
    // Both here: the child is this Node, told to use the other driver.
    const other = drivers.find((d) => d !== mine)!;
    return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', env: { ...process.env, REIN_SQLITE_DRIVER: other } })) as {
      driver: string;
      before: number;
      after: number;
    };
  }
  const env = { ...process.env };
  delete env.REIN_SQLITE_DRIVER;
  return JSON.parse(execFileSync(otherNode!, args, { encoding: 'utf8', env })) as { driver: string; before: number; after: number };
}

if (crossDriver) {
  describe('one SQLite file, both drivers', () => {
    for (const mine of drivers) {
      it(`a run written on ${mine} is read and continued on the other driver, then read back here`, async () => {
        const path = nextPath();
        const id = runId('shared');
        const first = new SqliteStore({ path, driver: mine, blobThreshold: 1000 });
        await first.createRun(newRun(id));
        const epoch = await first.acquireLease(id);
        await first.append(id, epoch, [...events(id, 0, 2), toolFinished(id, 2, bigText(5000))]);
        await first.close();
        const more = [toolFinished(id, 3, bigText(4000)), ...events(id, 4, 1)];
        const seen = continueElsewhere(path, id, mine, json(more));
        expect(seen).toEqual({ driver: mine === 'better-sqlite3' ? 'node:sqlite' : 'better-sqlite3', before: 3, after: 5 });
        const back = new SqliteStore({ path, driver: mine, blobThreshold: 1000 });
        try {
          expect(await back.loadEvents(id)).toEqual(json([...events(id, 0, 2), toolFinished(id, 2, bigText(5000)), ...more]));
          expect((await back.getRun(`${id}-2`))?.model).toBe('m');
          expect(back.pragma('integrity_check')).toBe('ok');
        } finally {
          await back.close();
        }
      });
    }
  });
}

describe('a damaged run log', () => {
  it('an event row that is not JSON fails the load with a store error naming the run and the seq', async () => {
    const path = nextPath();
    const s = new SqliteStore({ path });
    const id = runId();
    await s.createRun(newRun(id));
    const epoch = await s.acquireLease(id);
    await s.append(id, epoch, events(id, 0, 3));
    await s.close();
    const db = rawConnection(path, drivers[0]!);
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
