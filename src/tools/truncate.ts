/**
 * Cutting long tool output. A tool that dumps a 2 MB log would blow the context window;
 * the model is better served by the head and the tail (where errors usually are) and an
 * honest note of how much is missing. Nothing is lost: the dispatcher keeps the whole text
 * in the result's `details.fullOutput` (stored with `tool_finished`, never sent to a
 * model), and when a `read_tool_output` tool is registered the marker tells the model how
 * to page through the part it did not see.
 */
import type { ImageContent, TextContent } from '../model/types.js';

/** The default limit of tool output, in characters (UTF-16 code units). */
export const DEFAULT_MAX_OUTPUT_CHARS = 16_000;

/** The name of the paging tool: when it is registered, a cut result's marker names it. */
export const READ_TOOL_OUTPUT = 'read_tool_output';

/**
 * The whole text of a result that was cut, as kept in `result.details.fullOutput`: its text
 * parts joined by a line break (images are not repeated here; they stay in `content`).
 */
export interface FullOutput {
  text: string;
  /** `text.length`, so a reader of the log sees the size without measuring. */
  chars: number;
}

/** Where the model can read what a marker removed: the call, and the offset in its full output. */
export interface ReadMoreHint {
  toolCallId: string;
  /** Offset of the truncated text within the full output (0 for the first text part). */
  base: number;
}

type Part = TextContent | ImageContent;

/** A count as the model reads it: `12,345`. */
export const formatCount = (n: number): string => n.toLocaleString('en-US');

/**
 * Returns `text` unchanged when it has at most `maxChars` characters; otherwise keeps its
 * first and last `maxChars / 2` characters around a marker saying how much was cut. The
 * marker comes on top of the `maxChars` kept. With a `hint`, the marker also says how to
 * read the removed part with `read_tool_output`.
 *
 * @example
 * truncateText('x'.repeat(64_213), 16_000);
 * // 'xxx…\n… [truncated: 48,213 of 64,213 characters removed] …\nxxx…'
 * truncateText('x'.repeat(64_213), 16_000, { toolCallId: 'call_1', base: 0 });
 * // '…[truncated: 48,213 of 64,213 characters removed; call read_tool_output with
 * //   tool_call_id "call_1" and offset 8000 to read more] …'
 */
export function truncateText(text: string, maxChars: number = DEFAULT_MAX_OUTPUT_CHARS, hint?: ReadMoreHint): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(0, Math.floor(maxChars));
  let headEnd = Math.ceil(keep / 2);
  let tailStart = text.length - (keep - headEnd);
  // Never split a surrogate pair: half an emoji is not valid UTF-16 and some providers reject
  // it. A lone surrogate of the text's own right at the cut goes into the removed part too.
  while (headEnd > 0 && !wholeBefore(text, headEnd)) headEnd--;
  while (tailStart < text.length && !wholeAt(text, tailStart)) tailStart++;
  const removed = tailStart - headEnd;
  // The offset is written without separators: the model copies it into a JSON integer.
  const more = hint
    ? `; call ${READ_TOOL_OUTPUT} with tool_call_id ${JSON.stringify(hint.toolCallId)} and offset ${hint.base + headEnd} to read more`
    : '';
  const marker = `\n… [truncated: ${formatCount(removed)} of ${formatCount(text.length)} characters removed${more}] …\n`;
  return text.slice(0, headEnd) + marker + text.slice(tailStart);
}

/** The number of text characters of a result's parts (images count 0). */
export function textLength(parts: readonly Part[]): number {
  let total = 0;
  for (const part of parts) if (part.type === 'text') total += part.text.length;
  return total;
}

/**
 * Cuts a result whose text is longer than `maxChars` (check with {@link textLength} first:
 * this always builds a new array) and returns the cut parts with the whole text. With a
 * `toolCallId`, every marker says where `read_tool_output` finds what it removed, as an
 * offset into {@link FullOutput.text}.
 */
export function cutToolOutput(parts: Part[], maxChars: number, toolCallId?: string): { content: Part[]; fullOutput: FullOutput } {
  const content = cutParts(parts, maxChars, toolCallId);
  const text = joinText(parts);
  return { content, fullOutput: { text, chars: text.length } };
}

/**
 * `details` with the full output added under `fullOutput`. A tool's own details that are a
 * plain object keep their fields; any other value (an array, a string) moves to `value`.
 */
export function withFullOutput(details: unknown, fullOutput: FullOutput): Record<string, unknown> {
  if (details === undefined) return { fullOutput };
  if (details !== null && typeof details === 'object' && !Array.isArray(details))
    return { ...(details as Record<string, unknown>), fullOutput };
  return { value: details, fullOutput };
}

/**
 * The whole text of a result the dispatcher cut (from `details.fullOutput`), or `undefined`
 * when it was not cut.
 */
export function fullOutputOf(result: { details?: unknown }): string | undefined {
  const details = result.details;
  if (details === null || typeof details !== 'object') return undefined;
  const full = (details as { fullOutput?: unknown }).fullOutput;
  if (full === null || typeof full !== 'object') return undefined;
  const text = (full as { text?: unknown }).text;
  return typeof text === 'string' ? text : undefined;
}

/** The text parts joined by a line break: the coordinates of every marker's offset. */
function joinText(parts: readonly Part[]): string {
  let single: string | undefined;
  let count = 0;
  for (const part of parts) {
    if (part.type !== 'text') continue;
    single = part.text;
    count++;
  }
  // One text part (the usual case) is kept as is: no copy of a large string.
  if (count <= 1) return single ?? '';
  return parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
}

function cutParts(parts: Part[], maxChars: number, toolCallId: string | undefined): Part[] {
  const total = textLength(parts);
  let base = 0;
  let first = true;
  return parts.map((part) => {
    if (part.type !== 'text') return part;
    if (!first) base += 1; // the line break joinText puts between text parts
    first = false;
    const share = Math.floor((maxChars * part.text.length) / total);
    const hint = toolCallId === undefined ? undefined : { toolCallId, base };
    base += part.text.length;
    return { type: 'text', text: truncateText(part.text, share, hint) };
  });
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Whether `text` up to `end` ends with a whole character: not a surrogate, or the second half of a pair. */
function wholeBefore(text: string, end: number): boolean {
  const last = text.charCodeAt(end - 1);
  if (isHighSurrogate(last)) return false;
  return !isLowSurrogate(last) || (end >= 2 && isHighSurrogate(text.charCodeAt(end - 2)));
}

/** Whether `text` from `start` begins with a whole character: not a surrogate, or the first half of a pair. */
function wholeAt(text: string, start: number): boolean {
  const first = text.charCodeAt(start);
  if (isLowSurrogate(first)) return false;
  return !isHighSurrogate(first) || isLowSurrogate(text.charCodeAt(start + 1));
}

/** The second half of a surrogate pair: a cut before it would split a character. */
export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
