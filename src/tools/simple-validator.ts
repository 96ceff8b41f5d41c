/**
 * Validation of the commonest parameters schema without ajv: an object of named scalars
 * (`{ type: 'object', properties: { a: { type: 'number' } }, required: ['a'] }`), which is
 * what most hand-written tools declare. Loading ajv and compiling a schema with it is most
 * of a process's first tool call (about 20 ms of a 60 ms first run, measured); this
 * answers the same, error for error, as the ajv validator `validate.ts` builds (coercion,
 * defaults, all errors, the null rule), and a differential test holds the two together.
 * Any schema outside the subset, or any keyword beyond it, goes to ajv.
 */
import type { ErrorObject } from 'ajv';
import type { JsonSchema } from '../model/types.js';

/** The scalar types of the subset. */
type Scalar = 'string' | 'number' | 'integer' | 'boolean';

interface Property {
  name: string;
  /** The JSON Pointer segment of the property (`~` and `/` escaped), as ajv writes `instancePath`. */
  pointer: string;
  type: Scalar;
  hasDefault: boolean;
  default?: unknown;
}

/** What the subset validator checks, read once from the schema. */
export interface SimpleSchema {
  properties: Property[];
  known: Record<string, unknown>;
  required: string[];
  closed: boolean;
  /** The schema as ajv is given it (without `$schema`): error objects quote it. */
  schema: Record<string, unknown>;
}

const ROOT_KEYS = new Set(['$schema', 'type', 'properties', 'required', 'additionalProperties', 'description', 'title']);
const PROPERTY_KEYS = new Set(['type', 'description', 'title', 'default']);
const SCALARS = new Set<string>(['string', 'number', 'integer', 'boolean']);

/** The schema read as the subset, or undefined when it is anything more (ajv then validates it). */
export function simpleSchema(schema: JsonSchema): SimpleSchema | undefined {
  if (!isPlain(schema) || schema.type !== 'object') return undefined;
  for (const key of Object.keys(schema)) if (!ROOT_KEYS.has(key)) return undefined;
  if (!optionalText(schema.description) || !optionalText(schema.title)) return undefined;
  const additional = schema.additionalProperties;
  if (additional !== undefined && typeof additional !== 'boolean') return undefined;
  const known = schema.properties ?? {};
  if (!isPlain(known)) return undefined;
  const properties: Property[] = [];
  for (const name of Object.keys(known)) {
    const property = known[name];
    if (name === '__proto__' || !isPlain(property) || typeof property.type !== 'string' || !SCALARS.has(property.type)) return undefined;
    for (const key of Object.keys(property)) if (!PROPERTY_KEYS.has(key)) return undefined;
    if (!optionalText(property.description) || !optionalText(property.title)) return undefined;
    const type = property.type as Scalar;
    const hasDefault = 'default' in property;
    // A default is taken as it is only when it already has the property's type (ajv would coerce it).
    if (hasDefault && !isOfType(property.default, type)) return undefined;
    properties.push({ name, pointer: name.replace(/~/g, '~0').replace(/\//g, '~1'), type, hasDefault, default: property.default });
  }
  const required = schema.required ?? [];
  if (!Array.isArray(required) || required.some((r) => typeof r !== 'string') || new Set(required).size !== required.length)
    return undefined;
  const { $schema: _dialect, ...rest } = schema;
  return { properties, known, required: required as string[], closed: additional === false, schema: rest };
}

/**
 * Validates `args` in place as ajv would with rein's options: defaults filled, scalars
 * coerced (`"3"` → 3), every error reported; a null where a scalar is declared is an error
 * of its own (as `validate.ts` rules), not a coerced 0, "" or false. Returns ajv's error
 * objects (empty when valid), for `formatErrors`.
 */
export function checkSimple(s: SimpleSchema, args: Record<string, unknown>): ErrorObject[] {
  if (!(args && typeof args === 'object' && !Array.isArray(args))) {
    return [error('', '#/type', 'type', { type: 'object' }, 'must be object', s.schema, args)];
  }
  for (const p of s.properties) if (p.hasDefault && args[p.name] === undefined) args[p.name] = p.default;
  // The null rule first: what a validator without coercion says of each null (validate.ts).
  const refused: ErrorObject[] = [];
  for (const p of s.properties) {
    if (args[p.name] === null) refused.push(typeError(p, null, s.schema));
  }
  const errors: ErrorObject[] = [];
  for (const name of s.required) {
    if (args[name] === undefined)
      errors.push(error('', '#/required', 'required', { missingProperty: name }, `must have required property '${name}'`, s.schema, args));
  }
  if (s.closed) {
    for (const key in args) {
      if (!Object.hasOwn(s.known, key)) {
        errors.push(
          error(
            '',
            '#/additionalProperties',
            'additionalProperties',
            { additionalProperty: key },
            'must NOT have additional properties',
            s.schema,
            args,
          ),
        );
      }
    }
  }
  for (const p of s.properties) {
    const value = args[p.name];
    if (value === undefined || isOfType(value, p.type)) continue;
    const coerced = coerce(value, p.type);
    if (coerced === undefined) errors.push(typeError(p, value, s.schema));
    else args[p.name] = coerced;
  }
  return refused.length === 0 ? errors : [...refused, ...errors];
}

/** ajv's type check (numbers without `isFinite`: rein runs ajv with `strict: false`). */
function isOfType(value: unknown, type: Scalar): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && !((value as number) % 1) && !Number.isNaN(value);
  }
}

/** ajv's `coerceTypes: true`, word for word (lib/compile/validate/dataType.ts); undefined when it does not coerce. */
function coerce(data: unknown, type: Scalar): unknown {
  const dataType = typeof data;
  switch (type) {
    case 'string':
      if (dataType === 'number' || dataType === 'boolean') return `${data}`;
      return data === null ? '' : undefined;
    case 'number':
      // biome-ignore lint/suspicious/noDoubleEquals: ajv's own loose comparison
      if (dataType === 'boolean' || data === null || (dataType === 'string' && data && data == +(data as string))) return +(data as string);
      return undefined;
    case 'integer':
      if (
        dataType === 'boolean' ||
        data === null ||
        // biome-ignore lint/suspicious/noDoubleEquals: ajv's own loose comparison
        (dataType === 'string' && data && data == +(data as string) && !(+(data as string) % 1))
      )
        return +(data as string);
      return undefined;
    case 'boolean':
      if (data === 'false' || data === 0 || data === null) return false;
      if (data === 'true' || data === 1) return true;
      return undefined;
  }
}

function typeError(p: Property, data: unknown, schema: Record<string, unknown>): ErrorObject {
  const sub = (schema.properties as Record<string, unknown>)[p.name] as Record<string, unknown>;
  return error(`/${p.pointer}`, `#/properties/${p.pointer}/type`, 'type', { type: p.type }, `must be ${p.type}`, sub, data, p.type);
}

function error(
  instancePath: string,
  schemaPath: string,
  keyword: string,
  params: Record<string, unknown>,
  message: string,
  parentSchema: Record<string, unknown>,
  data: unknown,
  schema: unknown = parentSchema[keyword],
): ErrorObject {
  return { instancePath, schemaPath, keyword, params, message, schema, parentSchema, data };
}

function isPlain(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function optionalText(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}
