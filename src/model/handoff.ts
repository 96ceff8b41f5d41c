/**
 * Cross-provider handoff, the part every API shares: making a history written by any
 * model (or hand-made, or cut short by an abort) valid for `target`. Each adapter applies
 * its own API's rules on top (tool call id formats, where thinking may go).
 *
 * - Assistant turns that ended in `error` or `aborted` are not replayed.
 * - Thinking written by another model becomes plain text (its signature means nothing to
 *   `target`); redacted thinking from another model is dropped. Signatures on text and
 *   tool calls from another model are dropped.
 * - A tool call left without a result gets a synthetic error result, right after the
 *   results that did arrive; a tool result whose call is not in the assistant turn before
 *   it is dropped. Every API rejects either.
 *
 * Cheap when there is nothing to do: the common history (written by `target` itself, no
 * gaps) is returned as is, after one scan and no allocation.
 */
import type { AssistantMessage, Message, ModelRef, ToolResultMessage } from './types.js';

/** True when `message` was written by `target` itself, so its thinking and signatures apply. */
export function sameModel(message: AssistantMessage, target: ModelRef): boolean {
  return message.provider === target.provider && message.model === target.id && (message.api === undefined || message.api === target.api);
}

/** The history made valid for `target` (the input array itself when it already is). */
export function prepareHistory(messages: readonly Message[], target: ModelRef): Message[] {
  if (isClean(messages, target)) return messages as Message[];
  const out: Message[] = [];
  let open: { ids: string[]; answered: Set<string>; call: AssistantMessage } | undefined;
  const closeOpen = (): void => {
    if (!open) return;
    for (const block of open.call.content) {
      if (block.type === 'tool_call' && !open.answered.has(block.id)) out.push(syntheticResult(block.id, block.name));
    }
    open = undefined;
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      if (!open || !open.ids.includes(message.toolCallId) || open.answered.has(message.toolCallId)) continue;
      open.answered.add(message.toolCallId);
      out.push(message);
      continue;
    }
    closeOpen();
    if (message.role === 'user') {
      out.push(message);
      continue;
    }
    if (message.stopReason === 'error' || message.stopReason === 'aborted') continue;
    const converted = sameModel(message, target) ? message : foreignAssistant(message);
    if (converted.content.length === 0) continue;
    out.push(converted);
    const ids = converted.content.flatMap((c) => (c.type === 'tool_call' ? [c.id] : []));
    if (ids.length > 0) open = { ids, answered: new Set(), call: converted };
  }
  closeOpen();
  return out;
}

/**
 * How far a history array was found clean for a target. The loop sends the same array,
 * appended to, every turn (messages are never changed once written), so each request only
 * checks the messages added since the last one.
 */
interface CleanPrefix {
  target: ModelRef;
  length: number;
  last: Message | undefined;
}
const cleanPrefixes = new WeakMap<readonly Message[], CleanPrefix>();

/** Anything to change? One scan, over the messages not already found clean. */
function isClean(messages: readonly Message[], target: ModelRef): boolean {
  const known = cleanPrefixes.get(messages);
  const from =
    known && known.target === target && known.length <= messages.length && messages[known.length - 1] === known.last ? known.length : 0;
  if (!scanClean(messages, from, target)) return false;
  cleanPrefixes.set(messages, { target, length: messages.length, last: messages[messages.length - 1] });
  return true;
}

/** Whether `messages[from…]` is clean, given that everything before `from` is (no call open there). */
function scanClean(messages: readonly Message[], from: number, target: ModelRef): boolean {
  let pending: Set<string> | undefined;
  for (let i = from; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role === 'tool') {
      if (!pending || !pending.delete(message.toolCallId)) return false;
      continue;
    }
    if (pending && pending.size > 0) return false;
    pending = undefined;
    if (message.role === 'user') continue;
    if (message.stopReason === 'error' || message.stopReason === 'aborted') return false;
    if (message.content.length === 0) return false;
    const own = sameModel(message, target);
    for (const block of message.content) {
      if (block.type === 'tool_call') (pending ??= new Set()).add(block.id);
      if (!own && (block.type === 'thinking' || block.signature !== undefined)) return false;
    }
  }
  return !pending || pending.size === 0;
}

/** Another model's turn: its thinking as plain text, its opaque signatures dropped. */
function foreignAssistant(message: AssistantMessage): AssistantMessage {
  const content: AssistantMessage['content'] = [];
  for (const block of message.content) {
    if (block.type === 'thinking') {
      if (!block.redacted && block.thinking.trim() !== '') content.push({ type: 'text', text: block.thinking });
    } else if (block.signature !== undefined) {
      const { signature: _dropped, ...rest } = block;
      content.push(rest);
    } else {
      content.push(block);
    }
  }
  return { ...message, content };
}

/** The error result that stands in for a call's missing result (the call was interrupted, so it may or may not have run). */
export function syntheticResult(toolCallId: string, toolName: string): ToolResultMessage {
  return {
    role: 'tool',
    toolCallId,
    toolName,
    content: [
      { type: 'text', text: `tool "${toolName}" has no result: the call was interrupted before it finished (it may or may not have run)` },
    ],
    isError: true,
  };
}

/**
 * Rewrites tool call ids that `valid` rejects, consistently in calls and results, so an
 * API with strict id rules accepts ids another provider generated. Returns the input
 * array when every id is valid.
 */
export function normalizeToolCallIds(
  messages: Message[],
  valid: (id: string) => boolean,
  make: (id: string, index: number) => string,
): Message[] {
  const renamed = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type === 'tool_call' && !valid(block.id) && !renamed.has(block.id)) renamed.set(block.id, make(block.id, renamed.size));
    }
  }
  if (renamed.size === 0) return messages;
  return messages.map((message): Message => {
    if (message.role === 'tool') {
      const id = renamed.get(message.toolCallId);
      return id === undefined ? message : { ...message, toolCallId: id };
    }
    if (message.role !== 'assistant' || !message.content.some((c) => c.type === 'tool_call' && renamed.has(c.id))) return message;
    return {
      ...message,
      content: message.content.map((c) => (c.type === 'tool_call' && renamed.has(c.id) ? { ...c, id: renamed.get(c.id) as string } : c)),
    };
  });
}
