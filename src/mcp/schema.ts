/**
 * Making a server's `inputSchema` usable as a rein tool's `parameters`: an object schema
 * that ajv compiles, whatever the server sent (no `type`, a draft-04 schema, a `$schema`
 * ajv does not know, a schema that does not compile at all).
 */
import { isRecord } from '../util/json.js';
import type { JsonSchema } from '../model/types.js';
import { compileValidator } from '../tools/validate.js';

/** A normalized schema, and what had to be given up to get it (for the host's log). */
export interface PreparedSchema {
  schema: JsonSchema;
  warning?: string;
}

const OLD_DRAFT = /draft-0[4-7]/;

/**
 * Normalizes an MCP tool's input schema: a fresh copy, `type: "object"` with `properties`,
 * draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` rewritten to numbers, `$schema`
 * kept only when it names draft-04 to 07 (the validator then uses draft-07 rules; anything
 * else is read as 2020-12, what current MCP SDKs emit).
 *
 * @example
 * normalizeInputSchema({ properties: { q: { type: 'string' } } });
 * // { type: 'object', properties: { q: { type: 'string' } } }
 */
export function normalizeInputSchema(input: unknown): JsonSchema {
  if (!isRecord(input)) return { type: 'object', properties: {} };
  const schema = toPlain(input) as JsonSchema;
  const type = schema.type;
  if (type !== 'object') {
    // `["object", "null"]` still describes an object; any other type cannot carry named
    // arguments, and the server will say what it wants when called.
    const objectish = type === undefined || (Array.isArray(type) && type.includes('object'));
    if (!objectish) return { type: 'object', properties: {} };
    schema.type = 'object';
  }
  if (!isRecord(schema.properties)) schema.properties = {};
  const draft = typeof schema.$schema === 'string' ? schema.$schema : undefined;
  if (draft === undefined || !OLD_DRAFT.test(draft)) delete schema.$schema;
  if (draft !== undefined && /draft-04/.test(draft)) rewriteDraft4Exclusives(schema);
  return schema;
}

/**
 * Normalizes and compiles the schema (paying ajv's compilation now rather than on the
 * first call). A schema that does not compile is retried as 2020-12, then replaced by an
 * open object schema: the tool stays usable and the server validates its own arguments.
 */
export async function prepareInputSchema(input: unknown): Promise<PreparedSchema> {
  const schema = normalizeInputSchema(input);
  try {
    await compileValidator(schema);
    return { schema };
  } catch (first) {
    if (schema.$schema !== undefined) {
      const modern = { ...schema };
      delete modern.$schema;
      try {
        await compileValidator(modern);
        return { schema: modern };
      } catch {
        // fall through to the open schema
      }
    }
    const open: JsonSchema = { type: 'object', properties: {}, additionalProperties: true };
    await compileValidator(open);
    const reason = first instanceof Error ? first.message : String(first);
    return { schema: open, warning: `input schema does not compile (${reason}); arguments are passed unchecked` };
  }
}

/** A JSON-only deep copy (servers' objects are never shared with the validator). */
function toPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlain);
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined && typeof item !== 'function') out[key] = toPlain(item);
  }
  return out;
}

function rewriteDraft4Exclusives(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) rewriteDraft4Exclusives(item);
    return;
  }
  if (!isRecord(node)) return;
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof node[flag] !== 'boolean') continue;
    if (node[flag] === true && typeof node[bound] === 'number') {
      node[flag] = node[bound];
      delete node[bound];
    } else {
      delete node[flag];
    }
  }
  for (const value of Object.values(node)) rewriteDraft4Exclusives(value);
}
