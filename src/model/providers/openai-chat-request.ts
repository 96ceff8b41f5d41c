/**
 * Building an OpenAI Chat Completions request (`POST {baseUrl}/chat/completions`) from
 * rein's provider-neutral {@link Context}.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { apiTarget, type ApiTarget } from '../base-url.js';
import { normalizeToolCallIds, prepareHistory } from '../handoff.js';
import { isRecord } from '../json.js';
import type {
  AssistantMessage,
  ChatCompat,
  Context,
  ImageContent,
  Message,
  ModelRef,
  StreamOptions,
  TextContent,
  ToolResultMessage,
  UserMessage,
} from '../types.js';
import { chatCompat } from './chat-compat.js';
import { wireArguments } from '../json-limits.js';

type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** One message of the `messages` array, as Chat Completions takes it. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ContentPart[] }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: ChatToolCall[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A tool call of an assistant message, as sent back. */
export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** The call's vendor extras, as the server sent them (Gemini 3's `google.thought_signature`). */
  extra_content?: Record<string, unknown>;
}

/** The JSON body of a Chat Completions request. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: Array<{ type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }>;
  stream?: boolean;
  stream_options?: { include_usage: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  reasoning_effort?: 'low' | 'medium' | 'high';
  temperature?: number;
}

/**
 * The request body. `maxTokens` goes out as `max_tokens`, which Ollama, vLLM, LM Studio,
 * OpenRouter, Groq and DeepSeek all read, except against api.openai.com, whose reasoning
 * models (o-series, gpt-5) reject `max_tokens` and require `max_completion_tokens`. Both
 * builders follow the model's compatibility record (`chat-compat.ts`), which also holds
 * the refusals remembered in `chat-refusals.ts` (process-wide): a server that refused
 * `stream_options` is not sent it, and a model that refused `max_tokens` gets
 * `max_completion_tokens`.
 */
export function buildChatRequest(model: ModelRef, context: Context, options: StreamOptions = {}): ChatRequest {
  const messages: ChatMessage[] = [];
  if (context.system !== undefined && context.system !== '') messages.push({ role: 'system', content: context.system });
  const compat = chatCompat(model);
  for (const message of chatHistory(context.messages, model, compat.toolCallIds)) {
    const converted = toChatMessage(message);
    if (converted !== undefined) messages.push(converted);
  }
  const request: ChatRequest = { model: model.id, messages };
  if (context.tools !== undefined && context.tools.length > 0) request.tools = toChatTools(context.tools);
  if (options.stream !== false) {
    request.stream = true;
    if (compat.streamUsage) request.stream_options = { include_usage: true };
  }
  if (options.maxTokens !== undefined) {
    if (compat.maxTokensField === 'max_completion_tokens') request.max_completion_tokens = options.maxTokens;
    else request.max_tokens = options.maxTokens;
  }
  const effort = reasoningEffort(model, options);
  if (effort !== undefined) request.reasoning_effort = effort;
  if (options.temperature !== undefined) request.temperature = options.temperature;
  return request;
}

/**
 * `thinking` as Chat Completions' `reasoning_effort` (OpenAI's reasoning models, Azure,
 * Groq, vLLM, Ollama and OpenRouter read it). `off` is not sent: the wire has no one word
 * for it (`minimal`, `none`) that the models taking the others all accept. A model that
 * refused the parameter is not sent it again (`chat-refusals.ts`).
 */
export function reasoningEffort(model: ModelRef, options: StreamOptions, compat?: Readonly<ChatCompat>): ChatRequest['reasoning_effort'] {
  const level = options.thinking;
  if (level === undefined || level === 'off' || !(compat ?? chatCompat(model)).reasoningEffort) return undefined;
  return level;
}

/** The history made valid for `model`, with its tool call ids rewritten where the server's id rule asks for it. */
function chatHistory(messages: Message[], model: ModelRef, ids: ChatCompat['toolCallIds']): Message[] {
  const history = prepareHistory(messages, model);
  return ids === 'mistral' ? normalizeToolCallIds(history, isMistralId, mistralId) : history;
}

/** Mistral's rule: nine letters and digits. */
const MISTRAL_ID = /^[A-Za-z0-9]{9}$/;
const isMistralId = (id: string): boolean => MISTRAL_ID.test(id);

/** A Mistral-valid id made from `id` (its letters and digits, then the position), unique within the history. */
function mistralId(id: string, index: number): string {
  const suffix = index.toString(36);
  return `${id
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(-(9 - suffix.length))
    .padStart(9 - suffix.length, '0')}${suffix}`;
}

// Messages in a history are never changed once written (the loop only appends), so each
// one is serialized once, on the first request that carries it, and the loop sends the same
// array, grown by a few messages, every turn: the joined text of each history array is kept
// with the messages it was made from, and a request only checks that those are still in
// place (pointer comparisons) and appends the new ones. Anything else (a compaction, a
// context message replaced at the end) is found by that check and rebuilt from the point
// where the array changed.
const messageJson = new WeakMap<object, string | null>();
const toolsJson = new WeakMap<object, string>();

/** The messages a history array's JSON was joined from, and where each one's JSON ends. */
interface JoinedMessages {
  refs: Message[];
  ends: number[];
  json: string;
}
const joinedJson = new WeakMap<readonly Message[], JoinedMessages>();

/** The JSON of `list`'s messages, comma-separated. */
function messagesJson(list: readonly Message[]): string {
  let joined = joinedJson.get(list);
  if (joined === undefined) {
    joined = { refs: [], ends: [], json: '' };
    joinedJson.set(list, joined);
  }
  const { refs, ends } = joined;
  const same = Math.min(refs.length, list.length);
  let kept = 0;
  while (kept < same && refs[kept] === list[kept]) kept++;
  if (kept < refs.length) {
    refs.length = kept;
    ends.length = kept;
    joined.json = kept === 0 ? '' : joined.json.slice(0, ends[kept - 1]);
  }
  let json = joined.json;
  for (let i = kept; i < list.length; i++) {
    const message = list[i] as Message;
    let one = messageJson.get(message);
    if (one === undefined) {
      const converted = toChatMessage(message);
      one = converted === undefined ? null : JSON.stringify(converted);
      messageJson.set(message, one);
    }
    if (one !== null) json = json === '' ? one : `${json},${one}`;
    refs.push(message);
    ends.push(json.length);
  }
  joined.json = json;
  return json;
}

/**
 * The request body as JSON text, equal to `JSON.stringify(buildChatRequest(…))`, built from
 * JSON cached across requests: the cost of a request no longer grows with the
 * re-serialization of the whole history. Treat messages as immutable once sent.
 */
export function buildChatBody(
  model: ModelRef,
  context: Context,
  options: StreamOptions = {},
  compat: Readonly<ChatCompat> = chatCompat(model),
): string {
  const history = messagesJson(chatHistory(context.messages, model, compat.toolCallIds));
  const system = context.system !== undefined && context.system !== '' ? JSON.stringify({ role: 'system', content: context.system }) : '';
  const messages = system === '' ? history : history === '' ? system : `${system},${history}`;
  let body = `{"model":${JSON.stringify(model.id)},"messages":[${messages}]`;
  const tools = context.tools;
  if (tools !== undefined && tools.length > 0) {
    let json = toolsJson.get(tools);
    if (json === undefined) {
      json = JSON.stringify(toChatTools(tools));
      toolsJson.set(tools, json);
    }
    body += `,"tools":${json}`;
  }
  if (options.stream !== false) body += compat.streamUsage ? ',"stream":true,"stream_options":{"include_usage":true}' : ',"stream":true';
  if (options.maxTokens !== undefined) body += `,"${compat.maxTokensField}":${JSON.stringify(options.maxTokens)}`;
  const effort = reasoningEffort(model, options, compat);
  if (effort !== undefined) body += `,"reasoning_effort":"${effort}"`;
  if (options.temperature !== undefined) body += `,"temperature":${JSON.stringify(options.temperature)}`;
  return `${body}}`;
}

function toChatMessage(message: Message): ChatMessage | undefined {
  if (message.role === 'user') return userMessage(message);
  if (message.role === 'tool') return toolMessage(message);
  return assistantMessage(message);
}

function toChatTools(tools: NonNullable<Context['tools']>): NonNullable<ChatRequest['tools']> {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/** The request headers: JSON, the bearer key when there is one, then the model's own headers. */
export function chatHeaders(model: ModelRef): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json',
  };
  if (model.apiKey !== undefined && model.apiKey !== '') headers.authorization = `Bearer ${model.apiKey}`;
  if (model.headers !== undefined) Object.assign(headers, model.headers);
  return headers;
}

const targets = new Map<string, ApiTarget>();

/** `{baseUrl}/chat/completions` (the base's query kept after it), parsed once per base URL (this is on every request). */
export function chatUrl(baseUrl: string): URL {
  return chatTarget(baseUrl).url;
}

/** The request URL, its text and the text errors quote (URL getters are slow in Node 20: read once per base URL). */
export function chatTarget(baseUrl: string): ApiTarget {
  let target = targets.get(baseUrl);
  if (target === undefined) {
    target = apiTarget(baseUrl, (base) => `${base}/chat/completions`);
    if (targets.size > 64) targets.clear();
    targets.set(baseUrl, target);
  }
  return target;
}

function userMessage(message: UserMessage): ChatMessage {
  if (typeof message.content === 'string') return { role: 'user', content: message.content };
  // Text-only content goes as a plain string: every OpenAI-compatible server accepts that,
  // while some older local servers reject the array form.
  if (message.content.every((part) => part.type === 'text')) {
    return { role: 'user', content: (message.content as TextContent[]).map((part) => part.text).join('\n') };
  }
  return {
    role: 'user',
    content: message.content.map(
      (part): ContentPart =>
        part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image_url', image_url: { url: dataUrl(part) } },
    ),
  };
}

function assistantMessage(message: AssistantMessage): ChatMessage | undefined {
  let text = '';
  const toolCalls: NonNullable<Extract<ChatMessage, { role: 'assistant' }>['tool_calls']> = [];
  for (const block of message.content) {
    // Thinking is dropped: Chat Completions has no slot to send it back in.
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_call') {
      const call: ChatToolCall = {
        id: block.id,
        type: 'function',
        // The model's own text, not a re-serialization; `{}` when it wrote nothing (several
        // servers reject an empty arguments string) or something that is not a JSON object.
        function: { name: block.name, arguments: wireArguments(block) },
      };
      // The signature reaches here only on the model's own turns (prepareHistory drops it
      // for any other target): Gemini 3 refuses a call sent back without its extras.
      const extra = block.signature === undefined ? undefined : extraContent(block.signature);
      if (extra !== undefined) call.extra_content = extra;
      toolCalls.push(call);
    }
  }
  // An empty assistant turn (e.g. aborted before any output) is rejected by most servers.
  if (text === '' && toolCalls.length === 0) return undefined;
  if (toolCalls.length === 0) return { role: 'assistant', content: text };
  return { role: 'assistant', content: text === '' ? null : text, tool_calls: toolCalls };
}

/** A call's `extra_content`, from the JSON the decoder kept as its signature (another API's signature is not one). */
function extraContent(signature: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(signature);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function toolMessage(message: ToolResultMessage): ChatMessage {
  // Tool messages carry text only in Chat Completions; an image is marked where it was.
  const parts = message.content;
  const content = parts.length === 1 ? partText(parts[0] as TextContent | ImageContent) : parts.map(partText).join('\n');
  return { role: 'tool', tool_call_id: message.toolCallId, content };
}

function partText(part: TextContent | ImageContent): string {
  return part.type === 'text' ? part.text : '[image]';
}

function dataUrl(image: ImageContent): string {
  return `data:${image.mimeType};base64,${image.data}`;
}
