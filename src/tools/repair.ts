/**
 * Argument repair: turns the argument text a model produced into a JSON object, fixing the
 * slips models commonly make (code fences, chatter around the object, trailing commas,
 * and, last, what weaker models write instead of JSON: single quotes, unquoted keys,
 * Python literals, comments, missing commas) before giving up with a message the model
 * can act on.
 */
import { createRequire } from 'node:module';
import { argumentLimitError } from '../model/json-limits.js';
import { describeSyntaxRepairs } from './repair-kinds.js';

// jsonrepair is loaded on the first text our own repairs cannot fix (most runs never
// need it), synchronously so that checking a call stays synchronous.
const require = createRequire(import.meta.url);
let jsonrepair: ((text: string) => string) | undefined;

/**
 * Result of {@link repairArguments}. `repaired` says whether the text needed fixing; when it
 * did, `repairs` names what was fixed (in order) and `text` is the JSON text that parsed.
 */
export type RepairResult =
  | { ok: true; value: Record<string, unknown>; repaired: false }
  | { ok: true; value: Record<string, unknown>; repaired: true; repairs: string[]; text: string }
  /** `cutOff`: the text stops inside the object (an open string, brace or bracket): the model's answer ended mid-call. */
  | { ok: false; error: string; cutOff?: boolean };

/**
 * Parses a model's argument text into a JSON object.
 *
 * Tries `JSON.parse` first (the common case costs one parse). On failure it strips
 * Markdown code fences, anything before the first `{` and after the last `}`, and trailing
 * commas before `}` / `]` (outside strings), then parses again. Empty text means `{}`
 * (models send `""` for tools without parameters), and so does `null` for the same reason;
 * a JSON string that itself holds an object (double-encoded arguments) is unwrapped.
 * Then, unless the text stops inside the object (a cut-off answer, which no repair should
 * complete), `jsonrepair` fixes what weaker models write instead of JSON.
 * When even that does not give an object, the error quotes the parser's message for
 * the *original* text, so positions match what the model wrote.
 *
 * @example
 * repairArguments('```json\n{"a": 1,}\n```'); // { ok: true, value: { a: 1 }, repaired: true, repairs: ['code fence', 'trailing commas'], text: '{"a": 1}' }
 * repairArguments('[1, 2]'); // { ok: false, error: 'arguments must be a JSON object, got an array' }
 */
export function repairArguments(text: string): RepairResult {
  if (text.trim() === '') return { ok: true, value: {}, repaired: false };
  // Before any parse: what is too deep or too long would overflow the stack of whatever
  // handles it next (validation, the log), or fill memory.
  const overLimit = argumentLimitError(text);
  if (overLimit !== undefined) return { ok: false, error: overLimit };

  let firstError: string;
  try {
    return asObject(JSON.parse(text), text, []);
  } catch (error) {
    firstError = (error as Error).message;
  }

  const { text: candidate, repairs } = repairText(text);
  if (candidate !== text) {
    try {
      return asObject(JSON.parse(candidate), candidate, repairs);
    } catch {
      // Fall through: report the error against the text the model actually wrote.
    }
  }
  if (endsInsideObject(text) || endsInsideObject(candidate)) {
    // Most often the output token limit (finish_reason "length") cut the answer mid-call:
    // say so, since "not valid JSON" alone invites the model to resend the same long call.
    return {
      ok: false,
      error: `arguments are not valid JSON: they stop before the object is complete (${firstError}), as when the answer is cut off by the output token limit`,
      cutOff: true,
    };
  }
  const fixed = repairSyntax(candidate, repairs);
  if (fixed?.ok) return fixed;
  return { ok: false, error: `arguments are not valid JSON: ${firstError}` };
}

/** The last step: jsonrepair. Only an object counts: text it turns into a string or an array was not arguments. */
function repairSyntax(candidate: string, repairs: string[]): RepairResult | undefined {
  jsonrepair ??= (require('jsonrepair') as { jsonrepair: (text: string) => string }).jsonrepair;
  let text: string;
  try {
    text = jsonrepair(candidate);
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    return asObject(value, text, [...repairs, ...describeSyntaxRepairs(candidate)]);
  } catch {
    return undefined;
  }
}

/** Whether `text` opens an object and ends inside it: in a string, or with a brace or bracket still open. */
function endsInsideObject(text: string): boolean {
  const start = text.indexOf('{');
  if (start === -1 || text.slice(0, start).trim() !== '') return false;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) depth++;
    else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
      // Closed: whatever is wrong, it is not a cut.
      if (depth === 0) return false;
    }
  }
  return true;
}

/** `value` parsed from `text` after `repairs` (none: the model's own text). */
function asObject(value: unknown, text: string, repairs: string[]): RepairResult {
  if (value === null) return { ok: true, value: {}, repaired: true, repairs: [...repairs, 'null for no arguments'], text: '{}' };
  // Double-encoded arguments ("{\"a\":1}" as a JSON string) come from some models and proxies.
  if (typeof value === 'string' && value.trimStart().startsWith('{')) {
    try {
      const inner: unknown = JSON.parse(value);
      if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
        return { ok: true, value: inner as Record<string, unknown>, repaired: true, repairs: [...repairs, 'double-encoded'], text: value };
      }
    } catch {
      // Not JSON inside: report it as the string it is.
    }
  }
  if (typeof value === 'object' && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    return repairs.length === 0 ? { ok: true, value: object, repaired: false } : { ok: true, value: object, repaired: true, repairs, text };
  }
  return { ok: false, error: `arguments must be a JSON object, got ${describeJsonKind(value)}` };
}

function describeJsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

/** The repairs, in order; each is a no-op when its slip is absent. */
function repairText(text: string): { text: string; repairs: string[] } {
  const repairs: string[] = [];
  const trimmed = text.trim();
  let out = stripCodeFence(trimmed);
  if (out !== trimmed) repairs.push('code fence');
  const start = out.indexOf('{');
  const end = out.lastIndexOf('}');
  // Only cut when there is an object to keep: `[1,2]` must stay an array so the error says so.
  if (start !== -1 && end > start) {
    if (out.slice(0, start).trim() !== '' || out.slice(end + 1).trim() !== '') repairs.push('text around the object');
    out = out.slice(start, end + 1);
  }
  const withoutCommas = removeTrailingCommas(out);
  if (withoutCommas !== out) repairs.push('trailing commas');
  return { text: withoutCommas, repairs };
}

const FENCE = /^```[a-zA-Z0-9_-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?```\s*$/;

function stripCodeFence(text: string): string {
  // A fence may also follow some chatter ("Here are the arguments:\n```json ...").
  const at = text.indexOf('```');
  if (at === -1) return text;
  const match = FENCE.exec(text.slice(at));
  return (
    match?.[1] ??
    text
      .slice(at)
      .replace(/^```[a-zA-Z0-9_-]*/, '')
      .replace(/```\s*$/, '')
  );
}

/** Drops a `,` whose next non-space character is `}` or `]`, ignoring commas inside strings. */
function removeTrailingCommas(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') {
        out += text[i + 1] ?? '';
        i++;
      } else if (ch === '"') {
        inString = false;
      }
      continue;
    }
    if (ch === '"') inString = true;
    if (ch === ',') {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === '}' || text[j] === ']') continue;
    }
    out += ch;
  }
  return out;
}
