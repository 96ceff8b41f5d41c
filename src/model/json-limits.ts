/**
 * Bounds on JSON a model or server sends. `JSON.parse` reads any depth, but what comes
 * after it — `JSON.stringify`, `structuredClone`, schema validation, redaction — recurses,
 * and 5,000 levels (10 KB of brackets) overflow V8's stack. Depth is measured here without
 * recursion, on the text before it is parsed or on a parsed value, so a too-deep input is
 * refused instead of crashing whatever touches it next.
 */

/** Deepest nesting of tool-call arguments accepted (objects and arrays, the outer object being 1). */
export const MAX_ARGUMENT_DEPTH = 64;
/** Longest tool-call argument text accepted, in characters (1 Mi). */
export const MAX_ARGUMENT_CHARS = 1_048_576;
/**
 * Most characters of one model response read (its body as text: events, framing and all):
 * a legitimate long answer streamed a token per event stays well below; a server sending
 * deltas without end is cut here instead of filling memory.
 */
export const MAX_ANSWER_CHARS = 32 * 1024 * 1024;
/** Deepest nesting of one event or body a server sends; deeper is an invalid response. */
export const MAX_WIRE_DEPTH = 512;

/**
 * The nesting depth of JSON `text`, counting `{` and `[` outside strings; stops counting
 * once past `limit` (returns `limit + 1`). Malformed text is measured as far as it goes.
 */
export function jsonTextDepth(text: string, limit: number = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth = Math.max(0, depth - 1);
  }
  return deepest;
}

/**
 * Whether JSON `text` nests deeper than `limit`. A text of `limit` characters or fewer
 * cannot (each level takes a bracket), and is answered without a scan: most events and
 * arguments are short, and a per-character loop is slow while it is still interpreted
 * (the first requests of a process).
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  return text.length > limit && jsonTextDepth(text, limit) > limit;
}

/** The nesting depth of a parsed JSON value (a scalar is 0), without recursion; stops past `limit`. */
export function jsonValueDepth(value: unknown, limit: number = Number.POSITIVE_INFINITY): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > deepest) {
      deepest = depth;
      if (deepest > limit) return deepest;
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** The error for arguments nested past {@link MAX_ARGUMENT_DEPTH}. */
export const TOO_DEEP_ARGUMENTS = `arguments are nested more than ${MAX_ARGUMENT_DEPTH} levels deep (the limit on objects and arrays inside each other): send a flatter structure`;

/**
 * Why tool-call argument text is refused before it is parsed, or undefined when it is
 * within the limits: a message naming the limit, that a model can act on.
 */
export function argumentLimitError(text: string): string | undefined {
  if (text.length > MAX_ARGUMENT_CHARS) {
    return `arguments are ${text.length.toLocaleString('en-US')} characters long; the limit is ${MAX_ARGUMENT_CHARS.toLocaleString('en-US')}: send less in one call (split the work, or write a large file in parts)`;
  }
  if (nestsDeeperThan(text, MAX_ARGUMENT_DEPTH)) {
    return TOO_DEEP_ARGUMENTS;
  }
  return undefined;
}

/**
 * The argument text to send back to a provider in the history: the model's own text when
 * it was a JSON object within the limits (the adapter parsed it into `arguments`), else
 * `{}`. Malformed or oversized text sent back verbatim gets a request refused by some
 * providers (and a 1 MB call would be paid for on every later turn); the tool's error
 * result, right after the call, tells the model what was wrong with it.
 */
export function wireArguments(call: { arguments: Record<string, unknown>; rawArguments: string }): string {
  const raw = call.rawArguments;
  for (const _ in call.arguments) return raw; // parsed, so valid and within the limits
  if (raw === '' || raw === '{}') return '{}';
  // Rare: a refused call, or a hand-made history whose `arguments` were left empty.
  for (const _ in parseArgumentObject(raw)) return raw;
  return /^\s*\{\s*\}\s*$/.test(raw) ? raw : '{}';
}

/** `JSON.parse(text)` when `text` is within the argument limits and parses to an object; else `{}`. */
export function parseArgumentObject(text: string): Record<string, unknown> {
  if (argumentLimitError(text) !== undefined) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
