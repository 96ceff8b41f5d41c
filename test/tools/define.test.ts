import { Type } from '@sinclair/typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';
import * as zm from 'zod/mini';
import { defineTool } from '../../src/tools/define.js';
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

  it('explains how to use a zod/mini schema, which has no JSON Schema export', () => {
    expect(() => defineTool({ name: 'm', description: 'd', parameters: zm.object({ a: zm.string() }), execute })).toThrow(
      /z\.toJSONSchema\(schema, \{ io: 'input' \}\)/,
    );
  });

  it('reports a zod schema that cannot be expressed as JSON Schema', () => {
    expect(() => defineTool({ name: 'd', description: 'd', parameters: z.object({ at: z.date() }), execute })).toThrow(
      /tool "d": parameters cannot be converted to JSON Schema/,
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

  it('checks timeoutMs and risk', () => {
    expect(() => defineTool({ ...base, name: 'x', timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
    // @ts-expect-error: an invalid risk, as plain JavaScript could pass
    expect(() => defineTool({ ...base, name: 'x', risk: 'dangerous' })).toThrow(/risk must be one of read, write, execute/);
    expect(defineTool({ ...base, name: 'x', timeoutMs: 50, risk: 'write' })).toMatchObject({ timeoutMs: 50, risk: 'write' });
  });
});
