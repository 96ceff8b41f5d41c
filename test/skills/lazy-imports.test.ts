// Importing rein's core must stay fast: the skills modules load yaml only when a SKILL.md is parsed.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dir = fileURLToPath(new URL('../../src/skills/', import.meta.url));

describe('skills modules', () => {
  it('import yaml only dynamically', () => {
    const offenders = readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .filter((name) => /^import (?!type )[^;]*from 'yaml'/m.test(readFileSync(join(dir, name), 'utf8')));
    expect(offenders).toEqual([]);
    expect(readFileSync(join(dir, 'load.ts'), 'utf8')).toContain("await import('yaml')");
  });
});
