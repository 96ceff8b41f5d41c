/**
 * JSON Schema validation of tool arguments with ajv: coercion ("3" → 3), defaults, and
 * error messages a model can act on. ajv is loaded on the first validation (the core must
 * import fast) and every schema is compiled once; an object of named scalars, the commonest
 * schema, is validated without ajv, to the same answers (`simple-validator.ts`).
 */
import type { ErrorObject, Options as AjvOptions, ValidateFunction } from 'ajv';
import { ReinError } from '../errors.js';
import { SchemaCache } from '../model/schema-cache.js';
import type { JsonSchema } from '../model/types.js';
import { checkSimple, type SimpleSchema, simpleSchema } from './simple-validator.js';

/** Outcome of a validation: the (coerced, defaulted) arguments, or one message per problem. */
export type ValidationResult = { ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] };

/**
 * A compiled validator. It coerces and fills defaults **in place** on the object it is
 * given, so hand it an object you own (the dispatcher hands it a fresh `JSON.parse` result).
 */
export type ArgsValidator = (args: Record<string, unknown>) => ValidationResult;

interface AjvLike {
  compile(schema: object): ValidateFunction;
  removeSchema(schema: object): unknown;
  errorsText(errors: ErrorObject[] | null | undefined): string;
}

/** A generated meta-schema validator (scripts/meta-validators.mjs). */
type MetaValidator = ((schema: unknown) => boolean) & { errors?: ErrorObject[] | null };

const AJV_OPTIONS: AjvOptions = {
  coerceTypes: true,
  useDefaults: true,
  allErrors: true,
  // Real-world (MCP) schemas carry unknown keywords and formats; ignore them, never crash.
  strict: false,
  logger: false,
  // Errors then carry `data` and `parentSchema`, which the messages quote. Costs nothing
  // on the success path: ajv only fills them in when it builds an error.
  verbose: true,
  // Two tools may declare the same `$id`; keep compiled schemas out of ajv's shared registry.
  addUsedSchema: false,
  // Schemas are checked against their meta-schema by the generated validators below, not
  // by ajv compiling the meta-schema at run time (about 100 ms, the bulk of a first call).
  validateSchema: false,
};

/** An ajv instance and its dialect's meta-schema validator. */
interface Engine {
  ajv: AjvLike;
  meta: MetaValidator;
}

type Dialect = 'draft07' | 'draft2020';

/** One dialect's engines: ajv's class for it, loaded on the first schema of that dialect. */
interface Engines {
  coercing: Engine;
  /** Without coercion, made on first need: for arguments that contain a null. */
  strict: () => Engine;
}

const engines: Partial<Record<Dialect, Promise<Engines>>> = {};

/** Schemas that declare draft-04/06/07 in `$schema` are draft-07; all others 2020-12 (what zod and MCP emit). */
function dialectOf(schema: JsonSchema): Dialect {
  return typeof schema.$schema === 'string' && /draft-0[4-7]/.test(schema.$schema) ? 'draft07' : 'draft2020';
}

/** Only the dialect in use is loaded: each class brings its own vocabulary modules. */
function loadEngines(dialect: Dialect): Promise<Engines> {
  const loading = (engines[dialect] ??= (
    dialect === 'draft07'
      ? Promise.all([import('ajv'), import('./meta-validators-07.js')])
      : Promise.all([import('ajv/dist/2020.js'), import('./meta-validators-2020.js')])
  ).then(([module, meta]) => {
    // ajv is CommonJS: under Node's ESM interop the class is `module.exports.default`.
    const AjvClass = module.default.default;
    const make = (options: AjvOptions): Engine => ({ ajv: new AjvClass(options), meta: meta.validate as MetaValidator });
    let strict: Engine | undefined;
    return { coercing: make(AJV_OPTIONS), strict: () => (strict ??= make({ ...AJV_OPTIONS, coerceTypes: false })) };
  }));
  return loading;
}

/** Compiled validators by schema content, shared across tools and agents (see SchemaCache). */
interface Entry {
  promise: Promise<ArgsValidator>;
  ready?: ArgsValidator;
}
const validators = new SchemaCache<Entry>(256);

/** The validator of a schema if one of the same content has been compiled already (the per-call fast path). */
export function readyValidator(schema: JsonSchema): ArgsValidator | undefined {
  return validators.peek(schema)?.ready;
}

/**
 * Returns the validator of a schema, compiling it on first use. Cached by content (a
 * canonical form: key order does not matter) across tools and agents, so two tools with
 * equal schemas share one validator; the per-call look-up is by object identity. Schemas that
 * declare draft-04/06/07 in `$schema` are compiled as draft-07, all others as 2020-12 (what
 * zod and MCP emit); ajv loads only the dialects in use. Rejects with a `config` ReinError when the schema itself is invalid.
 *
 * Coercion turns strings into numbers and booleans ("3" → 3), but an explicit `null` where
 * the schema allows no null is an error ("expects an integer, got null"), not 0, "" or
 * false as ajv's coercion would make it: `delete_user({ id: null })` must not delete user 0.
 */
export function compileValidator(schema: JsonSchema): Promise<ArgsValidator> {
  return validators.get(schema, () => {
    // An object of named scalars needs no ajv: loading and compiling it is most of a first call.
    const simple = simpleSchema(schema);
    if (simple) {
      const ready = simpleValidator(simple);
      return { promise: Promise.resolve(ready), ready };
    }
    const entry: Entry = {
      promise: loadEngines(dialectOf(schema)).then((ajv) => {
        const built = build(schema, ajv);
        entry.ready = built;
        return built;
      }),
    };
    return entry;
  }).promise;
}

function simpleValidator(simple: SimpleSchema): ArgsValidator {
  return (args) => {
    const errors = checkSimple(simple, args);
    return errors.length === 0 ? { ok: true, value: args } : { ok: false, errors: formatErrors(errors) };
  };
}

/**
 * The validator ajv compiles for a schema, never the subset's (`simple-validator.ts`): for
 * the test that holds the two to the same answers.
 */
export function compileWithAjv(schema: JsonSchema): Promise<ArgsValidator> {
  return loadEngines(dialectOf(schema)).then((ajv) => build(schema, ajv));
}

function build(schema: JsonSchema, ajv: Engines): ArgsValidator {
  const { $schema: _dialect, ...rest } = schema;
  const validate = compile(ajv.coercing, rest);
  // Compiled on the first call that sends a null: most never do.
  let strict: ValidateFunction | undefined;
  const nullErrors = (args: Record<string, unknown>): ErrorObject[] => {
    strict ??= compile(ajv.strict(), rest);
    // A copy: the strict validator still fills defaults, and `args` is validated next.
    return strict(structuredClone(args)) ? [] : (strict.errors ?? []).filter((e) => e.data === null);
  };
  return (args) => {
    // Checked before coercion, which would turn the null into 0, "" or false in place.
    const refused = containsNull(args) ? nullErrors(args) : [];
    if (validate(args) && refused.length === 0) return { ok: true, value: args };
    // A coerced null may fail again as its coerced value ("must be >= 1, got 0"): say null once.
    const nulled = new Set(refused.map((e) => e.instancePath));
    const others = (validate.errors ?? []).filter((e) => !nulled.has(e.instancePath));
    return { ok: false, errors: formatErrors([...refused, ...others]) };
  };
}

function compile({ ajv, meta }: Engine, schema: object): ValidateFunction {
  try {
    // What ajv's own schema check throws, word for word.
    if (!meta(schema)) throw new Error(`schema is invalid: ${ajv.errorsText(meta.errors)}`);
    return ajv.compile(schema);
  } catch (error) {
    throw new ReinError('config', 'fatal', `the parameters schema does not compile: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    // The compiled function lives on in our cache; ajv need not keep the schema forever.
    ajv.removeSchema(schema);
  }
}

/** Whether a null appears anywhere in parsed JSON: one walk, usually over a few keys. */
function containsNull(value: unknown): boolean {
  if (value === null) return true;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(containsNull);
  for (const key in value) if (containsNull((value as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * Validates arguments against a JSON Schema, coercing types and filling defaults on a copy
 * (or on `args` itself with `inPlace: true`, when the caller owns it). Rejects only when
 * the schema itself cannot be compiled.
 *
 * @example
 * await validateArguments({ type: 'object', properties: { n: { type: 'integer' } } }, { n: '3' });
 * // { ok: true, value: { n: 3 } }
 */
export async function validateArguments(
  schema: JsonSchema,
  args: Record<string, unknown>,
  options: { inPlace?: boolean } = {},
): Promise<ValidationResult> {
  const validator = await compileValidator(schema);
  return validator(options.inPlace ? args : structuredClone(args));
}

const MAX_MESSAGES = 20;

/** Turns ajv's errors into one model-readable line each. */
export function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  if (!errors || errors.length === 0) return ['arguments do not match the parameters schema'];
  // Branch errors of anyOf / oneOf say "not a string", "not an integer", … one per branch;
  // the combinator's own error summarizes them better. `if` errors duplicate their `then`.
  const combinators = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => `${e.schemaPath}/`);
  const lines: string[] = [];
  for (const error of errors) {
    if (error.keyword === 'if') continue;
    if (combinators.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    const line = formatError(error);
    if (!lines.includes(line)) lines.push(line);
  }
  if (lines.length > MAX_MESSAGES) {
    const more = lines.length - MAX_MESSAGES;
    return [...lines.slice(0, MAX_MESSAGES), `… and ${more} more problem${more === 1 ? '' : 's'}`];
  }
  return lines;
}

function formatError(e: ErrorObject): string {
  const path = toPath(e.instancePath);
  const subject = path === '' ? 'the arguments' : `parameter "${path}"`;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `missing required parameter "${join(path, String(p.missingProperty))}"`;
    case 'type': {
      const expected = String(p.type).split(',').map(typeName).join(' or ');
      return `${subject} expects ${expected}, got ${describe(e.data)}`;
    }
    case 'enum':
      return `${subject} must be one of ${listLiterals(p.allowedValues)}; got ${literal(e.data)}`;
    case 'const':
      return `${subject} must be ${literal(p.allowedValue)}; got ${literal(e.data)}`;
    case 'additionalProperties': {
      const name = join(path, String(p.additionalProperty));
      const known = Object.keys(asRecord(asRecord(e.parentSchema).properties));
      const where = path === '' ? 'this tool accepts' : `"${path}" accepts`;
      const accepts = known.length > 0 ? `${where}: ${known.join(', ')}` : `${where} no other parameters`;
      return `unexpected parameter "${name}" (${accepts})`;
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${subject} must be ${String(p.comparison)} ${String(p.limit)}, got ${literal(e.data)}`;
    case 'multipleOf':
      return `${subject} must be a multiple of ${String(p.multipleOf)}, got ${literal(e.data)}`;
    case 'minLength':
      return `${subject} must have at least ${count(p.limit, 'character')}, got ${literal(e.data)}`;
    case 'maxLength':
      return `${subject} must have at most ${count(p.limit, 'character')}, got ${lengthOf(e.data)}`;
    case 'minItems':
      return `${subject} must have at least ${count(p.limit, 'item')}, got ${count(lengthOf(e.data), 'item')}`;
    case 'maxItems':
      return `${subject} must have at most ${count(p.limit, 'item')}, got ${count(lengthOf(e.data), 'item')}`;
    case 'minProperties':
    case 'maxProperties':
      return `${subject} must have ${e.keyword === 'minProperties' ? 'at least' : 'at most'} ${count(p.limit, 'property')}`;
    case 'pattern':
      return `${subject} must match the pattern ${String(p.pattern)}, got ${literal(e.data)}`;
    case 'format':
      return `${subject} must be a valid ${String(p.format)}, got ${literal(e.data)}`;
    case 'uniqueItems':
      return `${subject} must not contain duplicates (items ${String(p.j)} and ${String(p.i)} are equal)`;
    case 'anyOf':
    case 'oneOf':
      return formatCombinator(e, subject);
    case 'dependentRequired':
    case 'dependencies':
      return `missing required parameter "${join(path, String(p.missingProperty))}" (required with "${join(path, String(p.property))}")`;
    case 'false schema':
      return `${subject} is not allowed`;
    default:
      return `${subject} ${e.message ?? 'is invalid'}, got ${literal(e.data)}`;
  }
}

function formatCombinator(e: ErrorObject, subject: string): string {
  const passing = (e.params as { passingSchemas?: unknown }).passingSchemas;
  if (Array.isArray(passing)) return `${subject} matches more than one of the allowed shapes; it must match exactly one`;
  const branches = Array.isArray(e.schema) ? (e.schema as unknown[]).map(asRecord) : [];
  // TypeBox writes `Type.Union([Type.Literal('a'), …])` as anyOf of consts: say it as an enum.
  if (branches.length > 0 && branches.every((b) => 'const' in b || Array.isArray(b.enum))) {
    const values = branches.flatMap((b) => ('const' in b ? [b.const] : (b.enum as unknown[])));
    return `${subject} must be one of ${listLiterals(values)}; got ${literal(e.data)}`;
  }
  const shapes = branches.map((b) => (typeof b.type === 'string' ? typeName(b.type) : 'a value of another shape'));
  const unique = [...new Set(shapes)];
  const expected = unique.length > 0 ? `one of: ${unique.join(', ')}` : 'one of the allowed shapes';
  return `${subject} must match ${expected}; got ${describe(e.data)}`;
}

/** `/items/2/name` → `items[2].name`. */
function toPath(pointer: string): string {
  if (pointer === '') return '';
  let out = '';
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(segment) ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  }
  return out;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function typeName(type: string): string {
  switch (type) {
    case 'integer':
      return 'an integer';
    case 'array':
      return 'an array';
    case 'object':
      return 'an object';
    case 'null':
      return 'null';
    case 'boolean':
      return 'a boolean (true or false)';
    default:
      return `a ${type}`;
  }
}

/** "the string \"30s\"", "the number 3.5", "an array", … — what arrived, for type errors. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return `the string ${literal(value)}`;
    case 'number':
      return `the number ${value}`;
    case 'boolean':
      return `the boolean ${value}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/** A value as JSON, cut short so a 10 kB string does not flood the message. */
function literal(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function listLiterals(values: unknown): string {
  return Array.isArray(values) ? values.map(literal).join(', ') : literal(values);
}

function count(n: unknown, noun: string): string {
  const plural = noun === 'property' ? 'properties' : `${noun}s`;
  return `${String(n)} ${n === 1 ? noun : plural}`;
}

function lengthOf(value: unknown): number {
  return typeof value === 'string' || Array.isArray(value) ? value.length : 0;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
