import { describe, expect, it } from 'vitest';
import type { JsonSchema } from '../../src/model/types.js';
import { simpleSchema } from '../../src/tools/simple-validator.js';
import { compileValidator, compileWithAjv } from '../../src/tools/validate.js';

/** Values a model sends, right and wrong, for every scalar type. */
const VALUES: unknown[] = [
  undefined,
  null,
  0,
  1,
  3.5,
  -2,
  '3',
  ' 4 ',
  '3.5',
  '',
  'abc',
  'true',
  'false',
  true,
  false,
  [],
  [1],
  {},
  { a: 1 },
  'Infinity',
  '1e3',
];

const SCHEMAS: JsonSchema[] = [
  {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  },
  {
    type: 'object',
    description: 'Everything at once.',
    properties: {
      n: { type: 'integer', description: 'A count.' },
      s: { type: 'string', default: 'x' },
      flag: { type: 'boolean', default: false },
      '~x/y': { type: 'number', title: 'Escaped' },
      '0': { type: 'string' },
    },
    required: ['n', 'missing'],
    additionalProperties: false,
  },
  {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { count: { type: 'integer', default: 2 }, name: { type: 'string' } },
    additionalProperties: true,
  },
  { type: 'object', properties: {}, additionalProperties: false },
  { type: 'object' },
];

/** Argument objects: each property given each value (one property at a time, and all at once), plus unknown keys. */
function argumentsFor(schema: JsonSchema): Array<Record<string, unknown>> {
  const names = Object.keys((schema.properties ?? {}) as Record<string, unknown>);
  const out: Array<Record<string, unknown>> = [{}, { extra: 1 }, { extra: null }, { 'x~/': 'y', a: null }];
  for (const value of VALUES) {
    const all: Record<string, unknown> = {};
    for (const name of names) {
      const one: Record<string, unknown> = {};
      if (value !== undefined) {
        one[name] = value;
        all[name] = value;
      }
      for (const other of names) if (other !== name) one[other] = other === 'n' ? 1 : 'v';
      out.push(one);
    }
    out.push(all, { ...all, extra: value ?? 0 });
  }
  return out;
}

describe('the ajv-free validator of an object of named scalars', () => {
  it('answers every argument object as the ajv validator does: value, coercion, defaults, every message', async () => {
    let compared = 0;
    for (const schema of SCHEMAS) {
      expect(simpleSchema(schema)).toBeDefined();
      const simple = await compileValidator(schema);
      const ajv = await compileWithAjv(schema);
      for (const args of argumentsFor(schema)) {
        expect(simple(structuredClone(args)), JSON.stringify({ schema, args })).toEqual(ajv(structuredClone(args)));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(300);
  });

  it('is what compileValidator gives for such a schema, ready at once', async () => {
    const schema: JsonSchema = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };
    const validator = await compileValidator(schema);
    expect(validator({ a: '3' })).toEqual({ ok: true, value: { a: 3 } });
    expect(validator({})).toEqual({ ok: false, errors: ['missing required parameter "a"'] });
    expect(validator({ a: null })).toEqual({ ok: false, errors: ['parameter "a" expects a number, got null'] });
  });

  it('leaves every schema with more in it to ajv', () => {
    const more: JsonSchema[] = [
      { type: 'object', properties: { a: { type: 'number', minimum: 1 } } },
      { type: 'object', properties: { a: { type: 'string', enum: ['x'] } } },
      { type: 'object', properties: { a: { type: ['string', 'null'] } } },
      { type: 'object', properties: { a: { type: 'object' } } },
      { type: 'object', properties: { a: { type: 'array', items: { type: 'string' } } } },
      { type: 'object', properties: { a: { type: 'number', default: '3' } } },
      { type: 'object', properties: { a: { type: 'number' } }, required: ['a', 'a'] },
      { type: 'object', properties: { a: { type: 'number' } }, additionalProperties: { type: 'string' } },
      { type: 'object', properties: { a: { $ref: '#/$defs/x' } }, $defs: { x: { type: 'number' } } },
      { type: 'object', anyOf: [{ required: ['a'] }] },
      { type: 'string' },
      { properties: { a: { type: 'number' } } },
    ];
    for (const schema of more) expect(simpleSchema(schema), JSON.stringify(schema)).toBeUndefined();
  });
});
