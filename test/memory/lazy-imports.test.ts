// Importing rein's core must stay fast and work without the optional SQLite package: the
// memory modules reach a SQLite driver only through the store's opener, when a memory is opened.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dir = fileURLToPath(new URL('../../src/memory/', import.meta.url));

describe('memory modules', () => {
  it('import no SQLite driver themselves, and open their file through openSqliteFile inside openMemory', () => {
    const offenders = readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .filter((name) =>
        /^import (?!type )[^;]*from '(better-sqlite3|node:sqlite)'|import\('(better-sqlite3|node:sqlite)'\)/m.test(
          readFileSync(join(dir, name), 'utf8'),
        ),
      );
    expect(offenders).toEqual([]);
    expect(readFileSync(join(dir, 'sqlite-memory.ts'), 'utf8')).toMatch(/export async function openMemory[\s\S]*openSqliteFile\(/);
  });
});
