/**
 * Request validation of the Anthropic Messages wire, with the API's own messages (observed
 * 2024–2025; field paths as `messages.1.content.0`), so a history the scripted server
 * accepts is one api.anthropic.com accepts. Thinking signatures are checked against the
 * scripted server's own: a client must send thinking back unchanged, as Anthropic requires.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { fakeSignature } from './answer.js';
import { isObject } from './wire-format.js';

/** Anthropic's error body: `{type:'error', error:{type, message}}`. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/** An Anthropic error body of `type` (`invalid_request_error`, `overloaded_error`, …). */
export function anthropicError(type: string, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type, message } };
}

/** The signature the scripted server gives `thinking`; see {@link fakeSignature}. */
export function thinkingSignature(thinking: string): string {
  return fakeSignature('anthropic-thinking', thinking);
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;
const NON_EMPTY = 'all messages must have non-empty content except for the optional final assistant message';

type Problem = string;

function checkBlock(block: unknown, at: string, role: string, ids: Set<string>): Problem | undefined {
  if (!isObject(block)) return `${at}: Input should be a valid dictionary`;
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string') return `${at}.text.text: Input should be a valid string`;
      if (block.text === '') return 'messages: text content blocks must be non-empty';
      return undefined;
    case 'image':
    case 'document':
      return role === 'user' ? undefined : `${at}: ${String(block.type)} blocks are only allowed in user messages`;
    case 'thinking':
      if (role !== 'assistant') return `${at}: thinking blocks are only allowed in assistant messages`;
      if (typeof block.thinking !== 'string') return `${at}.thinking.thinking: Field required`;
      if (typeof block.signature !== 'string') return `${at}.thinking.signature: Field required`;
      // Anthropic verifies the signature cryptographically; ours is a hash of the text.
      if (block.signature !== thinkingSignature(block.thinking)) return `${at}: Invalid \`signature\` in \`thinking\` block`;
      return undefined;
    case 'redacted_thinking':
      return typeof block.data === 'string' ? undefined : `${at}.redacted_thinking.data: Field required`;
    case 'tool_use': {
      if (role !== 'assistant') return `${at}: tool_use blocks are only allowed in assistant messages`;
      if (typeof block.id !== 'string') return `${at}.tool_use.id: Field required`;
      if (!TOOL_USE_ID.test(block.id)) return `${at}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
      if (typeof block.name !== 'string') return `${at}.tool_use.name: Field required`;
      if (!isObject(block.input)) return `${at}.tool_use.input: Input should be a valid dictionary`;
      if (ids.has(block.id)) return `${at}: \`tool_use\` ids must be unique`;
      ids.add(block.id);
      return undefined;
    }
    case 'tool_result':
      if (role !== 'user') return `${at}: tool_result blocks are only allowed in user messages`;
      if (typeof block.tool_use_id !== 'string') return `${at}.tool_result.tool_use_id: Field required`;
      if (block.content !== undefined && typeof block.content !== 'string' && !Array.isArray(block.content)) {
        return `${at}.tool_result.content: Input should be a valid string or a valid list`;
      }
      return undefined;
    default:
      return `${at}: Input tag '${String(block.type)}' found using 'type' does not match any of the expected tags: 'text', 'image', 'document', 'thinking', 'redacted_thinking', 'tool_use', 'tool_result'`;
  }
}

/** The `tool_use` ids of an assistant message, or `tool_use_id`s of a user message's results. */
function idsOf(content: unknown, type: 'tool_use' | 'tool_result'): string[] {
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const block of content) {
    if (isObject(block) && block.type === type) out.push(String(type === 'tool_use' ? block.id : block.tool_use_id));
  }
  return out;
}

function checkMessages(messages: unknown): Problem | undefined {
  if (messages === undefined) return 'messages: Field required';
  if (!Array.isArray(messages)) return 'messages: Input should be a valid list';
  if (messages.length === 0) return 'messages: at least one message is required';
  const ids = new Set<string>();
  let previous: string | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    const at = `messages.${i}`;
    if (!isObject(message)) return `${at}: Input should be a valid dictionary`;
    const role = message.role;
    if (role !== 'user' && role !== 'assistant') return `${at}.role: Input should be 'user' or 'assistant'`;
    if (i === 0 && role !== 'user') return 'messages: first message must use the "user" role';
    if (role === previous)
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`;
    previous = role;
    const content = message.content;
    const last = i === messages.length - 1;
    if (typeof content === 'string') {
      if (content === '' && !(last && role === 'assistant')) return `${at}: ${NON_EMPTY}`;
    } else if (Array.isArray(content)) {
      if (content.length === 0 && !(last && role === 'assistant')) return `${at}: ${NON_EMPTY}`;
      for (let j = 0; j < content.length; j++) {
        const failure = checkBlock(content[j], `${at}.content.${j}`, role, ids);
        if (failure) return failure;
      }
    } else {
      return content === undefined ? `${at}.content: Field required` : `${at}.content: Input should be a valid string or a valid list`;
    }
    // Every tool_use is answered in the very next message, and every tool_result answers
    // the message right before it.
    if (role === 'assistant') {
      const uses = idsOf(content, 'tool_use');
      if (uses.length === 0) continue;
      const next: unknown = messages[i + 1];
      const answered = new Set(isObject(next) && next.role === 'user' ? idsOf(next.content, 'tool_result') : []);
      const missing = uses.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `${at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    } else {
      const results = idsOf(content, 'tool_result');
      if (results.length === 0) continue;
      const before: unknown = messages[i - 1];
      const called = new Set(isObject(before) ? idsOf(before.content, 'tool_use') : []);
      const index = results.findIndex((id) => !called.has(id));
      if (index !== -1) {
        const j = (content as unknown[]).findIndex((b) => isObject(b) && b.type === 'tool_result' && b.tool_use_id === results[index]);
        return `${at}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${results[index]}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
  }
  return undefined;
}

function checkTools(tools: unknown): Problem | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return 'tools: Input should be a valid list';
  for (let i = 0; i < tools.length; i++) {
    const tool: unknown = tools[i];
    const at = `tools.${i}`;
    if (!isObject(tool)) return `${at}: Input should be a valid dictionary`;
    // Server tools (`web_search_20250305`, …) have a type of their own and no schema.
    if (tool.type !== undefined && tool.type !== 'custom') continue;
    if (typeof tool.name !== 'string') return `${at}.custom.name: Field required`;
    if (!TOOL_NAME.test(tool.name)) return `${at}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
    const schema = tool.input_schema;
    if (schema === undefined) return `${at}.custom.input_schema: Field required`;
    if (!isObject(schema) || schema.type !== 'object') return `${at}.custom.input_schema.type: Input should be 'object'`;
  }
  return undefined;
}

function checkSettings(body: Record<string, unknown>): Problem | undefined {
  const max = body.max_tokens;
  if (max === undefined) return 'max_tokens: Field required';
  if (typeof max !== 'number' || !Number.isInteger(max)) return 'max_tokens: Input should be a valid integer';
  if (max < 1) return 'max_tokens: Input should be greater than or equal to 1';
  const system = body.system;
  if (system !== undefined && typeof system !== 'string' && !Array.isArray(system))
    return 'system: Input should be a valid string or a valid list';
  const thinking = body.thinking;
  if (isObject(thinking) && thinking.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (typeof budget !== 'number') return 'thinking.enabled.budget_tokens: Field required';
    if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (max <= budget) {
      return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
    }
    if (body.temperature !== undefined && body.temperature !== 1)
      return '`temperature` may only be set to 1 when thinking is enabled or in interleaved thinking mode.';
  }
  return undefined;
}

/**
 * Checks a parsed Messages request (and, when given, its headers) the way Anthropic does.
 * Returns the HTTP 400 body for the first problem, or `undefined` when the request is valid.
 *
 * @example
 * const failure = validateAnthropicRequest(JSON.parse(body), req.headers);
 * if (failure) respond(400, failure);
 */
export function validateAnthropicRequest(body: unknown, headers?: IncomingHttpHeaders): AnthropicErrorBody | undefined {
  const invalid = (message: string): AnthropicErrorBody => anthropicError('invalid_request_error', message);
  if (headers !== undefined && headers['anthropic-version'] === undefined) return invalid('anthropic-version: header is required');
  if (!isObject(body)) return invalid('Input should be a valid dictionary');
  if (typeof body.model !== 'string')
    return invalid(body.model === undefined ? 'model: Field required' : 'model: Input should be a valid string');
  const failure = checkSettings(body) ?? checkMessages(body.messages) ?? checkTools(body.tools);
  return failure === undefined ? undefined : invalid(failure);
}
