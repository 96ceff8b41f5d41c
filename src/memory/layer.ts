/**
 * How retrieved memories are shown to the model: one clearly bounded block, marked as
 * possibly stale, so the model weighs them as notes rather than instructions.
 */
import type { MemorySnippet } from './types.js';

/** Options of {@link memoryLayer}. */
export interface MemoryLayerOptions {
  /** Stop adding snippets once the block would pass this many characters (default 4000). */
  maxChars?: number;
}

/**
 * The context block for retrieved snippets, best first; `''` when there are none, so
 * callers can add it unconditionally.
 *
 * @example
 * const hits = await memory.retrieve(userInput, 5, { signal });
 * const system = [basePrompt, memoryLayer(hits)].filter(Boolean).join('\n\n');
 */
export function memoryLayer(snippets: readonly MemorySnippet[], options: MemoryLayerOptions = {}): string {
  if (snippets.length === 0) return '';
  const maxChars = options.maxChars ?? 4000;
  const head = [
    '<memory>',
    'Notes remembered from earlier work in this project that may bear on this turn, most relevant first. They can be outdated: what you observe now wins. The number in brackets is the memory id.',
  ];
  const foot = '</memory>';
  let size = head.join('\n').length + foot.length + 2;
  const lines: string[] = [];
  for (const snippet of snippets) {
    const line = formatSnippet(snippet);
    // The best snippet is always shown (cut if it must be); later ones only while they fit.
    if (lines.length > 0 && size + line.length + 1 > maxChars) break;
    const fitted = lines.length === 0 && size + line.length + 1 > maxChars ? `${line.slice(0, Math.max(0, maxChars - size - 2))}…` : line;
    lines.push(fitted);
    size += fitted.length + 1;
  }
  return [...head, ...lines, foot].join('\n');
}

/** One snippet as a line: id, text (on one line), then tags, source and date. */
export function formatSnippet(snippet: MemorySnippet): string {
  const facts: string[] = [];
  if (snippet.tags && snippet.tags.length > 0) facts.push(`tags: ${snippet.tags.join(', ')}`);
  if (snippet.source) facts.push(`from: ${snippet.source}`);
  facts.push(new Date(snippet.createdAt).toISOString().slice(0, 10));
  return `- [${snippet.id}] ${snippet.text.replace(/\s*\n\s*/g, ' ')} (${facts.join('; ')})`;
}
