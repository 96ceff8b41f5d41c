// Importing rein's core must stay fast: the memory modules load better-sqlite3 only when a memory is opened.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dir = fileURLToPath(new URL('../../src/memory/', import.meta.url));

describe('memory modules', () => {
  it('import better-sqlite3 only as a type, and load it inside openMemory', () => {
    const offenders = readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .filter((name) => /^import (?!type )[^;]*from 'better-sqlite3'/m.test(readFileSync(join(dir, name), 'utf8')));
    expect(offenders).toEqual([]);
    expect(readFileSync(join(dir, 'sqlite-memory.ts'), 'utf8')).toContain("await import('better-sqlite3')");
  });
});
