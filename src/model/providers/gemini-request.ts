/**
 * Building a Gemini `generateContent` / `streamGenerateContent` request from rein's
 * provider-neutral {@link Context}.
 *
 * What Gemini needs that the other APIs do not:
 * - roles are `user` and `model`, and consecutive contents of one role are merged into one
 *   (older models reject a history that does not alternate);
 * - tool results are `functionResponse` parts in a user content, all results of one turn
 *   in one content, in the order of the calls. Gemini matches them to calls by position
 *   and name: rein's call ids are not sent (they may come from another provider);
 * - a `thoughtSignature` goes back on the very part it came on, and only to the model that
 *   wrote it (`prepareHistory` drops other models' signatures). Gemini 3 rejects a turn
 *   whose function calls carry none, so calls without one (another model's, or a history
 *   edited by hand) get the placeholder Google documents for that case.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { apiTarget, type ApiTarget } from '../base-url.js';
import { prepareHistory } from '../handoff.js';
import type {
  AssistantMessage,
  Context,
  ImageContent,
  Message,
  ModelRef,
  StreamOptions,
  TextContent,
  ToolResultMessage,
} from '../types.js';
import { declarationParameters } from './gemini-schema.js';

/**
 * The signature Google documents for function calls that Gemini did not write ("transfer a
 * trace from another model"): https://ai.google.dev/gemini-api/docs/thought-signatures
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/** Thinking budgets (tokens) per level; Gemini 3 maps a budget onto its thinking levels. */
const BUDGETS = { low: 1024, medium: 8192, high: 24576 } as const;
/** The smallest budget of the models that cannot stop thinking (2.5 Pro: 128–32768). */
const MIN_PRO_BUDGET = 128;

/**
 * The model generation read from its id (`gemini-2.5-flash` → 2.5). `-latest` aliases
 * follow the newest release (3); other names (a proxy's alias) are taken as 2.5, which
 * gets JSON Schema and thinking but none of the Gemini 3 specifics. Gemma models: 0.
 */
export function geminiGeneration(id: string): number {
  const bare = id.replace(/^models\//, '');
  const version = /^gemini-(\d+(?:\.\d+)?)/.exec(bare)?.[1];
  if (version !== undefined) return Number(version);
  if (/^gemini-.*-latest$/.test(bare)) return 3;
  if (bare.startsWith('gemma')) return 0;
  return 2.5;
}

/**
 * `{baseUrl}/v1beta/models/{id}:streamGenerateContent?alt=sse` (or `:generateContent`), the
 * base's query kept and merged with `alt`, parsed once.
 */
export function geminiUrl(model: ModelRef, stream: boolean): URL {
  return geminiTarget(model, stream).url;
}

/** The request URL, its text and the text errors quote, made once per base URL, model and method. */
export function geminiTarget(model: ModelRef, stream: boolean): ApiTarget {
  const key = `${model.baseUrl}\n${model.id}\n${stream}`;
  let target = targets.get(key);
  if (target === undefined) {
    const id = encodeURIComponent(model.id.replace(/^models\//, ''));
    const path = (base: string): string => {
      // Accept a base that already names the version, as some proxies document it.
      const versioned = /\/v1(?:beta|alpha)?\d*$/.test(base) ? base : `${base}/v1beta`;
      return `${versioned}/models/${id}:${stream ? 'streamGenerateContent' : 'generateContent'}`;
    };
    // A streamed request must ask for server-sent events, whatever `alt` the base carries.
    target = apiTarget(model.baseUrl, path, stream ? { alt: 'sse' } : {});
    if (targets.size > 64) targets.clear();
    targets.set(key, target);
  }
  return target;
}

const targets = new Map<string, ApiTarget>();

/** The request headers. The key goes in `x-goog-api-key`, never in the URL, so it never lands in logs. */
export function geminiHeaders(model: ModelRef): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json' };
  if (model.apiKey !== undefined && model.apiKey !== '') headers['x-goog-api-key'] = model.apiKey;
  if (model.headers !== undefined) Object.assign(headers, model.headers);
  return headers;
}

// Messages are never changed once written, so each is converted once per variant (Gemini 3
// or older) and reused on every later turn, instead of re-serializing the whole history.
const partsCache = [new WeakMap<object, string>(), new WeakMap<object, string>()] as const;
const toolsCache = [new WeakMap<object, string>(), new WeakMap<object, string>()] as const;

/**
 * The JSON body of the request. Built from per-message JSON cached across requests: treat
 * messages as immutable once sent.
 *
 * @example
 * const body = JSON.parse(buildGeminiBody(model, { system: 'Be brief.', messages }));
 * body.contents; // [{ role: 'user', parts: [{ text: '…' }] }, …]
 */
export function buildGeminiBody(model: ModelRef, context: Context, options: StreamOptions = {}): string {
  const generation = geminiGeneration(model.id);
  const modern = generation >= 3 ? 1 : 0;
  const contents: Array<{ role: 'user' | 'model'; parts: string }> = [];
  const add = (role: 'user' | 'model', parts: string): void => {
    if (parts === '') return;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts += `,${parts}`;
    else contents.push({ role, parts });
  };
  const cached = (message: Message): string => {
    let json = partsCache[modern].get(message);
    if (json === undefined) {
      json = partsOf(message, modern === 1);
      partsCache[modern].set(message, json);
    }
    return json;
  };
  const messages = prepareHistory(context.messages, model);
  let calls: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role !== 'tool') {
      if (message.role === 'assistant') calls = message.content.flatMap((c) => (c.type === 'tool_call' ? [c.id] : []));
      add(message.role === 'assistant' ? 'model' : 'user', cached(message));
      continue;
    }
    let end = i;
    while (messages[end]?.role === 'tool') end++;
    // In the order of the calls, which is how Gemini pairs results with calls.
    const position = (result: ToolResultMessage): number => {
      const at = calls.indexOf(result.toolCallId);
      return at === -1 ? calls.length : at;
    };
    const results = (messages.slice(i, end) as ToolResultMessage[]).sort((a, b) => position(a) - position(b));
    for (const result of results) add('user', cached(result));
    i = end - 1;
  }
  let body = `{"contents":[${contents.map((c) => `{"role":"${c.role}","parts":[${c.parts}]}`).join(',')}]`;
  if (context.system !== undefined && context.system !== '')
    body += `,"systemInstruction":{"parts":[{"text":${JSON.stringify(context.system)}}]}`;
  const tools = context.tools;
  if (tools !== undefined && tools.length > 0) {
    const jsonSchema = generation >= 2.5 ? 1 : 0;
    let json = toolsCache[jsonSchema].get(tools);
    if (json === undefined) {
      const functionDeclarations = tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        ...declarationParameters(tool.parameters, jsonSchema === 1),
      }));
      json = JSON.stringify([{ functionDeclarations }]);
      toolsCache[jsonSchema].set(tools, json);
    }
    body += `,"tools":${json}`;
  }
  const config = generationConfig(model.id, generation, options);
  if (config !== undefined) body += `,"generationConfig":${JSON.stringify(config)}`;
  return `${body}}`;
}

/** `generationConfig`, or `undefined` when there is nothing to set. */
export function generationConfig(id: string, generation: number, options: StreamOptions): Record<string, unknown> | undefined {
  const config: Record<string, unknown> = {};
  if (options.maxTokens !== undefined) config.maxOutputTokens = options.maxTokens;
  if (options.temperature !== undefined) config.temperature = options.temperature;
  // Models before 2.5 do not think and reject a thinkingConfig.
  if (options.thinking !== undefined && generation >= 2.5) {
    if (options.thinking === 'off') {
      // Flash models stop thinking at budget 0; Pro models cannot, and get their minimum.
      config.thinkingConfig = { thinkingBudget: /-pro\b/.test(id) ? MIN_PRO_BUDGET : 0 };
    } else {
      config.thinkingConfig = { thinkingBudget: BUDGETS[options.thinking], includeThoughts: true };
    }
  }
  return Object.keys(config).length > 0 ? config : undefined;
}

/** A message's parts as a JSON fragment (`{…},{…}`, or '' when it has none to send). */
function partsOf(message: Message, modern: boolean): string {
  let parts: Array<Record<string, unknown>>;
  if (message.role === 'user') {
    const content = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
    // Gemini rejects empty text parts.
    parts = content.flatMap((part) => (part.type === 'image' ? [inlineData(part)] : part.text === '' ? [] : [{ text: part.text }]));
  } else if (message.role === 'assistant') {
    parts = modelParts(message, modern);
  } else {
    parts = resultParts(message, modern);
  }
  return parts.map((part) => JSON.stringify(part)).join(',');
}

function modelParts(message: AssistantMessage, modern: boolean): Array<Record<string, unknown>> {
  const parts: Array<Record<string, unknown>> = [];
  let signedCall = false;
  let firstCall: Record<string, unknown> | undefined;
  for (const block of message.content) {
    if (block.type === 'text') {
      // An empty text part is kept only to carry its signature back.
      if (block.text !== '' || block.signature !== undefined) parts.push(signed({ text: block.text }, block.signature));
    } else if (block.type === 'thinking') {
      if (!block.redacted && (block.thinking !== '' || block.signature !== undefined))
        parts.push(signed({ text: block.thinking, thought: true }, block.signature));
    } else {
      const part = signed({ functionCall: { name: block.name, args: block.arguments } }, block.signature);
      if (block.signature !== undefined) signedCall = true;
      firstCall ??= part;
      parts.push(part);
    }
  }
  // Gemini 3 signs the first call of a turn (only that one, for parallel calls) and
  // rejects a turn whose calls carry no signature at all.
  if (modern && firstCall !== undefined && !signedCall) firstCall.thoughtSignature = SKIP_SIGNATURE;
  return parts;
}

/**
 * A tool result: a `functionResponse` with `output` (or `error`: the keys Google's
 * reference names). Images go inside it on Gemini 3, which reads multimodal function
 * responses; older models get them as parts right after it, in the same user content.
 */
function resultParts(message: ToolResultMessage, modern: boolean): Array<Record<string, unknown>> {
  const text = message.content
    .filter((part): part is TextContent => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
  const images = message.content.filter((part): part is ImageContent => part.type === 'image').map(inlineData);
  const functionResponse: Record<string, unknown> = {
    name: message.toolName,
    response: message.isError ? { error: text } : { output: text },
  };
  if (modern && images.length > 0) functionResponse.parts = images;
  return modern ? [{ functionResponse }] : [{ functionResponse }, ...images];
}

function signed(part: Record<string, unknown>, signature: string | undefined): Record<string, unknown> {
  if (signature !== undefined) part.thoughtSignature = signature;
  return part;
}

function inlineData(image: ImageContent): Record<string, unknown> {
  return { inlineData: { mimeType: image.mimeType, data: image.data } };
}
