/**
 * Building an Anthropic Messages request (`POST {baseUrl}/v1/messages`) from rein's
 * provider-neutral {@link Context}.
 *
 * The API's rules this file enforces (https://docs.anthropic.com/en/api/messages):
 * - the system prompt is a top-level field, not a message;
 * - tool results are `tool_result` blocks in a *user* message; consecutive results (and a
 *   user message right after them) share one user message, results first, in call order;
 * - roles alternate: consecutive messages of one role are merged into one;
 * - text blocks must contain non-whitespace text, so empty ones are left out;
 * - tool ids must match `^[a-zA-Z0-9_-]{1,64}$`: ids other providers made are rewritten,
 *   consistently in calls and results;
 * - thinking goes back with its signature, and only then (an unsigned one is sent as
 *   text); redacted thinking goes back as `redacted_thinking` with its opaque data;
 * - with thinking on, the first assistant message of an unfinished tool loop must start
 *   with thinking.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { apiTarget, type ApiTarget } from '../base-url.js';
import { normalizeToolCallIds, prepareHistory } from '../handoff.js';
import type {
  AssistantMessage,
  Context,
  ImageContent,
  Message,
  ModelRef,
  StreamOptions,
  TextContent,
  ThinkingLevel,
  ToolResultMessage,
  UserMessage,
} from '../types.js';

/** The `anthropic-version` header: the wire format this adapter speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Thinking budgets (tokens) per level. 1024 is the smallest budget Anthropic accepts. */
export const THINKING_BUDGETS: Record<Exclude<ThinkingLevel, 'off'>, number> = { low: 1024, medium: 4096, high: 16384 };

/** Room left for the answer above the thinking budget when `maxTokens` was too small for both. */
const MIN_ANSWER_TOKENS = 1024;

type TextBlock = { type: 'text'; text: string };
type ImageBlock = { type: 'image'; source: { type: 'base64'; media_type: string; data: string } };

/** One content block of a request message. */
export type AnthropicBlock =
  | TextBlock
  | ImageBlock
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content?: Array<TextBlock | ImageBlock>; is_error?: true };

/** One message of the `messages` array. */
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

/** The JSON body of a Messages request. */
export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  system?: string;
  messages: AnthropicMessage[];
  tools?: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
  stream?: true;
  thinking?: { type: 'enabled'; budget_tokens: number };
  temperature?: number;
}

/**
 * The output tokens to ask for when the caller set none. `max_tokens` is required by
 * Anthropic; the Claude 3 (not 3.5+) models allow at most 4096, later ones at least 8192.
 */
export function defaultMaxTokens(modelId: string): number {
  return /claude-3-(?:opus|sonnet|haiku)/.test(modelId) ? 4096 : 8192;
}

/** A request message converted once: its role and its blocks as JSON text (comma-joined). */
interface Converted {
  role: 'user' | 'assistant';
  blocks: string;
  /** The type of the first block. */
  first: AnthropicBlock['type'];
}

// Messages in a history are never changed once written (the loop only appends), so each
// one is converted once, on the first request that carries it, not on every turn.
const converted = new WeakMap<Message, Converted | null>();
const toolsJson = new WeakMap<object, string>();

/**
 * The request body as JSON text. Equal to `JSON.stringify(buildAnthropicRequest(…))`.
 *
 * `max_tokens`: `options.maxTokens`, else {@link defaultMaxTokens}. With thinking on,
 * Anthropic counts the thinking budget inside `max_tokens`: without `maxTokens` the budget
 * is added to the default; an explicit `maxTokens` is the total, raised to budget + 1024
 * when it would leave no room for the answer. Temperature is not sent with thinking
 * (Anthropic rejects any value but 1 then). Thinking is left off for a request that
 * continues a tool loop begun without it (see {@link loopStartsWithThinking}).
 */
export function buildAnthropicBody(model: ModelRef, context: Context, options: StreamOptions = {}): string {
  const history = normalizeToolCallIds(prepareHistory(context.messages, model), isValidToolId, makeToolId);
  const groups: Converted[] = [];
  for (const message of history) {
    let entry = converted.get(message);
    if (entry === undefined) {
      entry = convert(message);
      converted.set(message, entry);
    }
    if (entry === null) continue;
    const last = groups[groups.length - 1];
    if (last !== undefined && last.role === entry.role) last.blocks += `,${entry.blocks}`;
    else groups.push({ ...entry });
  }
  let budget = options.thinking === undefined || options.thinking === 'off' ? undefined : THINKING_BUDGETS[options.thinking];
  if (budget !== undefined && !loopStartsWithThinking(groups)) budget = undefined;

  let maxTokens = options.maxTokens ?? defaultMaxTokens(model.id);
  if (budget !== undefined)
    maxTokens = options.maxTokens === undefined ? maxTokens + budget : Math.max(maxTokens, budget + MIN_ANSWER_TOKENS);
  let body = `{"model":${JSON.stringify(model.id)},"max_tokens":${maxTokens}`;
  if (context.system !== undefined && context.system.trim() !== '') body += `,"system":${JSON.stringify(context.system)}`;
  body += `,"messages":[${groups.map((group) => `{"role":"${group.role}","content":[${group.blocks}]}`).join(',')}]`;
  const tools = context.tools;
  if (tools !== undefined && tools.length > 0) {
    let json = toolsJson.get(tools);
    if (json === undefined) {
      json = JSON.stringify(tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters })));
      toolsJson.set(tools, json);
    }
    body += `,"tools":${json}`;
  }
  if (options.stream !== false) body += ',"stream":true';
  if (budget !== undefined) body += `,"thinking":{"type":"enabled","budget_tokens":${budget}}`;
  else if (options.temperature !== undefined) body += `,"temperature":${JSON.stringify(options.temperature)}`;
  return `${body}}`;
}

/** The request as an object (for inspection and tests; the adapter sends {@link buildAnthropicBody}). */
export function buildAnthropicRequest(model: ModelRef, context: Context, options: StreamOptions = {}): AnthropicRequest {
  return JSON.parse(buildAnthropicBody(model, context, options)) as AnthropicRequest;
}

/** The request headers: JSON, the version, `x-api-key` when there is a key, then the model's own headers. */
export function anthropicHeaders(model: ModelRef): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'anthropic-version': ANTHROPIC_VERSION };
  if (model.apiKey !== undefined && model.apiKey !== '') headers['x-api-key'] = model.apiKey;
  if (model.headers !== undefined) Object.assign(headers, model.headers);
  return headers;
}

const targets = new Map<string, ApiTarget>();

/**
 * `{baseUrl}/v1/messages` (the base's query kept after it), parsed once per base URL. The
 * base is the host, as Anthropic's SDK takes it; a base that already ends in `/v1` (a
 * common mistake, and the shape of OpenAI-style settings) is accepted rather than posting
 * to `/v1/v1/messages`.
 */
export function messagesUrl(baseUrl: string): URL {
  return messagesTarget(baseUrl).url;
}

/** The request URL, its text and the text errors quote, made once per base URL. */
export function messagesTarget(baseUrl: string): ApiTarget {
  let target = targets.get(baseUrl);
  if (target === undefined) {
    target = apiTarget(baseUrl, (base) => (base.endsWith('/v1') ? `${base}/messages` : `${base}/v1/messages`));
    if (targets.size > 64) targets.clear();
    targets.set(baseUrl, target);
  }
  return target;
}

const TOOL_ID = /^[a-zA-Z0-9_-]{1,64}$/;

function isValidToolId(id: string): boolean {
  return TOOL_ID.test(id);
}

/** `call_abc.1` → `call_abc_1_0`: invalid characters replaced, made unique by the rename's index. */
function makeToolId(id: string, index: number): string {
  const suffix = `_${index}`;
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64 - suffix.length)}${suffix}`;
}

function convert(message: Message): Converted | null {
  const blocks = message.role === 'user' ? userBlocks(message) : message.role === 'tool' ? [toolResult(message)] : assistantBlocks(message);
  if (blocks.length === 0) return null;
  return {
    role: message.role === 'assistant' ? 'assistant' : 'user',
    blocks: blocks.map((block) => JSON.stringify(block)).join(','),
    first: blocks[0]?.type ?? 'text',
  };
}

/**
 * With thinking on, Anthropic rejects a request that is in the middle of a tool loop (it
 * ends with tool results) unless the loop's first assistant message starts with a thinking
 * block ("a final assistant message must start with a thinking block, preceding the
 * lastmost set of tool_use and tool_result blocks"). Later steps of the loop need none:
 * without interleaved thinking Claude thinks only at the start of its turn. A loop begun
 * without thinking (by another model, or with thinking off) can only go on without it.
 */
function loopStartsWithThinking(groups: Converted[]): boolean {
  const isResults = (group: Converted | undefined): boolean => group?.role === 'user' && group.first === 'tool_result';
  if (!isResults(groups[groups.length - 1])) return true; // not in a tool loop
  let start = groups.length - 1;
  while (start > 0 && (groups[start - 1]?.role === 'assistant' || isResults(groups[start - 1]))) start--;
  const first = groups.slice(start).find((group) => group.role === 'assistant')?.first;
  return first === 'thinking' || first === 'redacted_thinking';
}

function userBlocks(message: UserMessage): AnthropicBlock[] {
  if (typeof message.content === 'string') return message.content.trim() === '' ? [] : [{ type: 'text', text: message.content }];
  return contentBlocks(message.content);
}

function contentBlocks(parts: Array<TextContent | ImageContent>): Array<TextBlock | ImageBlock> {
  const blocks: Array<TextBlock | ImageBlock> = [];
  for (const part of parts) {
    if (part.type === 'image') blocks.push({ type: 'image', source: { type: 'base64', media_type: part.mimeType, data: part.data } });
    else if (part.text.trim() !== '') blocks.push({ type: 'text', text: part.text });
  }
  return blocks;
}

function toolResult(message: ToolResultMessage): AnthropicBlock {
  const block: Extract<AnthropicBlock, { type: 'tool_result' }> = { type: 'tool_result', tool_use_id: message.toolCallId };
  const content = contentBlocks(message.content);
  // `content` is optional; an empty text block would be rejected.
  if (content.length > 0) block.content = content;
  if (message.isError) block.is_error = true;
  return block;
}

function assistantBlocks(message: AssistantMessage): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'text') {
      if (block.text.trim() !== '') blocks.push({ type: 'text', text: block.text });
    } else if (block.type === 'thinking') {
      // prepareHistory already turned another model's thinking into text; this is ours.
      const signature = block.signature ?? '';
      if (block.redacted === true) {
        if (signature !== '') blocks.push({ type: 'redacted_thinking', data: signature });
      } else if (signature !== '') {
        blocks.push({ type: 'thinking', thinking: block.thinking, signature });
      } else if (block.thinking.trim() !== '') {
        // Unsigned thinking would be rejected as thinking; its words still help as text.
        blocks.push({ type: 'text', text: block.thinking });
      }
    } else {
      blocks.push({ type: 'tool_use', id: block.id, name: block.name, input: block.arguments });
    }
  }
  return blocks;
}
