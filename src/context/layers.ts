/**
 * The layers a request is assembled from, and how they reach the wire.
 *
 * System-role layers (the system prompt, project rules, the skills catalog) are joined
 * into the request's `system`: they change rarely, so the provider's prompt cache keeps
 * them. User-role layers (the task record, memory hits) change every turn, so they go in
 * one context message at the end of the request — after the latest tool results, or just
 * before the user's latest words — where a change invalidates no cached prefix, and no
 * tool call is ever separated from its result. That message is built for the request
 * only; the history is never touched.
 */
import type { Message, UserMessage } from '../model/types.js';

/** One layer of a request. */
export interface Layer {
  /** `system`, `rules`, `skills`, `task`, `memory`, or any id a hook adds. */
  id: string;
  /** `system`: joined into the system prompt. `user`: shown in the context message at the end of the request. */
  role: 'system' | 'user';
  text: string;
}

/** The first line of the context message, so the model knows the harness wrote it. */
export const CONTEXT_BLOCK_HEADER = '[Context from the harness for this turn, not written by the user]';

/** The system-role layers joined, or `undefined` when there are none. */
export function joinSystem(layers: readonly Layer[]): string | undefined {
  let text: string | undefined;
  for (const layer of layers) {
    if (layer.role !== 'system' || layer.text.trim() === '') continue;
    text = text === undefined ? layer.text : `${text}\n\n${layer.text}`;
  }
  return text;
}

/** The user-role layers as the text of the context message, or `undefined` when there are none. */
export function joinUser(layers: readonly Layer[]): string | undefined {
  let text: string | undefined;
  for (const layer of layers) {
    if (layer.role !== 'user' || layer.text.trim() === '') continue;
    text = text === undefined ? `${CONTEXT_BLOCK_HEADER}\n\n${layer.text}` : `${text}\n\n${layer.text}`;
  }
  return text;
}

/**
 * The messages of a request with the context message placed: after the last message, or
 * before it when it is the user's (so the user's words stay last). Returns the same array
 * every turn, extended in place with only the messages added since, so the cost per turn
 * does not grow with the history. The source must only grow between calls; anything else
 * (a compaction, a new array) is detected and the array rebuilt.
 */
export class RequestMessages {
  private source: readonly Message[] | undefined;
  private copied = 0;
  private out: Message[] = [];

  /** `source` with `block` placed. Never changes `source`. */
  place(source: readonly Message[], block: UserMessage): Message[] {
    const last = source[source.length - 1];
    const beforeLast = last?.role === 'user';
    const prefix = beforeLast ? source.length - 1 : source.length;
    const out = this.out;
    const unchanged =
      this.source === source &&
      this.copied <= prefix &&
      (this.copied === 0 || (out[0] === source[0] && out[this.copied - 1] === source[this.copied - 1]));
    if (!unchanged) {
      // A new array (or one rewritten in place): hand out a new one, since the old one may
      // still be referenced by the request that used it.
      this.out = [];
      this.copied = 0;
      this.source = source;
    }
    const target = this.out;
    target.length = this.copied;
    for (let i = this.copied; i < prefix; i++) target.push(source[i] as Message);
    this.copied = prefix;
    target.push(block);
    if (beforeLast) target.push(last);
    return target;
  }

  /** Forgets the source: the next call rebuilds. */
  reset(): void {
    this.source = undefined;
    this.copied = 0;
    this.out = [];
  }
}
