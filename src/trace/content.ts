/**
 * Message content as the GenAI conventions record it on spans (`gen_ai.input.messages`,
 * `gen_ai.output.messages`, `gen_ai.system_instructions`: JSON of `{role, parts}`), only
 * when content capture is on, always redacted and cut to a length.
 */
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../model/types.js';
import { toolResultText } from '../model/types.js';
import type { Redactor } from '../security/redact.js';
import { finishReason } from './semconv.js';

/** How content is recorded: redacted, then cut. */
export interface ContentPolicy {
  redactor: Redactor;
  maxChars: number;
}

/** `text` cut to `max` characters with a marker saying how much was left out. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [cut: ${text.length - max} more characters]`;
}

type Part = Record<string, unknown>;

function userParts(message: UserMessage): Part[] {
  if (typeof message.content === 'string') return [{ type: 'text', content: message.content }];
  return message.content.map((part) =>
    part.type === 'text' ? { type: 'text', content: part.text } : { type: 'blob', modality: 'image', mime_type: part.mimeType },
  );
}

function assistantParts(message: AssistantMessage): Part[] {
  const parts: Part[] = [];
  for (const block of message.content) {
    if (block.type === 'text') parts.push({ type: 'text', content: block.text });
    else if (block.type === 'thinking') parts.push({ type: 'reasoning', content: block.redacted ? '' : block.thinking });
    else parts.push({ type: 'tool_call', id: block.id, name: block.name, arguments: block.arguments });
  }
  return parts;
}

function toolParts(message: ToolResultMessage): Part[] {
  return [{ type: 'tool_call_response', id: message.toolCallId, response: toolResultText(message.content) }];
}

/** One message in the conventions' shape. */
export function conventionMessage(message: Message): Part {
  if (message.role === 'user') return { role: 'user', parts: userParts(message) };
  if (message.role === 'tool') return { role: 'tool', parts: toolParts(message) };
  return { role: 'assistant', parts: assistantParts(message), finish_reason: finishReason(message.stopReason) };
}

/** A JSON value as a content attribute: redacted, serialized, cut. */
export function contentAttribute(value: unknown, policy: ContentPolicy): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return cut(policy.redactor.redactText(text), policy.maxChars);
}
