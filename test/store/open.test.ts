import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { maskStoreLocation, openStore, resolveStoreLocation } from '../../src/store/open.js';
import { events, expectCode, json, newRun, runId } from '../conformance/store-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'rein-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const url = process.env.REIN_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

describe('store location', () => {
  it('is .rein/rein.db under the working directory by default', () => {
    expect(resolveStoreLocation(undefined, {}, '/work/app')).toEqual({ kind: 'sqlite', path: '/work/app/.rein/rein.db' });
  });

  it('takes REIN_DATABASE_URL when no location is given, and a given location over it', () => {
    const env = { REIN_DATABASE_URL: 'postgres://u@db:5432/rein' };
    expect(resolveStoreLocation(undefined, env, '/w')).toEqual({ kind: 'postgres', url: 'postgres://u@db:5432/rein' });
    expect(resolveStoreLocation('runs.db', env, '/w')).toEqual({ kind: 'sqlite', path: '/w/runs.db' });
    expect(resolveStoreLocation(undefined, { REIN_DATABASE_URL: '' }, '/w')).toEqual({ kind: 'sqlite', path: '/w/.rein/rein.db' });
  });

  it('reads paths, file: URLs, :memory: and postgresql:// URLs', () => {
    expect(resolveStoreLocation('/abs/r.db', {}, '/w')).toEqual({ kind: 'sqlite', path: '/abs/r.db' });
    expect(resolveStoreLocation(pathToFileURL('/abs/r.db').href, {}, '/w')).toEqual({ kind: 'sqlite', path: '/abs/r.db' });
    expect(resolveStoreLocation(':memory:', {}, '/w')).toEqual({ kind: 'sqlite', path: ':memory:' });
    expect(resolveStoreLocation('postgresql://h/db', {}, '/w')).toEqual({ kind: 'postgres', url: 'postgresql://h/db' });
  });

  it('refuses another URL scheme without echoing its password', () => {
    expect(() => resolveStoreLocation('mysql://root:secret@h/db', {}, '/w')).toThrow(expect.objectContaining({ code: 'config' }));
    expect(() => resolveStoreLocation('mysql://root:secret@h/db', {}, '/w')).toThrow(expect.not.stringContaining('secret'));
  });
});

describe('maskStoreLocation', () => {
  it('hides the user and password of a URL, even one with an unescaped @, and a password parameter', () => {
    expect(maskStoreLocation('postgres://u:secretpw@db:5432/rein')).toBe('postgres://…@db:5432/rein');
    expect(maskStoreLocation('postgres://u:p@ss@db/rein')).toBe('postgres://…@db/rein');
    expect(maskStoreLocation('postgres://db/rein?user=u&password=secretpw&ssl=true')).toBe('postgres://db/rein?user=u&password=…&ssl=true');
  });

  it('leaves paths and URLs without credentials as they are', () => {
    expect(maskStoreLocation('.rein/rein.db')).toBe('.rein/rein.db');
    expect(maskStoreLocation('postgres://db:5432/rein')).toBe('postgres://db:5432/rein');
  });
});

describe('openStore', () => {
  it('opens a SQLite file, creating its folder, and keeps runs across opens', async () => {
    const first = await openStore(undefined, { cwd: join(dir, 'project'), env: {} });
    const id = runId();
    await first.createRun(newRun(id));
    await first.append(id, 0, events(id, 0, 3));
    await first.close();
    expect(existsSync(join(dir, 'project/.rein/rein.db'))).toBe(true);
    const again = await openStore(join(dir, 'project/.rein/rein.db'));
    try {
      expect(await again.loadEvents(id)).toEqual(json(events(id, 0, 3)));
    } finally {
      await again.close();
    }
  });

  it('opens Postgres from REIN_DATABASE_URL in the schema it is given', async () => {
    const schema = `rein_test_open_${process.pid}`;
    const store = await openStore(undefined, { env: { REIN_DATABASE_URL: url }, schema, blobThreshold: 10 });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const id = runId();
      await store.createRun(newRun(id));
      await store.append(id, 0, events(id, 0, 2));
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".payloads WHERE run_id = $1`, [id]);
      expect(rows[0].n).toBe(2);
    } finally {
      await store.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });

  it('reports a file it cannot create as a store error', async () => {
    // The folder's parent is a file. (Not a path under /proc: Node's recursive mkdir never returns there.)
    writeFileSync(join(dir, 'plain-file'), '');
    await expectCode(openStore(join(dir, 'plain-file', 'sub', 'x.db')), 'store');
  });
});

describe('store entry points', () => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url));

  /** Every module reached from `entry` through static, value (not type-only) imports. */
  function staticGraph(entry: string, seen = new Set<string>()): Set<string> {
    if (seen.has(entry)) return seen;
    seen.add(entry);
    if (!entry.startsWith(src)) return seen;
    const text = readFileSync(entry, 'utf8');
    for (const match of text.matchAll(/^(?:import|export)\s+(?!type\b)[^'";]*?from\s+'([^']+)'/gm)) {
      const spec = match[1]!;
      staticGraph(spec.startsWith('.') ? join(dirname(entry), spec).replace(/\.js$/, '.ts') : spec, seen);
    }
    return seen;
  }

  it('the core entry and rein/store load no SQLite driver nor pg until a store is opened', () => {
    for (const [entry, surely] of [
      ['index.ts', 'loop/agent.ts'],
      ['store/index.ts', 'store/memory.ts'],
    ] as const) {
      const reached = [...staticGraph(join(src, entry))].map((f) => (f.startsWith(src) ? relative(src, f) : f));
      expect(reached, `${entry} (the walk itself)`).toContain(surely);
      expect(reached, entry).not.toContain('better-sqlite3');
      expect(reached, entry).not.toContain('pg');
      expect(reached, entry).not.toContain('store/sqlite.ts');
      expect(reached, entry).not.toContain('node:sqlite');
      expect(reached, entry).not.toContain('store/postgres.ts');
    }
  });
});
