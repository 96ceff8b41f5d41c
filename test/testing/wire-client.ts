/**
 * A small client for the scripted server's Anthropic, Responses and Gemini wires, written
 * from the recordings in `shared/fixtures/` (no rein adapter on purpose): posting, SSE
 * parsing, folding each wire's events into what a client would assemble, and comparing the
 * shape of our events with the recorded ones.
 */
import { readFileSync } from 'node:fs';
import type { Wire } from './helpers.js';

/** One SSE event: its `event:` name (if any) and parsed `data:`. */
export interface SseEvent {
  event?: string;
  data: Wire;
}

export const ANTHROPIC_HEADERS = { 'anthropic-version': '2023-06-01' };

/** POSTs JSON to `origin + path`; a string body is sent verbatim. */
export function postTo(origin: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Parses an SSE body (LF or CRLF line ends, as Gemini sends them). `[DONE]` is skipped. */
export function parseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    let data = '';
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data += line.slice(5).trim();
    }
    if (data === '' || data === '[DONE]') continue;
    events.push(event === undefined ? { data: JSON.parse(data) as Wire } : { event, data: JSON.parse(data) as Wire });
  }
  return events;
}

const FIXTURES = new URL('../../../shared/fixtures/', import.meta.url);

/** A recording's events: `.sse` parsed, `.chunks.jsonl` one data object per line (event = its type). */
export function recording(name: string): SseEvent[] {
  const text = readFileSync(new URL(name, FIXTURES), 'utf8');
  if (name.endsWith('.sse')) return parseEvents(text);
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const data = JSON.parse(line) as Wire;
      return { event: String(data.type), data };
    });
}

/** A recorded JSON body. */
export function recordedJson(name: string): Wire {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Wire;
}

/** What a client assembles from a response. */
export interface Folded {
  text: string;
  thinking: string;
  calls: Array<{ id?: string; name: string; arguments: string }>;
  stop?: unknown;
  usage?: Wire;
  signatures: string[];
  error?: Wire;
}

function folded(): Folded {
  return { text: '', thinking: '', calls: [], signatures: [] };
}

/** Folds Anthropic Messages events. */
export function foldAnthropic(events: SseEvent[]): Folded {
  const out = folded();
  const blocks: Wire[] = [];
  for (const { data } of events) {
    if (data.type === 'message_start') out.usage = data.message.usage;
    else if (data.type === 'content_block_start') blocks[data.index] = { ...data.content_block, partial: '' };
    else if (data.type === 'content_block_delta') {
      const delta = data.delta;
      if (delta.type === 'text_delta') out.text += delta.text;
      else if (delta.type === 'thinking_delta') out.thinking += delta.thinking;
      else if (delta.type === 'signature_delta') out.signatures.push(delta.signature);
      else if (delta.type === 'input_json_delta') blocks[data.index]!.partial += delta.partial_json;
    } else if (data.type === 'content_block_stop') {
      const block = blocks[data.index]!;
      if (block.type === 'tool_use') out.calls.push({ id: block.id, name: block.name, arguments: block.partial });
    } else if (data.type === 'message_delta') {
      out.stop = data.delta.stop_reason;
      out.usage = { ...out.usage, ...data.usage };
    } else if (data.type === 'error') out.error = data.error;
  }
  return out;
}

/** Folds an Anthropic `message` body. */
export function foldAnthropicMessage(body: Wire): Folded {
  const out = folded();
  for (const block of body.content) {
    if (block.type === 'text') out.text += block.text;
    if (block.type === 'thinking') {
      out.thinking += block.thinking;
      out.signatures.push(block.signature);
    }
    if (block.type === 'tool_use') out.calls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
  }
  out.stop = body.stop_reason;
  out.usage = body.usage;
  return out;
}

/** Folds OpenAI Responses events. */
export function foldResponses(events: SseEvent[]): Folded {
  const out = folded();
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const { data } of events) {
    if (data.type === 'response.output_text.delta') out.text += data.delta;
    else if (data.type === 'response.reasoning_summary_text.delta') out.thinking += data.delta;
    else if (data.type === 'response.output_item.added' && data.item.type === 'function_call') {
      calls[data.output_index] = { id: data.item.call_id, name: data.item.name, arguments: '' };
    } else if (data.type === 'response.function_call_arguments.delta') calls[data.output_index]!.arguments += data.delta;
    else if (data.type === 'response.function_call_arguments.done') calls[data.output_index]!.arguments = data.arguments;
    else if (data.type === 'error') out.error = data.error;
    else if (data.type === 'response.completed' || data.type === 'response.incomplete' || data.type === 'response.failed') {
      out.stop = data.response.status;
      out.usage = data.response.usage ?? undefined;
      if (data.response.error) out.error = data.response.error;
    }
  }
  out.calls = calls.filter(Boolean);
  return out;
}

/** Folds a Responses `response` body. */
export function foldResponseBody(body: Wire): Folded {
  const out = folded();
  for (const item of body.output) {
    if (item.type === 'message') for (const part of item.content) out.text += part.text ?? '';
    if (item.type === 'reasoning') for (const part of item.summary) out.thinking += part.text;
    if (item.type === 'function_call') out.calls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
  }
  out.stop = body.status;
  out.usage = body.usage;
  return out;
}

/** Folds Gemini `GenerateContentResponse` chunks (or one body). */
export function foldGemini(chunks: Wire[]): Folded {
  const out = folded();
  for (const chunk of chunks) {
    if (chunk.error) out.error = chunk.error;
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (typeof part.thoughtSignature === 'string') out.signatures.push(part.thoughtSignature);
      if (part.functionCall) out.calls.push({ name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) });
      else if (part.thought === true) out.thinking += part.text;
      else if (typeof part.text === 'string') out.text += part.text;
    }
    if (candidate?.finishReason) out.stop = candidate.finishReason;
    if (chunk.usageMetadata) out.usage = chunk.usageMetadata;
  }
  return out;
}

/** Keys seen anywhere at each position of some samples: objects merged, arrays by their elements. */
type Shape = Map<string, Shape>;

function addShape(shape: Shape, value: unknown): void {
  if (Array.isArray(value)) {
    for (const element of value) addShape(shape, element);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, child] of Object.entries(value)) {
    let sub = shape.get(key);
    if (!sub) shape.set(key, (sub = new Map()));
    addShape(sub, child);
  }
}

/** Members whose content is the user's data (tool arguments, schemas), not the wire's shape. */
const OPAQUE = new Set(['input', 'args', 'response', 'parameters', 'input_schema', 'metadata']);

function extraKeys(value: unknown, shape: Shape, path: string, out: string[]): void {
  if (Array.isArray(value)) {
    for (const element of value) extraKeys(element, shape, `${path}[]`, out);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, child] of Object.entries(value)) {
    const sub = shape.get(key);
    if (sub === undefined) out.push(`${path}.${key}`);
    // A recorded leaf (e.g. `input: {}`) says nothing about what may be inside.
    else if (sub.size > 0 && !OPAQUE.has(key)) extraKeys(child, sub, `${path}.${key}`, out);
  }
}

/**
 * Fields of our events that no recorded event of the same kind has, as `kind.path` strings:
 * empty when every field we send is one the real API sends. `kind` groups events (e.g. by
 * `type` and block type); kinds the recordings never show are listed in `unmatched`.
 */
export function unrecordedFields(ours: Wire[], recorded: Wire[], kind: (data: Wire) => string): { extra: string[]; unmatched: string[] } {
  const shapes = new Map<string, Shape>();
  for (const data of recorded) {
    const k = kind(data);
    let shape = shapes.get(k);
    if (!shape) shapes.set(k, (shape = new Map()));
    addShape(shape, data);
  }
  const extra: string[] = [];
  const unmatched = new Set<string>();
  for (const data of ours) {
    const k = kind(data);
    const shape = shapes.get(k);
    if (shape === undefined) unmatched.add(k);
    else extraKeys(data, shape, k, extra);
  }
  return { extra: [...new Set(extra)], unmatched: [...unmatched] };
}
