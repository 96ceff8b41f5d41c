import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileValidator } from '../../src/tools/validate.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the generated meta-schema validators', () => {
  it('are what the installed ajv generates (run node scripts/meta-validators.mjs after upgrading ajv)', () => {
    const code =
      "import { metaValidatorSources } from './scripts/meta-validators-source.mjs'; process.stdout.write(JSON.stringify(metaValidatorSources()))";
    const expected = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' }),
    ) as Record<string, string>;
    expect(Object.keys(expected).sort()).toEqual(['meta-validators-07.ts', 'meta-validators-2020.ts']);
    for (const [file, text] of Object.entries(expected)) expect(readFileSync(`${root}src/tools/${file}`, 'utf8'), file).toBe(text);
  });

  it.each([
    ['2020-12', {}],
    ['draft-07', { $schema: 'http://json-schema.org/draft-07/schema#' }],
  ])('refuse a schema their meta-schema refuses (%s), with ajv’s own message', async (_dialect, dialect) => {
    await expect(compileValidator({ ...dialect, type: 'object', required: 'a' })).rejects.toMatchObject({
      code: 'config',
      message: expect.stringMatching(/^the parameters schema does not compile: schema is invalid: data\/required must be array/),
    });
    await expect(
      compileValidator({ ...dialect, type: 'object', properties: { n: { type: 'number', minimum: 'x' } } }),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/schema is invalid: data\/properties\/n\/minimum must be number/),
    });
    const ok = await compileValidator({ ...dialect, type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] });
    expect(ok({ n: '2' })).toEqual({ ok: true, value: { n: 2 } });
  });
});
