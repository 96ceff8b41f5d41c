/**
 * When to compact, and where a history may be cut. The rules every provider enforces —
 * no tool result without its call right before it, no call without its results — hold
 * for the kept tail by construction: a tail only ever starts where no tool call is open.
 */
import type { Message } from '../model/types.js';

/** Compaction starts when the next request would reach this fraction of the window. */
export const DEFAULT_THRESHOLD = 0.7;
/** Turns kept verbatim by default. */
export const DEFAULT_KEEP_TURNS = 5;

/**
 * Whether a request of `estimate` tokens should be compacted first.
 *
 * @example
 * shouldCompact(95_000, 128_000); // true: 95k ≥ 70% of 128k
 */
export function shouldCompact(estimate: number, window: number, threshold: number = DEFAULT_THRESHOLD): boolean {
  return estimate >= window * threshold;
}

/**
 * Indices where a turn starts: a user or assistant message that no later tool result
 * reaches back across (every tool call before it has all its results before it too). A
 * turn is such a message and everything up to the next one — typically an assistant
 * message with its tool results, or a user message.
 */
export function turnStarts(history: readonly Message[]): number[] {
  // Where each call id was made, to see how far back each result reaches.
  const callAt = new Map<string, number>();
  history.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    for (const block of message.content) if (block.type === 'tool_call') callAt.set(block.id, index);
  });
  const starts: number[] = [];
  let reach = Number.POSITIVE_INFINITY; // the earliest call index a result at or after i answers
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i] as Message;
    if (message.role === 'tool') {
      const at = callAt.get(message.toolCallId);
      if (at !== undefined && at < i) reach = Math.min(reach, at);
      continue;
    }
    if (reach >= i) starts.push(i);
  }
  return starts.reverse();
}

/** A history cut in two: the head to summarize and the tail kept verbatim. */
export interface CompactionSplit {
  /** Index of the first kept message: the head is `history.slice(0, keepFrom)`. */
  keepFrom: number;
  head: Message[];
  tail: Message[];
  /** Turns in the tail. */
  keptTurns: number;
}

/**
 * Splits `history` so the last `keepTurns` turns (see {@link turnStarts}) are kept
 * verbatim. The tail never starts with a tool result and never separates a tool call from
 * its results. `undefined` when the history has no more than `keepTurns` turns (nothing
 * would be summarized).
 *
 * @example
 * const split = splitForCompaction(messages, 5);
 * if (split) console.log(`summarize ${split.head.length}, keep ${split.tail.length}`);
 */
export function splitForCompaction(history: readonly Message[], keepTurns: number = DEFAULT_KEEP_TURNS): CompactionSplit | undefined {
  const starts = turnStarts(history).filter((i) => i > 0);
  const keep = Math.max(1, Math.floor(keepTurns));
  if (starts.length < keep) return undefined;
  const keepFrom = starts[starts.length - keep] as number;
  return { keepFrom, head: history.slice(0, keepFrom), tail: history.slice(keepFrom), keptTurns: keep };
}
