/**
 * Cutting long tool output. A tool that dumps a 2 MB log would blow the context window;
 * the model is better served by the head and the tail (where errors usually are) and an
 * honest note of how much is missing.
 */
import type { ImageContent, TextContent } from '../model/types.js';

/** The default limit of tool output, in characters (UTF-16 code units). */
export const DEFAULT_MAX_OUTPUT_CHARS = 16_000;

const formatCount = (n: number): string => n.toLocaleString('en-US');

/**
 * Returns `text` unchanged when it has at most `maxChars` characters; otherwise keeps its
 * first and last `maxChars / 2` characters around a marker saying how much was cut. The
 * marker comes on top of the `maxChars` kept.
 *
 * @example
 * truncateText('x'.repeat(64_213), 16_000);
 * // 'xxx…\n… [truncated: 48,213 of 64,213 characters removed] …\nxxx…'
 */
export function truncateText(text: string, maxChars: number = DEFAULT_MAX_OUTPUT_CHARS): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(0, Math.floor(maxChars));
  let headEnd = Math.ceil(keep / 2);
  let tailStart = text.length - (keep - headEnd);
  // Never split a surrogate pair: half an emoji is not valid UTF-16 and some providers reject it.
  if (headEnd > 0 && isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd--;
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  const removed = tailStart - headEnd;
  const marker = `\n… [truncated: ${formatCount(removed)} of ${formatCount(text.length)} characters removed] …\n`;
  return text.slice(0, headEnd) + marker + text.slice(tailStart);
}

/**
 * Applies {@link truncateText} to the text parts of a tool result so that together they
 * keep at most `maxChars` characters; each long part gets a share proportional to its
 * length. Images pass through untouched. Returns the input array when nothing was cut.
 */
export function truncateContent(
  parts: Array<TextContent | ImageContent>,
  maxChars: number = DEFAULT_MAX_OUTPUT_CHARS,
): Array<TextContent | ImageContent> {
  let total = 0;
  for (const part of parts) if (part.type === 'text') total += part.text.length;
  if (total <= maxChars) return parts;
  return parts.map((part) => {
    if (part.type !== 'text') return part;
    const share = Math.floor((maxChars * part.text.length) / total);
    return { type: 'text', text: truncateText(part.text, share) };
  });
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
