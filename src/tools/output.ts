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
 * A string output costs no JSON at all; `details` cost one `JSON.stringify` (the check).
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
    json = JSON.stringify(value);
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
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return JSON.stringify(toJsonSafe(value, [])) ?? String(value);
  }
}

/** `details` as they are when they are JSON (the common case), else a JSON-safe copy with a note. */
function jsonDetails(details: unknown): unknown {
  try {
    JSON.stringify(details);
    return details;
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
 * different branches is fine), a BigInt its digits, and a throwing getter or `toJSON`
 * `"[Unreadable]"`. Only called once plain `JSON.stringify` has failed.
 */
function toJsonSafe(value: unknown, ancestors: object[]): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (ancestors.includes(value)) return '[Circular]';
  try {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return toJsonSafe(toJSON.call(value), ancestors);
    ancestors.push(value);
    try {
      if (Array.isArray(value)) return value.map((item: unknown) => toJsonSafe(item, ancestors));
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[key] = toJsonSafe(item, ancestors);
      return out;
    } finally {
      ancestors.pop();
    }
  } catch {
    return '[Unreadable]';
  }
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
