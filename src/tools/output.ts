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
 * anything else (`undefined`, a number, an object without `content`) is shown as text.
 */
export function normalizeOutput(output: ToolOutput | unknown): NormalizedOutput {
  if (typeof output === 'string') return { content: [text(output)], isError: false, terminate: false };
  if (output === undefined || output === null) return { content: [text('')], isError: false, terminate: false };
  if (typeof output !== 'object' || !('content' in output)) {
    return { content: [text(stringify(output))], isError: false, details: output, terminate: false };
  }
  const o = output as Exclude<ToolOutput, string>;
  const normalized: NormalizedOutput = {
    content: toParts(o.content),
    isError: o.isError === true,
    terminate: o.terminate === true,
  };
  if (o.details !== undefined) normalized.details = o.details;
  return normalized;
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

function stringify(value: unknown): string {
  if (value === undefined) return EMPTY;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
