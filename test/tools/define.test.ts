import { Type } from '@sinclair/typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';
import * as zm from 'zod/mini';
import { defineTool, jsonSchema } from '../../src/tools/define.js';
import { validateArguments } from '../../src/tools/validate.js';

const execute = () => 'ok';

const expectedShape = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    days: { type: 'integer', minimum: 1, default: 3 },
    unit: { type: 'string', enum: ['c', 'f'] },
  },
  required: ['city'],
};

/** The parts of a schema that decide validation, without library-specific decoration. */
function shapeOf(schema: Record<string, unknown>) {
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  const unit = properties.unit!;
  return {
    type: schema.type,
    properties: {
      city: { type: properties.city!.type },
      days: { type: properties.days!.type, minimum: properties.days!.minimum, default: properties.days!.default },
      // TypeBox writes a literal union as anyOf of consts; zod as an enum.
      unit: { type: 'string', enum: unit.enum ?? (unit.anyOf as Array<{ const: string }>).map((b) => b.const) },
    },
    required: [...(schema.required as string[])].sort(),
  };
}

describe('defineTool parameters', () => {
  const json = defineTool({ name: 'forecast', description: 'Weather forecast.', parameters: expectedShape, execute });
  const typebox = defineTool({
    name: 'forecast',
    description: 'Weather forecast.',
    parameters: Type.Object({
      city: Type.String(),
      days: Type.Optional(Type.Integer({ minimum: 1, default: 3 })),
      unit: Type.Optional(Type.Union([Type.Literal('c'), Type.Literal('f')])),
    }),
    execute,
  });
  const zod = defineTool({
    name: 'forecast',
    description: 'Weather forecast.',
    parameters: z.object({ city: z.string(), days: z.int().min(1).default(3), unit: z.enum(['c', 'f']).optional() }),
    execute,
  });

  it('produces the same JSON Schema shape from JSON Schema, TypeBox and zod', () => {
    expect(shapeOf(json.parameters)).toEqual(expectedShape);
    expect(shapeOf(typebox.parameters)).toEqual(expectedShape);
    expect(shapeOf(zod.parameters)).toEqual(expectedShape);
  });

  it('produces plain JSON: no symbols, no $schema, no zod safe-integer bounds', () => {
    for (const tool of [typebox, zod]) {
      expect(JSON.parse(JSON.stringify(tool.parameters))).toEqual(tool.parameters);
      expect(Object.getOwnPropertySymbols(tool.parameters)).toEqual([]);
      expect(tool.parameters).not.toHaveProperty('$schema');
    }
    const days = (zod.parameters.properties as Record<string, Record<string, unknown>>).days!;
    expect(days).not.toHaveProperty('maximum');
  });

  it('validates the same way whichever way the schema was written', async () => {
    for (const tool of [json, typebox, zod]) {
      expect(await validateArguments(tool.parameters, { city: 'Oslo', days: '2' })).toMatchObject({
        ok: true,
        value: { city: 'Oslo', days: 2 },
      });
      expect(await validateArguments(tool.parameters, { city: 'Oslo' })).toMatchObject({ ok: true, value: { days: 3 } });
      expect(await validateArguments(tool.parameters, { days: 0, unit: 'k' })).toMatchObject({
        ok: false,
        errors: expect.arrayContaining([
          'missing required parameter "city"',
          'parameter "days" must be >= 1, got 0',
          'parameter "unit" must be one of "c", "f"; got "k"',
        ]),
      });
    }
  });

  it('types execute arguments from TypeBox and zod schemas', () => {
    defineTool({
      name: 't',
      description: 'd',
      parameters: Type.Object({ n: Type.Integer() }),
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ n: number }>();
        return '';
      },
    });
    defineTool({
      name: 'z',
      description: 'd',
      parameters: z.object({ s: z.string() }),
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ s: string }>();
        return '';
      },
    });
    defineTool({
      name: 'j',
      description: 'd',
      parameters: { type: 'object', properties: {} },
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
        return '';
      },
    });
  });

  it("types zod arguments as zod's output: transforms applied, defaults present", () => {
    defineTool({
      name: 'z',
      description: 'd',
      parameters: z.object({ n: z.string().transform((s) => s.length), days: z.int().default(3) }),
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ n: number; days: number }>();
        return '';
      },
    });
  });

  it("types a plain JSON Schema's arguments with jsonSchema<T>(), which returns the schema as it is", () => {
    const schema = { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } }, required: ['query'] };
    const typed = jsonSchema<{ query: string; limit?: number }>(schema);
    expect(typed).toBe(schema);
    const tool = defineTool({
      name: 'search',
      description: 'd',
      parameters: typed,
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ query: string; limit?: number }>();
        return args.query;
      },
    });
    expect(tool.parameters).toEqual(schema);
  });

  it('lets execute return nothing, a number or data (the dispatcher shows them all)', () => {
    const parameters = { type: 'object', properties: {} };
    defineTool({ name: 'v', description: 'd', parameters, execute: () => {} });
    defineTool({ name: 'pv', description: 'd', parameters, execute: async () => {} });
    defineTool({ name: 'n', description: 'd', parameters, execute: () => 42 });
    defineTool({ name: 'o', description: 'd', parameters, execute: () => ({ temperature: 21 }) });
    defineTool({ name: 'po', description: 'd', parameters, execute: async () => ({ temperature: 21 }) });
  });

  it('explains how to use a zod/mini schema, which has no JSON Schema export', () => {
    expect(() => defineTool({ name: 'm', description: 'd', parameters: zm.object({ a: zm.string() }), execute })).toThrow(
      /z\.toJSONSchema\(schema, \{ io: 'input' \}\)/,
    );
  });

  it('reports a zod schema that cannot be expressed as JSON Schema', () => {
    expect(() => defineTool({ name: 'd', description: 'd', parameters: z.object({ at: z.date() }), execute })).toThrow(
      /tool "d": parameters cannot be converted to JSON Schema: .*Date.*use z\.iso\.datetime\(\) or z\.iso\.date\(\)/,
    );
  });
});

describe('defineTool checks the definition', () => {
  const base = { description: 'Does things.', parameters: { type: 'object', properties: {} }, execute };

  it.each(['my tool', '', 'a'.repeat(65), 'dots.not.allowed', 'ünïcode'])('rejects the name %j', (name) => {
    expect(() => defineTool({ ...base, name })).toThrow(/name must be 1 to 64 letters, digits/);
  });

  it.each(['get_current_time', 'fetch-url', 'A1', 'a'.repeat(64)])('accepts the name %j', (name) => {
    expect(defineTool({ ...base, name }).name).toBe(name);
  });

  it('throws a fatal config ReinError naming the tool', () => {
    expect(() => defineTool({ ...base, name: 'x', description: '  ' })).toThrow(
      expect.objectContaining({ code: 'config', kind: 'fatal', message: expect.stringMatching(/^tool "x": description must be/) }),
    );
  });

  it('requires an object parameters schema', () => {
    expect(() => defineTool({ ...base, name: 'x', parameters: { type: 'string' } })).toThrow(
      'tool "x": parameters must be a schema of type "object"',
    );
    expect(() => defineTool({ ...base, name: 'x', parameters: { properties: {} } })).toThrow(/got no "type"/);
    expect(() => defineTool({ ...base, name: 'x', parameters: Type.String() })).toThrow(/got type "string"/);
  });

  it.each([
    [
      { a: { type: 'strnig' } },
      'parameters.properties.a.type must be one of string, number, integer, boolean, object, array, null (or an array of them); got "strnig"',
    ],
    [
      { a: { type: ['string', 'nul'] } },
      'parameters.properties.a.type must be one of string, number, integer, boolean, object, array, null (or an array of them); got "nul" in ["string","nul"]',
    ],
    [
      { a: { type: 'array', items: { type: 'object', properties: { b: { type: 'int' } } } } },
      'parameters.properties.a.items.properties.b.type must be one of',
    ],
    [
      { a: { anyOf: [{ type: 'string' }, 'number'] } },
      'parameters.properties.a.anyOf[1] must be a schema (an object such as { "type": "string" }, or true / false); got "number"',
    ],
    [{ a: { type: 'object', required: 'b' } }, 'parameters.properties.a.required must be an array of property names (strings); got "b"'],
    [
      { a: { type: 'object', properties: ['b'] } },
      'parameters.properties.a.properties must be an object mapping names to schemas; got ["b"]',
    ],
    [{ 'my key': { enum: 'x' } }, 'parameters.properties["my key"].enum must be an array of the allowed values; got "x"'],
  ])('rejects a broken JSON Schema (%j), naming the path and what to fix', (properties, message) => {
    expect(() => defineTool({ ...base, name: 'x', parameters: { type: 'object', properties } })).toThrow(
      expect.objectContaining({ code: 'config', kind: 'fatal', message: expect.stringContaining(`tool "x": ${message}`) }),
    );
  });

  it('rejects required that is not a list of names at the root', () => {
    expect(() => defineTool({ ...base, name: 'x', parameters: { type: 'object', properties: {}, required: [1] } })).toThrow(
      'tool "x": parameters.required must be an array of property names (strings); got [1]',
    );
  });

  it('accepts what zod and TypeBox emit, boolean schemas and tuples', () => {
    const zod = z.object({
      tags: z.array(z.string()).max(3),
      when: z.union([z.iso.datetime(), z.null()]),
      meta: z.record(z.string(), z.number()).optional(),
      pair: z.tuple([z.string(), z.int()]),
      mode: z.literal(['a', 'b']).nullable(),
      nested: z.object({ deep: z.array(z.object({ x: z.boolean() })) }).strict(),
    });
    const typebox = Type.Object({
      pair: Type.Tuple([Type.String(), Type.Integer()]),
      either: Type.Union([Type.String(), Type.Null()]),
      map: Type.Record(Type.String(), Type.Number()),
      all: Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.Number() })]),
      not: Type.Not(Type.String()),
    });
    const json = {
      type: 'object',
      properties: { any: true, never: false, list: { type: 'array', items: [{ type: 'string' }], additionalItems: false } },
      additionalProperties: false,
      $defs: { pos: { type: 'number' } },
    };
    for (const parameters of [zod, typebox, json]) {
      expect(defineTool({ ...base, name: 'x', parameters }).name).toBe('x');
    }
  });

  it('checks timeoutMs and risk', () => {
    expect(() => defineTool({ ...base, name: 'x', timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
    // @ts-expect-error: an invalid risk, as plain JavaScript could pass
    expect(() => defineTool({ ...base, name: 'x', risk: 'dangerous' })).toThrow(/risk must be one of read, write, execute/);
    expect(defineTool({ ...base, name: 'x', timeoutMs: 50, risk: 'write' })).toMatchObject({ timeoutMs: 50, risk: 'write' });
  });
});
