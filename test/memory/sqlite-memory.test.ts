import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ftsQuery } from '../../src/memory/query.js';
import { openMemory, type SqliteMemory } from '../../src/memory/sqlite-memory.js';

const dirs: string[] = [];
const open: SqliteMemory[] = [];
afterEach(async () => {
  for (const memory of open.splice(0)) memory.close();
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rein-memory-'));
  dirs.push(dir);
  return dir;
}

async function memoryAt(options: Parameters<typeof openMemory>[0]): Promise<SqliteMemory> {
  const memory = await openMemory(options);
  open.push(memory);
  return memory;
}

const texts = (hits: Array<{ text: string }>) => hits.map((h) => h.text);

describe('the FTS5 query builder', () => {
  it('quotes every word and ORs them, so no user text is FTS5 syntax', () => {
    expect(ftsQuery('deploy AND staging NOT prod')).toBe('"deploy" OR "staging" OR "prod"');
    expect(ftsQuery('NEAR(a b) col:x "quoted" ^start prefix* -minus')).toBe(
      '"near" OR "b" OR "col" OR "x" OR "quoted" OR "start" OR "prefix" OR "minus"',
    );
    expect(ftsQuery('Café naïve 東京 tokyo tokyo')).toBe('"café" OR "naïve" OR "東京" OR "tokyo"');
  });

  it('has no query for empty, punctuation-only or stop-word-only text', () => {
    for (const text of ['', '   ', '"*^():-', '?!', 'what is it', 'and or not']) expect(ftsQuery(text)).toBeUndefined();
  });

  it('caps the number of words', () => {
    const many = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
    expect(ftsQuery(many)!.split(' OR ')).toHaveLength(32);
  });
});

describe('SQLite FTS5 memory', () => {
  it('ranks the most relevant memory first (bm25) and returns only matching ones', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    memory.remember('The staging deploy needs the VPN; deploy with make deploy-staging.', { tags: ['deploy'] });
    memory.remember('Lunch is at noon on Fridays.');
    memory.remember('Production deploys happen on Tuesdays after the release review.');
    memory.remember('The database migrations live in db/migrations.');
    const hits = await memory.retrieve('how do I deploy to staging?', 5);
    expect(texts(hits)).toEqual([
      'The staging deploy needs the VPN; deploy with make deploy-staging.',
      'Production deploys happen on Tuesdays after the release review.',
    ]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    expect(hits[0]).toMatchObject({ id: expect.stringMatching(/^\d+$/), tags: ['deploy'], createdAt: expect.any(Number) });
    expect(texts(await memory.retrieve('migrations', 5))).toEqual(['The database migrations live in db/migrations.']);
    expect(await memory.retrieve('kubernetes', 5)).toEqual([]);
  });

  it('stems words (porter) and ignores accents and case', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    memory.remember('We are Migrating the billing service to the café cluster.');
    expect(await memory.retrieve('migrated billing', 3)).toHaveLength(1);
    expect(await memory.retrieve('CAFE', 3)).toHaveLength(1);
  });

  it('finds memories by their tags', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    memory.remember('Ask Dana before touching the invoices table.', { tags: ['Billing Team', 'owners'] });
    const [hit] = await memory.retrieve('billing-team owners', 3);
    expect(hit).toMatchObject({ text: 'Ask Dana before touching the invoices table.', tags: ['billing-team', 'owners'] });
  });

  it('special characters in queries are searched as words, never parsed: nothing throws', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    memory.remember('Use "double quotes" in SQL identifiers, e.g. "user".');
    memory.remember('C++ and C# projects build with make.');
    for (const query of [
      '"',
      '""',
      'AND',
      'OR OR',
      'NOT',
      'a:b',
      '*',
      'NEAR(',
      ')',
      '^',
      'user"',
      '"user',
      "'; DROP TABLE memories; --",
      '\u0000',
      '\u{1F600}',
      'x'.repeat(5000),
    ]) {
      await expect(memory.retrieve(query, 5)).resolves.toBeInstanceOf(Array);
    }
    expect(texts(await memory.retrieve('"user"', 5))).toEqual(['Use "double quotes" in SQL identifiers, e.g. "user".']);
    expect(texts(await memory.retrieve('C++ projects?', 5))).toEqual(['C++ and C# projects build with make.']);
    expect(memory.count()).toBe(2);
  });

  it('empty or odd queries and non-positive k answer []', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    memory.remember('Something to find.');
    expect(await memory.retrieve('', 5)).toEqual([]);
    expect(await memory.retrieve('?!', 5)).toEqual([]);
    expect(await memory.retrieve('something', 0)).toEqual([]);
    expect(await memory.retrieve('something', -3)).toEqual([]);
    expect(await memory.retrieve('something', Number.NaN)).toEqual([]);
    expect(await memory.retrieve('something', 2.7)).toHaveLength(1);
  });

  it('k limits the answer', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    for (let i = 0; i < 10; i++) memory.remember(`note ${i} about caching`);
    expect(await memory.retrieve('caching', 3)).toHaveLength(3);
    expect(await memory.retrieve('caching', 1000)).toHaveLength(10);
  });

  it('two projects in one file do not see each other', async () => {
    const dir = await tempDir();
    const path = join(dir, 'memory.db');
    const a = await memoryAt({ path, project: 'project-a' });
    const b = await memoryAt({ path, project: 'project-b' });
    const fromA = a.remember('The API key lives in the vault under team-a.');
    b.remember('The API key lives in the vault under team-b.');
    expect(texts(await a.retrieve('api key vault', 5))).toEqual(['The API key lives in the vault under team-a.']);
    expect(texts(await b.retrieve('api key vault', 5))).toEqual(['The API key lives in the vault under team-b.']);
    expect(b.forget(fromA.id)).toBe(false);
    expect(a.count()).toBe(1);
    expect(texts(a.recent(5))).toEqual(['The API key lives in the vault under team-a.']);
  });

  it('the same text in the same project is one memory; its tags are merged', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    const first = memory.remember('Tests run with vitest.', { tags: ['tests'] });
    const again = memory.remember('  Tests run with vitest.  ', { tags: ['tooling', 'tests'] });
    expect(first.created).toBe(true);
    expect(again).toEqual({ id: first.id, created: false });
    expect(memory.count()).toBe(1);
    expect((await memory.retrieve('tooling', 1))[0]).toMatchObject({ id: first.id, tags: ['tests', 'tooling'] });
  });

  it('forget deletes from the index too; ids are not reused', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    const old = memory.remember('Old fact about queues.');
    expect(memory.forget(old.id)).toBe(true);
    expect(memory.forget(old.id)).toBe(false);
    expect(memory.forget('not-a-number')).toBe(false);
    expect(await memory.retrieve('queues', 5)).toEqual([]);
    const fresh = memory.remember('New fact about queues.');
    expect(Number(fresh.id)).toBeGreaterThan(Number(old.id));
  });

  it('refuses empty and over-long text', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    expect(() => memory.remember('   ')).toThrow(expect.objectContaining({ code: 'invalid_arguments' }));
    expect(() => memory.remember('x'.repeat(10_001))).toThrow(/at most 10000 characters/);
  });

  it('persists across reopen, in WAL mode, creating the folder', async () => {
    const dir = await tempDir();
    const path = join(dir, 'nested', 'memory.db');
    const first = await openMemory({ path, project: 'p' });
    first.remember('Persisted across processes.', { source: 'run r1' });
    first.close();
    first.close(); // closing twice is harmless
    const second = await memoryAt({ path, project: 'p' });
    const [hit] = await second.retrieve('persisted', 1);
    expect(hit).toMatchObject({ text: 'Persisted across processes.', source: 'run r1' });
    expect((await stat(path)).isFile()).toBe(true);
    const mode = (second as unknown as { db: { pragma(s: string, o: object): unknown } }).db.pragma('journal_mode', { simple: true });
    expect(mode).toBe('wal');
  });

  it('defaults: .rein/memory.db under cwd, scoped to the repository root', async () => {
    const dir = await tempDir();
    const repo = join(dir, 'repo');
    await mkdir(join(repo, '.git'), { recursive: true });
    await mkdir(join(repo, 'sub'), { recursive: true });
    const memory = await memoryAt({ cwd: join(repo, 'sub') });
    expect(memory.project).toBe(repo);
    expect((await stat(join(repo, 'sub', '.rein', 'memory.db'))).isFile()).toBe(true);
    // Outside a repository the working directory is the project.
    const loose = await memoryAt({ cwd: dir, path: ':memory:' });
    expect(loose.project).toBe(dir);
  });

  it('an aborted retrieval rejects with aborted', async () => {
    const memory = await memoryAt({ path: ':memory:', project: 'p' });
    const controller = new AbortController();
    controller.abort();
    await expect(memory.retrieve('x', 1, { signal: controller.signal })).rejects.toMatchObject({ code: 'aborted' });
  });

  it('refuses a file written by a newer schema', async () => {
    const dir = await tempDir();
    const path = join(dir, 'memory.db');
    const memory = await openMemory({ path, project: 'p' });
    (memory as unknown as { db: { pragma(s: string): unknown } }).db.pragma('user_version = 99');
    memory.close();
    await expect(openMemory({ path, project: 'p' })).rejects.toThrow(/newer rein/);
  });
});
