/**
 * `defineTool`: the one way to declare a tool. Parameters may be written as plain JSON
 * Schema, TypeBox or zod 4; all three end up as plain JSON Schema on the {@link Tool},
 * converted once, here, at definition time — rein never imports zod or TypeBox.
 */
import { ReinError } from '../errors.js';
import type { JsonSchema } from '../model/types.js';
import { parseBeforeExecute, standardValidate } from './standard-schema.js';
import type { Tool, ToolContext, ToolEffect, ToolOutput, ToolReturn, ToolRisk } from './types.js';

/**
 * The argument type `execute` receives: TypeBox's `Static`, the *output* type of a zod 4
 * (or other Standard Schema) schema (`z.output<typeof schema>`), or a plain record for a
 * JSON Schema. Structural, so rein needs neither library's types.
 *
 * zod's output type because zod runs: after the JSON Schema check (which repairs, coerces
 * `"3"` → `3` and explains failures to the model), the schema's own validation parses the
 * arguments, so refinements, transforms and defaults apply — a field with `.default(x)` is
 * never undefined, `z.string().transform((s) => s.length)` arrives as the number.
 */
export type InferArgs<P> = P extends { readonly [ARGS]: infer T } // jsonSchema<T>(…): the type the user gave
  ? T
  : P extends { static: infer S } // TypeBox: TSchema['static'] is Static<T>
    ? S
    : P extends { _zod: { output: infer O } } // zod 4: every schema carries its types in `_zod`
      ? O
      : P extends { '~standard': { types?: infer T } } // Valibot, ArkType: Standard Schema's types
        ? T extends { output: infer O }
          ? O
          : Record<string, unknown>
        : Record<string, unknown>;

/** Carries the argument type {@link jsonSchema} gives a plain JSON Schema: a type-only brand, never set at run time. */
declare const ARGS: unique symbol;

/** A plain JSON Schema with the type of the arguments it describes (see {@link jsonSchema}). */
export type TypedJsonSchema<T> = JsonSchema & { readonly [ARGS]: T };

/**
 * Types the arguments of a tool whose parameters are a plain JSON Schema: `execute` then
 * gets `T` instead of `Record<string, unknown>`. The schema is returned as it is; that it
 * matches `T` is yours to keep true (the dispatcher validates against the schema, not `T`).
 *
 * @example
 * const search = defineTool({
 *   name: 'search',
 *   description: 'Search the docs.',
 *   parameters: jsonSchema<{ query: string; limit?: number }>({
 *     type: 'object',
 *     properties: { query: { type: 'string' }, limit: { type: 'integer' } },
 *     required: ['query'],
 *   }),
 *   execute: ({ query, limit }) => `${query} ${limit ?? 10}`, // query: string
 * });
 */
export function jsonSchema<T extends Record<string, unknown>>(schema: JsonSchema): TypedJsonSchema<T> {
  return schema as TypedJsonSchema<T>;
}

/** What {@link defineTool} takes. `P` is the parameters schema: JSON Schema, TypeBox or zod 4. */
export interface ToolDefinition<P extends object = JsonSchema> {
  /** Letters, digits, `_` and `-`, at most 64 characters (the rule OpenAI enforces). */
  name: string;
  /** What the tool does and when to use it: the model decides from this alone. */
  description: string;
  /** An object schema: the model always passes arguments as one JSON object. */
  parameters: P;
  /**
   * Runs the tool with validated arguments (coerced, defaults filled; for zod, what the
   * schema's parse returns). May throw. Returns
   * a {@link ToolOutput}, or nothing, or data shown to the model as JSON (see {@link ToolReturn}).
   */
  execute: (args: InferArgs<P>, ctx: ToolContext) => ToolReturn | Promise<ToolReturn>;
  /** Per-call timeout in ms (default: the dispatcher's, 30 s). `Infinity` disables it. */
  timeoutMs?: number;
  risk?: ToolRisk;
  /** What running it twice would do (default `unsafe`): decides what a resume does after a crash. */
  effect?: ToolEffect;
  /** For `reconcilable` tools: did the call with this idempotency key take effect? */
  reconcile?: Tool['reconcile'];
  /** What argument patterns of permission rules match (a path, a command). */
  permissionSubject?: Tool['permissionSubject'];
  /** Why a call writes a file that steers rein or git (see `Tool.protectedTarget`). */
  protectedTarget?: Tool['protectedTarget'];
  /** What a person approving the call sees besides its arguments (a diff). */
  preview?: Tool['preview'];
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const RISKS: readonly ToolRisk[] = ['read', 'write', 'execute'];
const EFFECTS: readonly ToolEffect[] = ['pure', 'idempotent', 'reconcilable', 'unsafe'];

/**
 * Declares a tool. Checks the definition and converts `parameters` to plain JSON Schema;
 * throws a `config` {@link ReinError} naming the tool and what to fix.
 *
 * zod schemas are converted with zod's own exporter (the schema's Standard JSON Schema
 * `~standard.jsonSchema.input`, else its `toJSONSchema({ io: 'input' })` method), as the
 * *input* shape so fields with defaults stay optional for the model. The arguments are
 * checked against that JSON Schema first (repaired, coerced, explained to the model), then
 * parsed by the schema itself (Standard Schema's `validate`), so refinements and
 * transforms run; their issues reach the model as invalid arguments. `zod/mini` schemas
 * have no exporter on the instance: pass `z.toJSONSchema(schema, { io: 'input' })` (the
 * arguments are then checked by that JSON Schema alone).
 *
 * @example
 * import { Type } from '@sinclair/typebox';
 *
 * const roll = defineTool({
 *   name: 'roll',
 *   description: 'Roll one die. Use it whenever the user asks for a random number from 1 to `sides`.',
 *   parameters: Type.Object({ sides: Type.Integer({ minimum: 1, default: 6 }) }),
 *   execute: ({ sides }) => String(1 + Math.floor(Math.random() * sides)), // sides: number
 * });
 */
export function defineTool<P extends object>(definition: ToolDefinition<P>): Tool {
  const label = typeof definition.name === 'string' ? `tool "${definition.name}"` : 'a tool';
  const tool: Tool = {
    name: definition.name,
    description: definition.description,
    parameters: toJsonSchema(definition.parameters, label),
    // The dispatcher validates against `parameters` before calling, and a Standard Schema
    // parses them again its own way: what makes the narrower argument type true at run time.
    execute: toolExecute(definition),
  };
  if (definition.timeoutMs !== undefined) tool.timeoutMs = definition.timeoutMs;
  if (definition.risk !== undefined) tool.risk = definition.risk;
  if (definition.effect !== undefined) tool.effect = definition.effect;
  if (definition.reconcile !== undefined) tool.reconcile = definition.reconcile;
  if (definition.permissionSubject !== undefined) tool.permissionSubject = definition.permissionSubject;
  if (definition.protectedTarget !== undefined) tool.protectedTarget = definition.protectedTarget;
  if (definition.preview !== undefined) tool.preview = definition.preview;
  assertValidTool(tool);
  checkSchemaShape(tool.parameters, 'parameters', label);
  return tool;
}

function toolExecute<P extends object>(definition: ToolDefinition<P>): Tool['execute'] {
  const parameters: unknown = definition.parameters;
  const validate = parameters !== null && typeof parameters === 'object' ? standardValidate(parameters) : undefined;
  // A bad `execute` is reported by assertValidTool, with the tool's name.
  if (!validate || typeof definition.execute !== 'function') return definition.execute as unknown as Tool['execute'];
  return parseBeforeExecute(validate, definition.execute) as Tool['execute'];
}

const JSON_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];
/** Keywords whose value is one schema, an array of schemas, or a map of names to schemas. */
const ONE_SCHEMA = [
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
];
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

/**
 * A cheap look at the keywords ajv would refuse, so a mistyped schema fails here, where
 * the tool is written, not as an error result at its first call (which is when ajv, not
 * loaded by the core, would compile it). Not a full meta-schema check: `type`, `required`,
 * `enum` and the keywords holding subschemas. Throws a `config` {@link ReinError} naming
 * the tool and the path of the bad keyword.
 */
function checkSchemaShape(schema: unknown, path: string, label: string): void {
  const fail = (at: string, problem: string): never => {
    throw new ReinError('config', 'fatal', `${label}: ${at} ${problem}`);
  };
  if (typeof schema === 'boolean') return;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    fail(path, `must be a schema (an object such as { "type": "string" }, or true / false); got ${describeValue(schema)}`);
  }
  const s = schema as Record<string, unknown>;
  if ('type' in s) checkType(s.type, `${path}.type`, fail);
  if ('required' in s && !(Array.isArray(s.required) && s.required.every((r) => typeof r === 'string'))) {
    fail(`${path}.required`, `must be an array of property names (strings); got ${describeValue(s.required)}`);
  }
  if ('enum' in s && !Array.isArray(s.enum)) fail(`${path}.enum`, `must be an array of the allowed values; got ${describeValue(s.enum)}`);
  for (const key of ONE_SCHEMA) if (key in s) checkSchemaShape(s[key], `${path}.${key}`, label);
  if ('items' in s) {
    // Draft-07 tuples (TypeBox's Tuple) write `items` as an array of schemas.
    if (Array.isArray(s.items)) s.items.forEach((item, i) => checkSchemaShape(item, `${path}.items[${i}]`, label));
    else checkSchemaShape(s.items, `${path}.items`, label);
  }
  for (const key of SCHEMA_LISTS) {
    if (!(key in s)) continue;
    const list = s[key];
    if (!Array.isArray(list) || list.length === 0)
      fail(`${path}.${key}`, `must be a non-empty array of schemas; got ${describeValue(list)}`);
    (list as unknown[]).forEach((item, i) => checkSchemaShape(item, `${path}.${key}[${i}]`, label));
  }
  for (const key of SCHEMA_MAPS) {
    if (!(key in s)) continue;
    const map = s[key];
    if (map === null || typeof map !== 'object' || Array.isArray(map)) {
      fail(`${path}.${key}`, `must be an object mapping names to schemas; got ${describeValue(map)}`);
    }
    for (const [name, item] of Object.entries(map as object)) checkSchemaShape(item, `${path}.${key}${member(name)}`, label);
  }
}

function checkType(type: unknown, at: string, fail: (at: string, problem: string) => never): void {
  const names = Array.isArray(type) ? type : [type];
  const bad = names.find((name) => typeof name !== 'string' || !JSON_TYPES.includes(name));
  if (names.length > 0 && bad === undefined) return;
  const got = Array.isArray(type) && names.length > 0 ? `${describeValue(bad)} in ${JSON.stringify(type)}` : describeValue(type);
  fail(at, `must be one of ${JSON_TYPES.join(', ')} (or an array of them); got ${got}`);
}

/** `.city`, or `["a b"]` for a name that is not an identifier. */
function member(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Checks a {@link Tool} however it was made (by {@link defineTool}, by hand, from an MCP
 * server): name, description, an object parameters schema, an `execute` function, and a
 * sane timeout and risk. Throws a `config` {@link ReinError} saying what to fix.
 */
export function assertValidTool(tool: Tool): void {
  const label = typeof tool.name === 'string' ? `tool "${tool.name}"` : 'a tool';
  const fail = (problem: string): never => {
    throw new ReinError('config', 'fatal', `${label}: ${problem}`);
  };
  if (typeof tool.name !== 'string' || !NAME.test(tool.name)) {
    fail(`name must be 1 to 64 letters, digits, "_" or "-" (^[a-zA-Z0-9_-]{1,64}$); got ${JSON.stringify(tool.name)}`);
  }
  if (typeof tool.description !== 'string' || tool.description.trim() === '') {
    fail('description must be a non-empty string saying what the tool does and when to use it');
  }
  const params: unknown = tool.parameters;
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    fail('parameters must be a JSON Schema object');
  }
  const type = (params as JsonSchema).type;
  if (type !== 'object') {
    fail(
      `parameters must be a schema of type "object" (models pass arguments as one JSON object); got ${
        type === undefined ? 'no "type"' : `type ${JSON.stringify(type)}`
      }. Wrap the value in an object property`,
    );
  }
  if (typeof tool.execute !== 'function') fail('execute must be a function');
  if (tool.timeoutMs !== undefined && !(typeof tool.timeoutMs === 'number' && tool.timeoutMs > 0)) {
    fail(`timeoutMs must be a positive number of milliseconds; got ${String(tool.timeoutMs)}`);
  }
  if (tool.effect !== undefined && !EFFECTS.includes(tool.effect)) {
    fail(`effect must be one of ${EFFECTS.join(', ')}; got ${JSON.stringify(tool.effect)}`);
  }
  if (tool.effect === 'reconcilable' && typeof tool.reconcile !== 'function') {
    fail('effect "reconcilable" needs a reconcile(idempotencyKey) function that says whether the call took effect');
  }
  if (tool.risk !== undefined && !RISKS.includes(tool.risk)) {
    fail(`risk must be one of ${RISKS.join(', ')}; got ${JSON.stringify(tool.risk)}`);
  }
}

interface StandardJsonSchema {
  '~standard': { jsonSchema: { input: (options: { target: string }) => Record<string, unknown> } };
}

/**
 * Converts a parameters schema written as JSON Schema, TypeBox, zod 4 or any Standard JSON
 * Schema library to a fresh plain JSON Schema object (no symbols, no `$schema`).
 * `label` names the owner in the error thrown when the input is none of those.
 */
export function toJsonSchema(schema: unknown, label: string): JsonSchema {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new ReinError('config', 'fatal', `${label}: parameters must be a JSON Schema, zod or TypeBox object schema`);
  }
  // TypeBox schemas (marked by `Symbol.for('TypeBox.Kind')`) are JSON Schema plus symbol-keyed metadata:
  // the plain copy below drops the symbols, so they need no conversion of their own.
  const converted = hasStandardJsonSchema(schema) || '_zod' in schema;
  const json = converted ? convertWithLibrary(schema, label) : schema;
  const fromZod = '_zod' in schema;
  const plain = toPlainJson(json, fromZod) as JsonSchema;
  // Providers differ on `$schema` (some reject it); the validator picks the dialect itself.
  delete plain.$schema;
  return plain;
}

function hasStandardJsonSchema(schema: object): schema is StandardJsonSchema {
  const standard = (schema as { '~standard'?: { jsonSchema?: { input?: unknown } } })['~standard'];
  return typeof standard?.jsonSchema?.input === 'function';
}

function convertWithLibrary(schema: object, label: string): unknown {
  try {
    if (hasStandardJsonSchema(schema)) return schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' });
    const method = (schema as { toJSONSchema?: unknown }).toJSONSchema;
    if (typeof method === 'function') return (method as (p: object) => unknown).call(schema, { io: 'input' });
  } catch (error) {
    const message = (error as Error).message;
    // zod refuses what JSON has no type for; a model can only send the string form.
    const hint = /\bDate\b/.test(message)
      ? '. A model sends dates as text: use z.iso.datetime() or z.iso.date() (a string), and convert it in execute'
      : '';
    throw new ReinError('config', 'fatal', `${label}: parameters cannot be converted to JSON Schema: ${message}${hint}`, { cause: error });
  }
  throw new ReinError(
    'config',
    'fatal',
    `${label}: this zod schema has no JSON Schema export (zod/mini?); pass z.toJSONSchema(schema, { io: 'input' }) as parameters`,
  );
}

/**
 * A JSON-only deep copy: string keys only (drops TypeBox's symbols), no `undefined`, no
 * functions. For zod output it also drops the ±2^53 bounds zod adds to every integer,
 * which only cost tokens.
 */
function toPlainJson(value: unknown, fromZod: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => toPlainJson(item, fromZod));
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined || typeof item === 'function') continue;
    out[key] = toPlainJson(item, fromZod);
  }
  if (fromZod && out.type === 'integer') {
    if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
    if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum;
  }
  return out;
}
