/**
 * Request validation against the API's schemas (ajv, JSON Schema 2020-12, no coercion: a
 * number sent as a string is an error that says so). Every problem names its field.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Schema } from './schemas.js';

/** A request that does not match its schema: the first problem, with the field it concerns. */
export interface RequestProblem {
  field: string;
  message: string;
}

/** Fields a request might use to add what only an agent's file may define. */
const SMUGGLED = new Set([
  'tools',
  'allowedTools',
  'model',
  'baseUrl',
  'base_url',
  'baseURL',
  'mcpServers',
  'mcp',
  'commands',
  'command',
  'system',
  'headers',
  'modelConfig',
  'toolSources',
  'mode',
  'outputSchema',
]);

type Ajv2020 = { compile(schema: object): ValidateFunction };
let ajv: Promise<Ajv2020> | undefined;
const compiled = new WeakMap<Schema, ValidateFunction>();

/** Compiles the schemas once, at start: validation is then synchronous. */
export async function prepareValidators(schemas: readonly Schema[]): Promise<void> {
  ajv ??= import('ajv/dist/2020.js').then(
    (m) => new m.default.default({ allErrors: true, strict: false, logger: false, verbose: true }) as Ajv2020,
  );
  const engine = await ajv;
  for (const schema of schemas) if (!compiled.has(schema)) compiled.set(schema, engine.compile(schema));
}

/** Checks `value` against `schema` (compiled by {@link prepareValidators}); the first problem, or undefined. */
export function check(schema: Schema, value: unknown, where: 'body' | 'query'): RequestProblem | undefined {
  const validate = compiled.get(schema);
  if (!validate) throw new Error('schema not prepared: call prepareValidators first');
  if (validate(value)) return undefined;
  const errors = validate.errors ?? [];
  // Extra fields first: a smuggled `tools` must be named as such, not hidden behind another error.
  const extra = errors.find((e) => e.keyword === 'additionalProperties');
  return describeError(extra ?? (errors[0] as ErrorObject), where, schema);
}

function describeError(error: ErrorObject, where: 'body' | 'query', schema: Schema): RequestProblem {
  const path = error.instancePath.split('/').slice(1).map(decodePointer);
  const at = path.join('.');
  const field = (name: string): string => (at ? `${at}.${name}` : name);
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = String((error.params as { additionalProperty: string }).additionalProperty);
      if (where === 'body' && at === '' && SMUGGLED.has(name)) {
        return {
          field: name,
          message: `${name} is not accepted: a request cannot add tools, commands, MCP servers, a model or a base URL. They come from the agent's file, .rein/agents/<name>.md; choose the agent with "agent"`,
        };
      }
      const allowed = Object.keys(propertiesAt(schema, path) ?? {});
      return {
        field: field(name),
        message: `unknown ${where === 'query' ? 'query parameter' : 'field'} ${field(name)}${allowed.length ? `: it takes ${allowed.join(', ')}` : ''}`,
      };
    }
    case 'required': {
      const name = String((error.params as { missingProperty: string }).missingProperty);
      return { field: field(name), message: `${field(name)} is required` };
    }
    case 'type':
      return {
        field: at || where,
        message: `${at || `the ${where}`} must be ${article(String((error.params as { type: string }).type))}, got ${describe(error.data)}`,
      };
    case 'enum':
      return {
        field: at,
        message: `${at} must be one of ${((error.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}, got ${describe(error.data)}`,
      };
    default:
      return { field: at || where, message: `${at || `the ${where}`} ${error.message ?? 'is invalid'}, got ${describe(error.data)}` };
  }
}

function propertiesAt(schema: Schema, path: string[]): Record<string, unknown> | undefined {
  let node: Schema | undefined = schema;
  for (const key of path) node = (node?.properties as Record<string, Schema> | undefined)?.[key];
  return node?.properties as Record<string, unknown> | undefined;
}

function decodePointer(part: string): string {
  return part.replace(/~1/g, '/').replace(/~0/g, '~');
}

function article(type: string): string {
  if (type === 'integer') return 'a whole number';
  if (type === 'object') return 'a JSON object';
  if (type === 'array') return 'a list';
  return `a ${type}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`;
}

/**
 * The query of a URL as the schema reads it: integers where the schema wants them (`limit=5`
 * → 5; anything else stays a string, which the schema refuses by name). A repeated
 * parameter is refused by its schema too (it becomes a list).
 */
export function queryObject(url: URL, schema: Schema): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const out: Record<string, unknown> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    const raw = all.length === 1 ? (all[0] as string) : all;
    out[key] = props[key]?.type === 'integer' && typeof raw === 'string' && /^-?\d{1,15}$/.test(raw) ? Number(raw) : raw;
  }
  return out;
}
