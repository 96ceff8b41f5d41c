/**
 * Building an OpenAI Responses request (`POST {baseUrl}/responses`) from rein's
 * provider-neutral {@link Context}.
 *
 * The request is stateless (`store: false`): nothing is kept on OpenAI's side between
 * turns, so the whole history goes every time, and the model's own reasoning goes back as
 * the encrypted reasoning items it returned (kept whole in `ThinkingContent.signature`).
 */
import { createHash } from 'node:crypto';
import type { OutgoingHttpHeaders } from 'node:http';
import { apiTarget, type ApiTarget } from '../base-url.js';
import { normalizeToolCallIds, prepareHistory } from '../handoff.js';
import type {
  AssistantMessage,
  Context,
  ImageContent,
  JsonSchema,
  Message,
  ModelRef,
  StreamOptions,
  TextContent,
  ThinkingContent,
  ToolResultMessage,
  UserMessage,
} from '../types.js';
import { isRecord } from '../json.js';
import { wireArguments } from '../json-limits.js';

type InputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' };

/** A reasoning summary part, as the API returns it and takes it back. */
export interface SummaryPart {
  type: 'summary_text';
  text: string;
}

/** One item of the `input` array. */
export type ResponsesInputItem =
  | { role: 'user'; content: InputContent[] }
  | { type: 'message'; role: 'assistant'; content: Array<{ type: 'output_text'; text: string }>; id?: string; phase?: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string; id?: string }
  | { type: 'function_call_output'; call_id: string; output: string | InputContent[] }
  | { type: 'reasoning'; id: string; encrypted_content: string; summary: SummaryPart[] };

/** Reasoning effort as the API names it (`none` and `minimal` only serve `thinking: 'off'`). */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high';

/** The JSON body of a Responses request. */
export interface ResponsesRequest {
  model: string;
  instructions?: string;
  input: ResponsesInputItem[];
  tools?: Array<{ type: 'function'; name: string; description: string; parameters: JsonSchema; strict: false }>;
  stream?: boolean;
  store: false;
  include?: string[];
  reasoning?: { effort?: ReasoningEffort; summary?: 'auto' };
  max_output_tokens?: number;
  temperature?: number;
}

/** The options part of the body, after `input` and `tools`, in body order. */
type RequestOptions = Omit<ResponsesRequest, 'model' | 'instructions' | 'input' | 'tools'>;

/**
 * The request body as an object. See {@link buildResponsesBody} for the text actually sent
 * (the same JSON, built from per-message caches).
 *
 * - `instructions` carries the system prompt.
 * - Tools go with `strict: false`: the Responses API makes function tools strict by
 *   default, which rejects ordinary JSON Schemas (optional properties, no
 *   `additionalProperties: false`).
 * - Reasoning: see {@link isReasoningModel} and `requestOptions` below.
 */
export function buildResponsesRequest(model: ModelRef, context: Context, options: StreamOptions = {}): ResponsesRequest {
  const head: { model: string; instructions?: string } = { model: model.id };
  if (context.system !== undefined && context.system !== '') head.instructions = context.system;
  const input = historyFor(model, context.messages).flatMap(toInputItems);
  const tools = context.tools !== undefined && context.tools.length > 0 ? { tools: toTools(context.tools) } : {};
  return { ...head, input, ...tools, ...requestOptions(model, options) };
}

// Messages in a history are never changed once written (the loop only appends), so each
// one is serialized once, on the first request that carries it, instead of on every turn.
// The mapping reads nothing but the message: what depends on the target model (foreign
// thinking, signatures, tool call ids) was settled by `historyFor`, which hands out new
// objects for whatever it changes.
const itemsJson = new WeakMap<object, string>();
const toolsJson = new WeakMap<object, string>();

/**
 * The request body as JSON text, equal to `JSON.stringify(buildResponsesRequest(…))`, built
 * from per-message JSON cached across requests. Treat messages as immutable once sent.
 */
export function buildResponsesBody(model: ModelRef, context: Context, options: StreamOptions = {}): string {
  let input = '';
  for (const message of historyFor(model, context.messages)) {
    let json = itemsJson.get(message);
    if (json === undefined) {
      json = toInputItems(message)
        .map((item) => JSON.stringify(item))
        .join(',');
      itemsJson.set(message, json);
    }
    if (json !== '') input = input === '' ? json : `${input},${json}`;
  }
  let body = `{"model":${JSON.stringify(model.id)}`;
  if (context.system !== undefined && context.system !== '') body += `,"instructions":${JSON.stringify(context.system)}`;
  body += `,"input":[${input}]`;
  const tools = context.tools;
  if (tools !== undefined && tools.length > 0) {
    let json = toolsJson.get(tools);
    if (json === undefined) {
      json = JSON.stringify(toTools(tools));
      toolsJson.set(tools, json);
    }
    body += `,"tools":${json}`;
  }
  for (const [key, value] of Object.entries(requestOptions(model, options))) body += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return `${body}}`;
}

/**
 * True for OpenAI's reasoning models by name: the o-series, gpt-5 (not `gpt-5-chat`) and
 * codex. Only they accept `include: ["reasoning.encrypted_content"]` (gpt-4o answers 400
 * "Encrypted content is not supported with this model") and only they reject `temperature`.
 * A provider prefix (`openai/gpt-5` on a router) is ignored.
 */
export function isReasoningModel(id: string): boolean {
  const name = id.slice(id.lastIndexOf('/') + 1).toLowerCase();
  return /^(?:o\d|gpt-5|codex)/.test(name) && !/^gpt-5(?:\.\d+)?-chat/.test(name);
}

const ENCRYPTED_REASONING = 'reasoning.encrypted_content';

/**
 * `thinking` → `reasoning` and `include`:
 * - `low` / `medium` / `high`: that effort with `summary: 'auto'`, so the reasoning shows as
 *   thinking text; the caller asked for reasoning, so the model is taken to support it.
 * - unset: the server's default effort and no summary (summaries need a verified
 *   organization on some models, which would turn a plain request into a 400).
 * - `off`: nothing for other models; reasoning models get their lowest effort: `none`
 *   (gpt-5.1 and later), `minimal` (gpt-5), `low` (o-series, codex: they cannot stop reasoning).
 * Whenever the model reasons, its reasoning is requested encrypted so it can go back
 * statelessly on the next turn.
 */
function requestOptions(model: ModelRef, options: StreamOptions): RequestOptions {
  const reasoningModel = isReasoningModel(model.id);
  const level = options.thinking;
  const out: RequestOptions = options.stream === false ? { store: false } : { stream: true, store: false };
  if (level === 'low' || level === 'medium' || level === 'high') {
    out.include = [ENCRYPTED_REASONING];
    out.reasoning = { effort: level, summary: 'auto' };
  } else if (reasoningModel) {
    out.include = [ENCRYPTED_REASONING];
    if (level === 'off') out.reasoning = { effort: lowestEffort(model.id) };
  }
  if (options.maxTokens !== undefined) out.max_output_tokens = options.maxTokens;
  if (options.temperature !== undefined && !reasoningModel) out.temperature = options.temperature;
  return out;
}

function lowestEffort(id: string): ReasoningEffort {
  const name = id.slice(id.lastIndexOf('/') + 1).toLowerCase();
  if (/^gpt-5\.\d/.test(name)) return 'none';
  if (name.startsWith('gpt-5')) return 'minimal';
  return 'low';
}

/**
 * The history made valid for `model`: the shared cleanup of {@link prepareHistory}, then
 * tool call ids other providers wrote that this API would refuse renamed consistently.
 */
function historyFor(model: ModelRef, messages: readonly Message[]): Message[] {
  return normalizeToolCallIds(prepareHistory(messages, model), isValidCallId, safeCallId);
}

// `call_id` is at most 64 characters; Anthropic (`toolu_01…`), OpenAI and Gemini ids all
// pass, but routers forward ids like `functions.get_weather:0` or longer ones.
function isValidCallId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(id);
}

/** A stable replacement (the same id maps to the same name on every turn, keeping the prompt cache warm). */
function safeCallId(id: string): string {
  return `call_${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;
}

function toTools(tools: NonNullable<Context['tools']>): NonNullable<ResponsesRequest['tools']> {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: false,
  }));
}

function toInputItems(message: Message): ResponsesInputItem[] {
  if (message.role === 'user') return userItems(message);
  if (message.role === 'tool') return [toolOutput(message)];
  return assistantItems(message);
}

function userItems(message: UserMessage): ResponsesInputItem[] {
  const content: InputContent[] =
    typeof message.content === 'string' ? [{ type: 'input_text', text: message.content }] : message.content.map(inputContent);
  return content.length === 0 ? [] : [{ role: 'user', content }];
}

function toolOutput(message: ToolResultMessage): ResponsesInputItem {
  // Text alone goes as a string, which every Responses server takes; images need the
  // array form (OpenAI accepts input_text / input_image parts in a function_call_output).
  const output = message.content.every((part) => part.type === 'text')
    ? (message.content as TextContent[]).map((part) => part.text).join('\n')
    : message.content.map(inputContent);
  return { type: 'function_call_output', call_id: message.toolCallId, output };
}

function assistantItems(message: AssistantMessage): ResponsesInputItem[] {
  const reasoning = message.content.filter((block): block is ThinkingContent => block.type === 'thinking').map(reasoningItem);
  // OpenAI pairs the message and function_call items of a turn with its reasoning items and
  // rejects an item id whose reasoning item is missing; when one cannot go back, the ids
  // are left out and the items count as new.
  const keepIds = reasoning.every((item) => item !== undefined);
  const items: ResponsesInputItem[] = [];
  let thinkingIndex = 0;
  for (const block of message.content) {
    if (block.type === 'thinking') {
      // Thinking without a replayable item (no encrypted content) is dropped: the API takes
      // the model's reasoning back only as its own items.
      const item = reasoning[thinkingIndex++];
      if (item !== undefined) items.push(item);
    } else if (block.type === 'text') {
      if (block.text === '') continue;
      const ref = keepIds ? messageRef(block.signature) : undefined;
      const last = items[items.length - 1];
      // Two text parts of one message item become one item again (ids must be unique).
      if (ref !== undefined && last !== undefined && 'type' in last && last.type === 'message' && last.id === ref.id) {
        last.content.push({ type: 'output_text', text: block.text });
        continue;
      }
      const item: ResponsesInputItem = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: block.text }] };
      if (ref !== undefined) {
        item.id = ref.id;
        if (ref.phase !== undefined) item.phase = ref.phase;
      }
      items.push(item);
    } else {
      const item: ResponsesInputItem = { type: 'function_call', call_id: block.id, name: block.name, arguments: wireArguments(block) };
      // A function_call item id must start with "fc"; one is never invented.
      if (keepIds && block.signature !== undefined && /^fc[A-Za-z0-9_-]{0,62}$/.test(block.signature)) item.id = block.signature;
      items.push(item);
    }
  }
  return items;
}

/** The reasoning item kept in a thinking block's signature, when it can go back statelessly. */
function reasoningItem(block: ThinkingContent): ResponsesInputItem | undefined {
  const item = parseObject(block.signature);
  if (item === undefined || item.type !== 'reasoning' || typeof item.id !== 'string') return undefined;
  // Without encrypted content the item is only a reference to server-side state, which
  // `store: false` does not keep ("Item with id 'rs_…' not found").
  if (typeof item.encrypted_content !== 'string' || item.encrypted_content === '') return undefined;
  const summary = Array.isArray(item.summary)
    ? item.summary.flatMap((part: unknown): SummaryPart[] =>
        isRecord(part) && typeof part.text === 'string' ? [{ type: 'summary_text', text: part.text }] : [],
      )
    : [];
  return { type: 'reasoning', id: item.id, encrypted_content: item.encrypted_content, summary };
}

/**
 * A text block's signature: the message item id, as JSON `{"id":"msg_…","phase":…}` (the
 * decoder writes that form); a bare id is accepted too.
 */
function messageRef(signature: string | undefined): { id: string; phase?: string } | undefined {
  if (signature === undefined) return undefined;
  const parsed = signature.startsWith('{') ? parseObject(signature) : { id: signature };
  const id = parsed?.id;
  if (typeof id !== 'string' || !/^msg[A-Za-z0-9_-]{0,61}$/.test(id)) return undefined;
  return typeof parsed?.phase === 'string' ? { id, phase: parsed.phase } : { id };
}

function inputContent(part: TextContent | ImageContent): InputContent {
  return part.type === 'text'
    ? { type: 'input_text', text: part.text }
    : { type: 'input_image', image_url: `data:${part.mimeType};base64,${part.data}`, detail: 'auto' };
}

/** The request headers: JSON, the bearer key when there is one, then the model's own headers. */
export function responsesHeaders(model: ModelRef): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json' };
  if (model.apiKey !== undefined && model.apiKey !== '') headers.authorization = `Bearer ${model.apiKey}`;
  if (model.headers !== undefined) Object.assign(headers, model.headers);
  return headers;
}

const targets = new Map<string, ApiTarget>();

/** `{baseUrl}/responses` (the base's query kept after it), parsed once per base URL (this is on every request). */
export function responsesUrl(baseUrl: string): URL {
  return responsesTarget(baseUrl).url;
}

/** The request URL, its text and the text errors quote, made once per base URL. */
export function responsesTarget(baseUrl: string): ApiTarget {
  let target = targets.get(baseUrl);
  if (target === undefined) {
    target = apiTarget(baseUrl, (base) => `${base}/responses`);
    if (targets.size > 64) targets.clear();
    targets.set(baseUrl, target);
  }
  return target;
}

function parseObject(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
