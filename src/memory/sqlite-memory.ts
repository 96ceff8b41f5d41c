/**
 * The built-in memory: one SQLite file (WAL) with an FTS5 index ranked by bm25, scoped
 * per project, so memory and retrieval work with no service to run. The SQLite driver
 * (better-sqlite3, else Node's built-in `node:sqlite`) is loaded only when a memory is opened.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { ReinError } from '../errors.js';
import { findRepoRoot } from '../util/repo-root.js';
import type { SqliteConnection, SqliteDriverName, SqliteStatement } from '../store/sqlite-driver.js';
import { openSqliteFile, useWal } from '../store/sqlite-file.js';
import { ftsQuery } from './query.js';
import type { MemorySnippet, MemoryStore, RememberOptions, RememberResult, RetrieveOptions } from './types.js';

/** The memory file used when none is given, relative to the working directory. */
export const DEFAULT_MEMORY_PATH = '.rein/memory.db';
/** The longest text one memory may hold: memories are notes, not documents. */
export const MAX_MEMORY_CHARS = 10_000;
/** The most snippets one query answers. */
export const MAX_RETRIEVE = 100;

const SCHEMA_VERSION = 1;

// External-content FTS5 over `memories`, kept in step by triggers. The porter stemmer
// lets "deploys" find "deploy"; remove_diacritics lets "cafe" find "café".
const SCHEMA = `
CREATE TABLE IF NOT EXISTS memories (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project TEXT NOT NULL,
  text TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '',
  source TEXT,
  created_at INTEGER NOT NULL,
  UNIQUE (project, text)
);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
  text, tags, content='memories', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
  INSERT INTO memories_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
END;
`;

/** Options of {@link openMemory}. */
export interface OpenMemoryOptions {
  /** The database file (its folder is created), or `:memory:`. Default `.rein/memory.db` under `cwd`. */
  path?: string;
  /** The scope key: memories of one project are invisible to another. Default: the repository root of `cwd` (else `cwd`). */
  project?: string;
  /** What a relative `path` and the default project are resolved against (default `process.cwd()`). */
  cwd?: string;
  /** How long a write waits for another connection's lock (ms, default 5000). */
  busyTimeoutMs?: number;
  /** The SQLite driver, as for the run store (`SqliteStoreOptions.driver`); default: better-sqlite3 if it loads, else `node:sqlite`. */
  driver?: SqliteDriverName;
}

interface Row {
  id: number;
  text: string;
  tags: string;
  source: string | null;
  created_at: number;
  rank?: number;
}

type Stmt = SqliteStatement;

/**
 * Opens (creating when missing) the memory of a project.
 *
 * @example
 * const memory = await openMemory();                 // .rein/memory.db, scoped to this repository
 * memory.remember('The staging deploy needs VPN access', { tags: ['deploy'] });
 * const hits = await memory.retrieve('how do I deploy to staging?', 3);
 * memory.close();
 */
export async function openMemory(options: OpenMemoryOptions = {}): Promise<SqliteMemory> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const chosen = options.path ?? DEFAULT_MEMORY_PATH;
  const path = chosen === ':memory:' || isAbsolute(chosen) ? chosen : join(cwd, chosen);
  const project = options.project ?? findRepoRoot(cwd) ?? cwd;
  let db: SqliteConnection;
  try {
    db = openSqliteFile(path, 'memory', {
      busyTimeoutMs: options.busyTimeoutMs,
      ...(options.driver === undefined ? {} : { driver: options.driver }),
    });
  } catch (error) {
    if (error instanceof ReinError) throw error;
    throw new ReinError('store', 'fatal', `cannot open the memory file ${path}: ${firstLine(error)}`, { cause: error });
  }
  try {
    return new SqliteMemory(db, project, path);
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * A {@link MemoryStore} in SQLite, scoped to one project. Open it with {@link openMemory}.
 * Writes and searches are synchronous underneath (both drivers are); `retrieve` is async
 * only to fit {@link MemoryRetriever}.
 */
export class SqliteMemory implements MemoryStore {
  /** The scope key of this memory's project. */
  readonly project: string;
  private readonly db: SqliteConnection;
  private readonly s: Record<'insert' | 'byText' | 'setTags' | 'remove' | 'search' | 'recent' | 'count', Stmt>;

  /** Sets up the schema on `db` (an open connection to the file at `path`) and scopes to `project`. */
  constructor(db: SqliteConnection, project: string, path: string) {
    this.db = db;
    this.project = project;
    useWal(db, path);
    migrate(db);
    const p = (sql: string): Stmt => db.prepare(sql);
    this.s = {
      insert: p(
        'INSERT INTO memories (project, text, tags, source, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (project, text) DO NOTHING RETURNING id',
      ),
      byText: p('SELECT id, tags FROM memories WHERE project = ? AND text = ?'),
      setTags: p('UPDATE memories SET tags = ? WHERE id = ?'),
      remove: p('DELETE FROM memories WHERE id = ? AND project = ?'),
      // bm25 is lower-is-better; the id breaks ties so equal scores come out in a stable order.
      search: p(`SELECT m.id, m.text, m.tags, m.source, m.created_at, bm25(memories_fts) AS rank
        FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
        WHERE memories_fts MATCH ? AND m.project = ?
        ORDER BY rank, m.id DESC LIMIT ?`),
      recent: p('SELECT id, text, tags, source, created_at FROM memories WHERE project = ? ORDER BY id DESC LIMIT ?'),
      count: p('SELECT count(*) AS n FROM memories WHERE project = ?'),
    };
  }

  /**
   * Remembers `text` in this project. The same text twice is one memory (its tags are
   * merged), so remembering is idempotent. Throws an `invalid_arguments` {@link ReinError}
   * for empty or over-long text.
   */
  remember(text: string, options: RememberOptions = {}): RememberResult {
    const clean = text.trim();
    if (clean === '') throw new ReinError('invalid_arguments', 'correctable', 'nothing to remember: the text is empty');
    if (clean.length > MAX_MEMORY_CHARS) {
      throw new ReinError(
        'invalid_arguments',
        'correctable',
        `a memory holds at most ${MAX_MEMORY_CHARS} characters (got ${clean.length}): remember a shorter summary`,
      );
    }
    const tags = normalizeTags(options.tags ?? []);
    return this.db.immediate((): RememberResult => {
      const inserted = this.s.insert.get(this.project, clean, tags.join(' '), options.source ?? null, Date.now()) as
        | { id: number }
        | undefined;
      if (inserted) return { id: String(inserted.id), created: true };
      const existing = this.s.byText.get(this.project, clean) as { id: number; tags: string };
      const merged = normalizeTags([...splitTags(existing.tags), ...tags]);
      if (merged.join(' ') !== existing.tags) this.s.setTags.run(merged.join(' '), existing.id);
      return { id: String(existing.id), created: false };
    });
  }

  /** Deletes the memory `id` of this project; answers whether it existed. Ids are never reused. */
  forget(id: string): boolean {
    const n = Number(String(id).trim());
    if (!Number.isSafeInteger(n)) return false;
    return this.s.remove.run(n, this.project).changes > 0;
  }

  /** The `k` memories of this project most relevant to `query`, best first; `[]` for a query with no searchable word. */
  search(query: string, k: number): MemorySnippet[] {
    const limit = Math.min(MAX_RETRIEVE, Math.floor(k));
    const match = ftsQuery(query);
    if (match === undefined || !(limit > 0)) return [];
    return (this.s.search.all(match, this.project, limit) as Row[]).map(toSnippet);
  }

  /** {@link search} as a {@link MemoryRetriever}: what context assembly calls each turn. */
  async retrieve(query: string, k: number, options: RetrieveOptions = {}): Promise<MemorySnippet[]> {
    if (options.signal?.aborted) throw new ReinError('aborted', 'fatal', 'memory retrieval was aborted', { cause: options.signal.reason });
    return this.search(query, k);
  }

  /** The `k` most recently remembered memories of this project, newest first (score 0). */
  recent(k: number): MemorySnippet[] {
    const limit = Math.min(MAX_RETRIEVE, Math.floor(k));
    if (!(limit > 0)) return [];
    return (this.s.recent.all(this.project, limit) as Row[]).map(toSnippet);
  }

  /** How many memories this project has. */
  count(): number {
    return (this.s.count.get(this.project) as { n: number }).n;
  }

  /** Closes the database; later calls fail. Closing twice is harmless. */
  close(): void {
    this.db.close();
  }
}

function migrate(db: SqliteConnection): void {
  const version = db.pragma('user_version') as number;
  if (version > SCHEMA_VERSION) {
    throw new ReinError(
      'store',
      'fatal',
      `the memory file was written by a newer rein (schema ${version}, this one knows ${SCHEMA_VERSION}): upgrade rein`,
    );
  }
  if (version === SCHEMA_VERSION) return;
  db.immediate(() => {
    db.exec(SCHEMA);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
}

function toSnippet(row: Row): MemorySnippet {
  const snippet: MemorySnippet = {
    id: String(row.id),
    text: row.text,
    score: row.rank === undefined ? 0 : -row.rank,
    createdAt: row.created_at,
  };
  if (row.source !== null) snippet.source = row.source;
  const tags = splitTags(row.tags);
  if (tags.length > 0) snippet.tags = tags;
  return snippet;
}

/** Tags as words: trimmed, lowercased, inner spaces as hyphens, each once. */
function normalizeTags(tags: readonly string[]): string[] {
  const out = new Set<string>();
  for (const tag of tags) {
    const clean = String(tag).trim().toLowerCase().replace(/\s+/g, '-');
    if (clean !== '') out.add(clean);
  }
  return [...out];
}

function splitTags(tags: string): string[] {
  return tags === '' ? [] : tags.split(' ');
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0] ?? '';
}
