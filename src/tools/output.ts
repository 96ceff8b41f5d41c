/**
 * Turning whatever `execute` returned into result content. Tools written in plain
 * JavaScript (or bridged from MCP) do not always honour {@link ToolOutput}; a malformed
 * output is shown to the model as best we can rather than crashing the run.
 */
import type { ImageContent, TextContent } from '../model/types.js';
import type { ToolOutput } from './types.js';

/** A tool's output in the shape of a result, before truncation and wrapping. */
export interface NormalizedOutput {
  content: Array<TextContent | ImageContent>;
  isError: boolean;
  details?: unknown;
  terminate: boolean;
}

/** Some providers reject empty tool results; say plainly that there was nothing. */
const EMPTY = '(no output)';

/**
 * Normalizes an `execute` return value: a string becomes one text part; an object's
 * `content` (string or parts) is kept with its `details`, `isError` and `terminate`;
 * bytes become text (see {@link bytesText}); anything else (`undefined`, a number, an
 * object without `content`) is shown as JSON and kept as `details`.
 *
 * Results travel in events, which must be JSON: JSON that cannot be made (a circular
 * object, a BigInt) is made safely instead — circular references as `"[Circular]"`,
 * BigInts as their decimal digits — and `details` that are not JSON are replaced by
 * `{ note, value }`: a JSON-safe copy and why. The text the model sees is never dropped.
 * A Map is shown as an object of its entries (as `[key, value]` pairs when a key is not a
 * string) and a Set as an array, not as the `{}` JSON makes of them; `details` holding one
 * are replaced by that copy. A string output costs no JSON at all; `details` cost one
 * `JSON.stringify` (the check), and a second look only when that JSON contains `{}`.
 */
export function normalizeOutput(output: ToolOutput | unknown): NormalizedOutput {
  if (typeof output === 'string') return { content: [text(output)], isError: false, terminate: false };
  if (output === undefined || output === null) return { content: [text('')], isError: false, terminate: false };
  if (output instanceof Uint8Array) return { content: [text(bytesText(output))], isError: false, terminate: false };
  if (typeof output !== 'object' || !('content' in output)) return asData(output);
  const o = output as Exclude<ToolOutput, string>;
  const normalized: NormalizedOutput = {
    content: toParts(o.content),
    isError: o.isError === true,
    terminate: o.terminate === true,
  };
  if (o.details !== undefined) normalized.details = jsonDetails(o.details);
  return normalized;
}

/** An output that is data, not a {@link ToolOutput}: the model sees its JSON, programs the value. */
function asData(value: unknown): NormalizedOutput {
  const out: NormalizedOutput = { content: [], isError: false, terminate: false };
  if (typeof value === 'bigint') {
    out.content = [text(value.toString())];
    out.details = value.toString();
    return out;
  }
  let json: string | undefined;
  let details: unknown = value;
  try {
    const shown = toJson(value);
    json = shown.json;
    if ('copy' in shown) details = shown.copy;
  } catch (error) {
    const safe = unserializable(value, error);
    json = JSON.stringify(safe.value);
    details = safe;
  }
  // A function or a symbol: JSON has nothing to say, its string form will do; no details.
  out.content = [text(json ?? String(value))];
  if (json !== undefined) out.details = details;
  return out;
}

function toParts(content: unknown): Array<TextContent | ImageContent> {
  if (typeof content === 'string') return [text(content)];
  if (!Array.isArray(content)) return [text(stringify(content))];
  const parts = content.map((part: unknown): TextContent | ImageContent => {
    if (isPart(part)) return part;
    return text(typeof part === 'string' ? part : stringify(part));
  });
  return parts.length > 0 ? parts : [text('')];
}

function isPart(part: unknown): part is TextContent | ImageContent {
  if (part === null || typeof part !== 'object') return false;
  const p = part as Record<string, unknown>;
  if (p.type === 'text') return typeof p.text === 'string';
  return p.type === 'image' && typeof p.data === 'string' && typeof p.mimeType === 'string';
}

function text(value: string): TextContent {
  return { type: 'text', text: value === '' ? EMPTY : value };
}

/** Text for a value that is not text, for the model. */
function stringify(value: unknown): string {
  if (value === undefined) return EMPTY;
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return bytesText(value);
  return safeJson(value) ?? String(value);
}

/**
 * `value` as JSON text, made as {@link normalizeOutput} makes it: circular references as
 * `"[Circular]"`, BigInts as strings of their digits, Maps and Sets with their entries.
 * Never throws; `undefined` when JSON has nothing to say (`undefined`, a function, a symbol).
 */
export function safeJson(value: unknown): string | undefined {
  try {
    return toJson(value).json;
  } catch {
    try {
      return JSON.stringify(toJsonSafe(value, []));
    } catch {
      return undefined; // nested too deep even for the copy
    }
  }
}

/**
 * `JSON.stringify(value)`, except that Maps and Sets show their entries; throws as it does.
 * When that changed the text, `copy` is the JSON-safe copy it was made from.
 */
function toJson(value: unknown): { json: string | undefined; copy?: unknown } {
  const json = JSON.stringify(value);
  // A Map or a Set has no fields of its own, so JSON writes it as `{}`: only JSON with `{}` in
  // it can hide one, and only that pays for a second look.
  if (json === undefined || !json.includes('{}')) return { json };
  const copy = toJsonSafe(value, []);
  const shown = JSON.stringify(copy);
  return shown === json ? { json } : { json: shown, copy };
}

/** `details` as they are when they are JSON (the common case), else a JSON-safe copy with a note. */
function jsonDetails(details: unknown): unknown {
  try {
    const shown = toJson(details);
    return 'copy' in shown ? shown.copy : details;
  } catch (error) {
    return unserializable(details, error);
  }
}

function unserializable(value: unknown, error: unknown): { note: string; value: unknown } {
  // V8's circular-structure message goes on over several lines; its first says it all.
  const why = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  const note = `the tool's output is not JSON (${why}); this is a JSON-safe copy: circular references as "[Circular]", BigInts as strings`;
  return { note, value: toJsonSafe(value, []) };
}

/**
 * A copy of `value` that `JSON.stringify` accepts: what JSON.stringify would write, except
 * that a reference back to an ancestor becomes `"[Circular]"` (an object seen twice on
 * different branches is fine), a BigInt its digits, a Map an object of its entries (an
 * array of `[key, value]` pairs when a key is not a string), a Set an array, and a throwing
 * getter or `toJSON` `"[Unreadable]"`. Only called once plain `JSON.stringify` has failed
 * or may have hidden a Map or a Set.
 */
function toJsonSafe(value: unknown, ancestors: object[]): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (ancestors.includes(value)) return '[Circular]';
  try {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return toJsonSafe(toJSON.call(value), ancestors);
    // `new Number(1)` and the like: JSON writes the primitive inside.
    if (value instanceof Number || value instanceof String || value instanceof Boolean || value instanceof BigInt) {
      return toJsonSafe(value.valueOf(), ancestors);
    }
    ancestors.push(value);
    try {
      if (Array.isArray(value)) return value.map((item: unknown) => toJsonSafe(item, ancestors));
      if (value instanceof Set) return Array.from(value, (item: unknown) => toJsonSafe(item, ancestors));
      if (value instanceof Map) return mapJsonSafe(value, ancestors);
      // fromEntries, not assignment: a "__proto__" key stays a field.
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toJsonSafe(item, ancestors)]));
    } finally {
      ancestors.pop();
    }
  } catch {
    return '[Unreadable]';
  }
}

/** A Map's entries as an object when every key is a string, else as `[key, value]` pairs. */
function mapJsonSafe(map: Map<unknown, unknown>, ancestors: object[]): unknown {
  const entries = Array.from(map);
  if (entries.every(([key]) => typeof key === 'string')) {
    return Object.fromEntries(entries.map(([key, item]) => [key, toJsonSafe(item, ancestors)]));
  }
  return entries.map(([key, item]) => [toJsonSafe(key, ancestors), toJsonSafe(item, ancestors)]);
}

let utf8: InstanceType<typeof TextDecoder> | undefined;

/**
 * Bytes (a Buffer, a Uint8Array: `fs.readFile` without an encoding) are shown as text when
 * they are valid UTF-8 with no NUL byte, which is what such a tool almost always meant.
 * Anything else is binary the model cannot read, so it gets the size, not
 * `{"type":"Buffer","data":[…]}` — thousands of numbers. Bytes are not kept as `details`.
 */
function bytesText(bytes: Uint8Array): string {
  utf8 ??= new TextDecoder('utf-8', { fatal: true });
  try {
    const decoded = utf8.decode(bytes);
    if (!decoded.includes('\0')) return decoded;
  } catch {
    // not UTF-8
  }
  return `<${bytes.length} bytes of binary data>`;
}
