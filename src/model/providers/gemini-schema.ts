/**
 * Tool parameter schemas for Gemini function declarations.
 *
 * Gemini has two slots for them, and rein uses both, by model generation:
 *
 * - `parametersJsonSchema` (Gemini 2.5 and later): real JSON Schema. Unions, type arrays
 *   with `"null"`, `additionalProperties` and free-form objects all keep their meaning; the
 *   recordings show it accepted by gemini-2.5-flash and gemini-3-pro-preview with
 *   `additionalProperties: false` and an empty root object. Only what the API is known to
 *   refuse or not to resolve is touched: `$schema` / `$id` / `$comment` / `$anchor` are
 *   dropped (a `$schema` key is a 400 "Unknown name"), same-document `$ref`s are inlined
 *   and `const` becomes a one-value `enum`.
 * - `parameters` (older models): Google's OpenAPI 3.0 subset (`Schema`), which answers 400
 *   "Unknown name" for any key it does not know. Schemas are converted: upper-case types,
 *   type arrays and `null` branches → `nullable`, `const` → `enum` (of strings, as Schema
 *   requires), `oneOf` → `anyOf`, `allOf` merged, `$ref` inlined, and everything else
 *   (`additionalProperties`, `$schema`, `examples`, string formats Gemini rejects) dropped.
 *   A root without properties sends no `parameters` at all: Gemini rejects an OBJECT
 *   schema with empty `properties`.
 */
import { SchemaCache } from '../schema-cache.js';
import type { JsonSchema } from '../types.js';
import { isRecord, type Json } from '../json.js';

/** Keys that are not schema keywords Gemini accepts, dropped in both forms. */
const META = new Set(['$schema', '$id', '$comment', '$anchor', '$defs', 'definitions']);
/** Keywords whose value is data, not a subschema: copied as is. */
const DATA = new Set(['enum', 'default', 'examples', 'example', 'required']);
/** Keywords whose value maps names to subschemas. */
const MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas']);

/** Where `$ref`s resolve, and which are being resolved (to stop at recursion). */
interface Refs {
  defs: Json;
  active: Set<string>;
}

/**
 * The parameters member of a function declaration: `{ parametersJsonSchema }` when the
 * model reads JSON Schema, else `{ parameters }` in the OpenAPI subset (or nothing, for a
 * tool without parameters).
 *
 * @example
 * declarationParameters({ type: 'object', properties: { q: { type: ['string', 'null'] } } }, false);
 * // { parameters: { type: 'OBJECT', properties: { q: { type: 'STRING', nullable: true } } } }
 */
export function declarationParameters(schema: JsonSchema, jsonSchema: boolean): Declared {
  // Converted once per schema content and dialect, for every agent and request that sends it.
  return declared[jsonSchema ? 1 : 0].get(schema, () => convertParameters(schema, jsonSchema));
}

type Declared = { parametersJsonSchema: Json } | { parameters: Json } | Record<string, never>;
const declared = [new SchemaCache<Declared>(256), new SchemaCache<Declared>(256)] as const;

function convertParameters(schema: JsonSchema, jsonSchema: boolean): Declared {
  if (jsonSchema) return { parametersJsonSchema: toGeminiJsonSchema(schema) };
  const parameters = toOpenApiSchema(schema);
  return isRecord(parameters.properties) && Object.keys(parameters.properties).length > 0 ? { parameters } : {};
}

/** JSON Schema as `parametersJsonSchema` takes it: meta keys dropped, refs inlined, an object root. */
export function toGeminiJsonSchema(schema: JsonSchema): Json {
  const cleaned = cleanJson(schema, refsOf(schema));
  const root = isRecord(cleaned) ? cleaned : {};
  if (root.type === undefined) root.type = 'object';
  return root;
}

/** JSON Schema converted to Gemini's OpenAPI 3.0 `Schema` subset, with an OBJECT root. */
export function toOpenApiSchema(schema: JsonSchema): Json {
  const root = convert(schema, refsOf(schema));
  root.type = 'OBJECT';
  delete root.nullable;
  return root;
}

function refsOf(schema: JsonSchema): Refs {
  const defs = { ...(isRecord(schema.definitions) ? schema.definitions : {}), ...(isRecord(schema.$defs) ? schema.$defs : {}) };
  return { defs, active: new Set() };
}

/**
 * The schema a `$ref` points at (same document only: `#/$defs/X`, `#/definitions/X`), or
 * `{}` (any value) for a ref that is external, unknown, or recursive: Gemini resolves no
 * refs, and a recursive type cannot be written out in full.
 */
function deref(node: Json, refs: Refs, walk: (schema: Json) => Json): Json {
  const ref = node.$ref as string;
  const { $ref: _ref, ...siblings } = node;
  const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)?.[1];
  const target = name === undefined ? undefined : refs.defs[decodeURIComponent(name.replace(/~1/g, '/').replace(/~0/g, '~'))];
  if (!isRecord(target) || refs.active.has(ref)) return walk(siblings);
  refs.active.add(ref);
  try {
    // A ref's siblings refine it (draft 2019+), so they win over the target's keywords.
    return walk({ ...target, ...siblings });
  } finally {
    refs.active.delete(ref);
  }
}

function cleanJson(node: unknown, refs: Refs): unknown {
  if (Array.isArray(node)) return node.map((item) => cleanJson(item, refs));
  if (!isRecord(node)) return node;
  if (typeof node.$ref === 'string') return deref(node, refs, (schema) => cleanJson(schema, refs) as Json);
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (META.has(key)) continue;
    if (key === 'const') out.enum = [value];
    else if (DATA.has(key)) out[key] = value;
    else if (MAPS.has(key) && isRecord(value)) out[key] = mapValues(value, (schema) => cleanJson(schema, refs));
    else out[key] = cleanJson(value, refs);
  }
  return out;
}

const TYPES: Record<string, string> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
};
// The Gemini API rejects other string formats ("uri", "email", "uuid", …) in `parameters`.
const FORMATS: Record<string, readonly string[]> = {
  STRING: ['date-time', 'enum'],
  NUMBER: ['float', 'double'],
  INTEGER: ['int32', 'int64'],
};
const COPIED = [
  'title',
  'description',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'default',
];

function convert(input: unknown, refs: Refs): Json {
  if (!isRecord(input)) return {}; // `true` / a missing schema: any value
  if (typeof input.$ref === 'string') return deref(input, refs, (schema) => convert(schema, refs));
  const node = Array.isArray(input.allOf) ? mergeAllOf(input, refs) : input;
  const out: Json = {};
  for (const key of COPIED) if (node[key] !== undefined) out[key] = node[key];
  if (out.minimum === undefined && typeof node.exclusiveMinimum === 'number') out.minimum = node.exclusiveMinimum;
  if (out.maximum === undefined && typeof node.exclusiveMaximum === 'number') out.maximum = node.exclusiveMaximum;

  const types = (Array.isArray(node.type) ? node.type : [node.type]).filter((t): t is string => typeof t === 'string');
  if (types.includes('null')) out.nullable = true;
  const known = types.flatMap((t) => (TYPES[t] === undefined ? [] : [TYPES[t]]));
  if (known.length === 1) out.type = known[0];
  else if (known.length > 1) out.anyOf = known.map((type) => ({ type }));

  const union = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (union !== undefined) unionInto(out, union, refs);

  const values = node.const !== undefined ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined;
  if (values !== undefined) {
    if (values.includes(null)) out.nullable = true;
    // Schema.enum is a list of strings, whatever the type.
    out.enum = values.filter((v) => v !== null).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    out.type ??= 'STRING';
  }
  if (isRecord(node.properties)) {
    out.type ??= 'OBJECT';
    out.properties = mapValues(node.properties, (schema) => convert(schema, refs));
    const names = Object.keys(out.properties as Json);
    // Gemini rejects a `required` name that is not among the properties.
    if (Array.isArray(node.required)) {
      const required = node.required.filter((n): n is string => typeof n === 'string' && names.includes(n));
      if (required.length > 0) out.required = required;
    }
  }
  const items = Array.isArray(node.prefixItems) ? node.prefixItems : node.items;
  if (items !== undefined && items !== false) {
    out.type ??= 'ARRAY';
    // A tuple has no Schema form: its items become "any of the tuple's types".
    out.items = Array.isArray(items)
      ? items.length === 1
        ? convert(items[0], refs)
        : { anyOf: items.map((item) => convert(item, refs)) }
      : convert(items, refs);
  }
  if (typeof node.format === 'string' && typeof out.type === 'string' && FORMATS[out.type]?.includes(node.format)) out.format = node.format;
  return out;
}

/** `anyOf` / `oneOf`: `null` branches make the value nullable; a single other branch is inlined. */
function unionInto(out: Json, union: unknown[], refs: Refs): void {
  const branches: Json[] = [];
  for (const branch of union) {
    const converted = convert(branch, refs);
    if (isRecord(branch) && branch.type === 'null') out.nullable = true;
    else if (converted.nullable === true && Object.keys(converted).length === 1) out.nullable = true;
    else branches.push(converted);
  }
  if (branches.length === 1) {
    const [only] = branches as [Json];
    if (only.nullable === true) out.nullable = true;
    for (const [key, value] of Object.entries(only)) if (out[key] === undefined) out[key] = value;
  } else if (branches.length > 1) {
    out.anyOf = branches;
    delete out.type; // the branches carry the types
  }
}

/** `allOf` folded into one schema: properties and `required` united, other keywords first wins. */
function mergeAllOf(node: Json, refs: Refs): Json {
  const { allOf, ...rest } = node;
  const merged: Json = { ...rest };
  const properties: Json = isRecord(rest.properties) ? { ...rest.properties } : {};
  const required = new Set(Array.isArray(rest.required) ? rest.required : []);
  for (const part of allOf as unknown[]) {
    const resolved = isRecord(part) && typeof part.$ref === 'string' ? deref(part, refs, (schema) => schema) : part;
    if (!isRecord(resolved)) continue;
    if (isRecord(resolved.properties)) Object.assign(properties, resolved.properties);
    if (Array.isArray(resolved.required)) for (const name of resolved.required) required.add(name);
    for (const [key, value] of Object.entries(resolved)) if (merged[key] === undefined) merged[key] = value;
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}

function mapValues(record: Json, fn: (value: unknown) => unknown): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(record)) out[key] = fn(value);
  return out;
}
