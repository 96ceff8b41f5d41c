/** Tool parameter schemas for Gemini: the JSON Schema cleanup (2.5+) and the OpenAPI conversion (older models). */
import { describe, expect, it } from 'vitest';
import { declarationParameters, toGeminiJsonSchema, toOpenApiSchema } from '../../src/model/providers/gemini-schema.js';
import type { JsonSchema } from '../../src/model/types.js';

/** A zod / TypeBox style schema: $schema, $defs with a recursive type, refs with siblings, unions, const. */
const SCHEMA: JsonSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:tool',
  type: 'object',
  properties: {
    // Property names that look like keywords are names, not keywords.
    $schema: { type: 'string' },
    const: { type: 'string' },
    owner: { $ref: '#/$defs/Person', description: 'Who owns it' },
    mode: { const: 'fast' },
    level: { enum: [1, 2, null] },
    note: { anyOf: [{ type: 'string', format: 'uri' }, { type: 'null' }] },
    id: { oneOf: [{ type: 'string' }, { type: 'integer', format: 'int64' }] },
    when: { type: 'string', format: 'date-time' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1, examples: [['a']] },
    pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] },
    size: { type: 'number', exclusiveMinimum: 0 },
    meta: { type: 'object', additionalProperties: { type: 'string' } },
    both: {
      allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'boolean' } } }],
    },
  },
  required: ['owner', 'missing'],
  additionalProperties: false,
  $defs: {
    Person: {
      type: 'object',
      $comment: 'x',
      properties: { name: { type: 'string' }, friend: { $ref: '#/$defs/Person' } },
      required: ['name'],
    },
  },
};

describe('gemini schema: parametersJsonSchema (Gemini 2.5 and later)', () => {
  it('drops $schema / $id / $comment, inlines same-document refs (recursion becomes any), turns const into enum; keeps the rest', () => {
    const before = JSON.stringify(SCHEMA);
    const json = toGeminiJsonSchema(SCHEMA);
    expect(JSON.stringify(SCHEMA)).toBe(before); // the tool's schema is not mutated
    expect(json).not.toHaveProperty('$schema');
    expect(json).not.toHaveProperty('$id');
    expect(json).not.toHaveProperty('$defs');
    expect(JSON.stringify(json)).not.toContain('$ref');
    expect(JSON.stringify(json)).not.toContain('$comment');
    const props = json.properties as Record<string, unknown>;
    expect(props.$schema).toEqual({ type: 'string' });
    expect(props.const).toEqual({ type: 'string' });
    expect(props.owner).toEqual({
      type: 'object',
      description: 'Who owns it',
      properties: { name: { type: 'string' }, friend: {} },
      required: ['name'],
    });
    expect(props.mode).toEqual({ enum: ['fast'] });
    expect(props.note).toEqual({ anyOf: [{ type: 'string', format: 'uri' }, { type: 'null' }] });
    expect(props.meta).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
    expect(json.additionalProperties).toBe(false);
    expect(json.required).toEqual(['owner', 'missing']);
  });

  it('gives a root without a type the object type', () => {
    expect(toGeminiJsonSchema({ properties: { a: { type: 'string' } } })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
    });
  });
});

/** The fields of Google's `Schema` (generativelanguage v1beta); anything else is a 400 "Unknown name". */
const SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

/** Keys of every schema node that `Schema` does not have (property names are free). */
function unknownKeys(node: unknown, path = '$'): string[] {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (!SCHEMA_FIELDS.has(key)) found.push(`${path}.${key}`);
    if (key === 'properties')
      for (const [name, schema] of Object.entries(value as object)) found.push(...unknownKeys(schema, `${path}.properties.${name}`));
    else if (key === 'items') found.push(...unknownKeys(value, `${path}.items`));
    else if (key === 'anyOf')
      for (const [i, schema] of (value as unknown[]).entries()) found.push(...unknownKeys(schema, `${path}.anyOf[${i}]`));
  }
  return found;
}

describe('gemini schema: OpenAPI parameters (before Gemini 2.5)', () => {
  const converted = toOpenApiSchema(SCHEMA);
  const props = converted.properties as Record<string, Record<string, unknown>>;

  it('upper-case types, an OBJECT root, only keys Gemini knows', () => {
    expect(converted.type).toBe('OBJECT');
    expect(unknownKeys(converted)).toEqual([]);
    expect(props.$schema).toEqual({ type: 'STRING' });
    expect(props.tags).toEqual({ type: 'ARRAY', items: { type: 'STRING' }, minItems: 1 });
  });

  it('type arrays and null branches become nullable; a single remaining branch is inlined', () => {
    expect(toOpenApiSchema({ type: 'object', properties: { a: { type: ['string', 'null'] } } }).properties).toEqual({
      a: { type: 'STRING', nullable: true },
    });
    // The "uri" format is dropped: Gemini accepts only date-time and enum on strings.
    expect(props.note).toEqual({ type: 'STRING', nullable: true });
    expect(props.when).toEqual({ type: 'STRING', format: 'date-time' });
    expect(props.id).toEqual({ anyOf: [{ type: 'STRING' }, { type: 'INTEGER', format: 'int64' }] });
    expect(toOpenApiSchema({ type: 'object', properties: { a: { type: ['string', 'number'] } } }).properties).toEqual({
      a: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] },
    });
  });

  it('const and enum become string enums (null making it nullable)', () => {
    expect(props.mode).toEqual({ type: 'STRING', enum: ['fast'] });
    expect(props.level).toEqual({ type: 'STRING', enum: ['1', '2'], nullable: true });
  });

  it('refs are inlined with their siblings, recursion becomes any, allOf is merged, tuples become anyOf items', () => {
    expect(props.owner).toEqual({
      type: 'OBJECT',
      description: 'Who owns it',
      properties: { name: { type: 'STRING' }, friend: {} },
      required: ['name'],
    });
    expect(props.both).toEqual({ type: 'OBJECT', properties: { a: { type: 'STRING' }, b: { type: 'BOOLEAN' } }, required: ['a'] });
    expect(props.pair).toEqual({ type: 'ARRAY', items: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] } });
    expect(props.size).toEqual({ type: 'NUMBER', minimum: 0 });
    expect(props.meta).toEqual({ type: 'OBJECT' });
  });

  it('required keeps only declared properties (Gemini rejects unknown names)', () => {
    expect(converted.required).toEqual(['owner']);
  });
});

describe('gemini schema: the declaration member', () => {
  it('parametersJsonSchema or parameters by model; nothing for a tool without parameters on older models', () => {
    const empty = { type: 'object', properties: {}, additionalProperties: false };
    expect(declarationParameters(empty, true)).toEqual({
      parametersJsonSchema: { type: 'object', properties: {}, additionalProperties: false },
    });
    expect(declarationParameters(empty, false)).toEqual({});
    expect(declarationParameters({ type: 'object' }, false)).toEqual({});
    expect(declarationParameters({ type: 'object', properties: { q: { type: 'string' } } }, false)).toEqual({
      parameters: { type: 'OBJECT', properties: { q: { type: 'STRING' } } },
    });
  });
});
