import { describe, expect, it } from 'vitest';
import { compileValidator, validateArguments } from '../../src/tools/validate.js';

const schema = {
  type: 'object',
  properties: {
    timeout: { type: 'integer' },
    sides: { type: 'integer', minimum: 1, default: 6 },
    mode: { type: 'string', enum: ['fast', 'slow'] },
    verbose: { type: 'boolean' },
    items: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] },
    },
  },
  additionalProperties: false,
};

async function errorsOf(s: Record<string, unknown>, args: Record<string, unknown>): Promise<string[]> {
  const result = await validateArguments(s, args);
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.errors;
}

describe('validateArguments', () => {
  it('coerces strings to numbers and booleans and fills defaults', async () => {
    const result = await validateArguments(schema, { timeout: '3', verbose: 'true' });
    expect(result).toEqual({ ok: true, value: { timeout: 3, verbose: true, sides: 6 } });
  });

  it('does not mutate the caller object unless asked to', async () => {
    const args = { timeout: '3' };
    await validateArguments(schema, args);
    expect(args).toEqual({ timeout: '3' });
    await validateArguments(schema, args, { inPlace: true });
    expect(args).toEqual({ timeout: 3, sides: 6 });
  });

  it('names the parameter, the expected type and what arrived', async () => {
    expect(await errorsOf(schema, { timeout: '30s' })).toEqual(['parameter "timeout" expects an integer, got the string "30s"']);
  });

  it('refuses a null where the schema allows none, instead of coercing it to 0, "" or false', async () => {
    const s = {
      type: 'object',
      properties: { id: { type: 'integer', minimum: 1 }, confirm: { type: 'boolean' }, reason: { type: 'string' } },
      required: ['id'],
    };
    expect(await errorsOf(s, { id: null, confirm: null, reason: null })).toEqual([
      'parameter "id" expects an integer, got null',
      'parameter "confirm" expects a boolean (true or false), got null',
      'parameter "reason" expects a string, got null',
    ]);
    // Nested, and alongside another problem: both reported, the null once (not as "must be >= 1, got 0").
    const nested = { type: 'object', properties: { items: { type: 'array', items: schema.properties.items.items } } };
    expect(await errorsOf(nested, { items: [{ name: null }] })).toEqual(['parameter "items[0].name" expects a string, got null']);
    expect(await errorsOf(s, { id: null, confirm: 'maybe' })).toEqual([
      'parameter "id" expects an integer, got null',
      'parameter "confirm" expects a boolean (true or false), got the string "maybe"',
    ]);
  });

  it('still coerces strings, and accepts a null the schema allows', async () => {
    const s = {
      type: 'object',
      properties: { id: { type: 'integer' }, note: { type: ['string', 'null'] }, tag: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    };
    expect(await validateArguments(s, { id: '3', note: null, tag: null })).toEqual({ ok: true, value: { id: 3, note: null, tag: null } });
  });

  it('reports a missing required parameter', async () => {
    const s = { type: 'object', properties: { sides: { type: 'integer' } }, required: ['sides'] };
    expect(await errorsOf(s, {})).toEqual(['missing required parameter "sides"']);
  });

  it('lists the allowed values of an enum', async () => {
    expect(await errorsOf(schema, { mode: 'medium' })).toEqual(['parameter "mode" must be one of "fast", "slow"; got "medium"']);
  });

  it('lists the accepted parameters for an unexpected one', async () => {
    expect(await errorsOf(schema, { foo: 1 })).toEqual([
      'unexpected parameter "foo" (this tool accepts: timeout, sides, mode, verbose, items)',
    ]);
  });

  it('reports a minimum with the value that arrived', async () => {
    expect(await errorsOf(schema, { sides: 0 })).toEqual(['parameter "sides" must be >= 1, got 0']);
  });

  it('uses a readable path for nested values', async () => {
    expect(await errorsOf(schema, { items: [{ name: 'a' }, { name: 'b' }, {}] })).toEqual(['missing required parameter "items[2].name"']);
    expect(await errorsOf(schema, { items: [{ name: '' }] })).toEqual(['parameter "items[0].name" must have at least 1 character, got ""']);
  });

  it('gives one line per problem', async () => {
    const errors = await errorsOf(schema, { timeout: 'x', sides: 0, mode: 'medium', bar: true });
    expect(errors).toHaveLength(4);
  });

  it('describes a union of literals as a list of values', async () => {
    const s = { type: 'object', properties: { unit: { anyOf: [{ const: 'c' }, { const: 'f' }] } } };
    expect(await errorsOf(s, { unit: 'k' })).toEqual(['parameter "unit" must be one of "c", "f"; got "k"']);
  });

  it('summarizes other unions by their branch types', async () => {
    const s = { type: 'object', properties: { id: { anyOf: [{ type: 'string' }, { type: 'integer' }] } } };
    expect(await errorsOf(s, { id: [1] })).toEqual(['parameter "id" must match one of: a string, an integer; got an array']);
  });

  it('ignores unknown keywords and formats instead of crashing (real-world MCP schemas)', async () => {
    const s = {
      type: 'object',
      properties: { when: { type: 'string', format: 'made-up', 'x-vendor': true } },
      'x-extra': { anything: 1 },
    };
    expect(await validateArguments(s, { when: 'soon' })).toEqual({ ok: true, value: { when: 'soon' } });
  });

  it('accepts draft-07 and 2020-12 schemas with $schema and $ref', async () => {
    const draft07 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { n: { $ref: '#/definitions/pos' } },
      definitions: { pos: { type: 'number', exclusiveMinimum: 0 } },
    };
    const draft2020 = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { n: { $ref: '#/$defs/pos' } },
      $defs: { pos: { type: 'number', exclusiveMinimum: 0 } },
    };
    for (const s of [draft07, draft2020]) {
      expect(await errorsOf(s, { n: 0 })).toEqual(['parameter "n" must be > 0, got 0']);
      expect(await validateArguments(s, { n: '2' })).toEqual({ ok: true, value: { n: 2 } });
    }
  });

  it('compiles each schema once', async () => {
    const s = { type: 'object', properties: {} };
    expect(await compileValidator(s)).toBe(await compileValidator(s));
  });

  it('lets two schemas share an $id', async () => {
    const a = { $id: 'same', type: 'object', properties: { x: { type: 'string' } } };
    const b = { $id: 'same', type: 'object', properties: { x: { type: 'integer' } } };
    expect((await validateArguments(a, { x: 'a' })).ok).toBe(true);
    expect(await errorsOf(b, { x: 'a' })).toEqual(['parameter "x" expects an integer, got the string "a"']);
  });

  it('rejects a schema that does not compile with a config error', async () => {
    await expect(compileValidator({ type: 'object', properties: { x: { type: 'int' } } })).rejects.toMatchObject({
      code: 'config',
      message: expect.stringMatching(/does not compile/),
    });
  });
});

describe('compileValidator cache', () => {
  it('shares one validator between schemas of equal content (a tool defined per agent)', async () => {
    const schema = () => ({ type: 'object', properties: { n: { type: 'integer' }, label: { type: 'string' } }, required: ['n'] });
    const first = await compileValidator(schema());
    const again = await compileValidator({
      required: ['n'],
      properties: { label: { type: 'string' }, n: { type: 'integer' } },
      type: 'object',
    });
    expect(again).toBe(first);
    expect(again({ n: '3' })).toEqual({ ok: true, value: { n: 3 } });
    // Different content, different validator.
    const other = await compileValidator({ ...schema(), required: ['label'] });
    expect(other).not.toBe(first);
    expect(other({ n: 1 })).toEqual({ ok: false, errors: ['missing required parameter "label"'] });
  });
});
