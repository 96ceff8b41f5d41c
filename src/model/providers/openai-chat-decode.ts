/**
 * Decoding Chat Completions chunks (streamed, or one non-streaming body) into rein's
 * {@link AssistantStreamEvent}s and the final {@link AssistantMessage}.
 *
 * Quirks handled here, each seen in real recordings (see test/model/openai-chat.*.test.ts):
 * `content: null` / `""`; empty `choices` (Azure's first chunk, the usage chunk); usage in
 * any chunk (DeepSeek: the finish chunk); reasoning as `delta.reasoning_content` (DeepSeek)
 * or `delta.reasoning` (OpenRouter, Groq, Ollama); a whole tool call in one chunk (Ollama);
 * a tool header without `arguments` (vLLM); tool indices starting at 1 (Anthropic-compat);
 * missing, numeric or repeated tool ids (OpenRouter sends "0"); an `error` object inside a
 * 200 stream (OpenRouter) or an `event: error` frame (Groq); no `finish_reason` at all.
 * Seen on servers since: parallel calls all numbered 0, each with its own id (Ollama,
 * LiteLLM's ollama_chat); usage only in `x_groq.usage` (older Groq); a stream that carries
 * nothing before `[DONE]` (a server failing without saying so: an error, not an answer).
 * Not in the recordings but documented, and reported by other clients: content as an
 * array of text and `thinking` parts (Mistral's reasoning models).
 * Replayed from other clients' bug reports: `extra_content` on a tool call (Gemini 3's
 * `thought_signature`, which must go back with the call); a second call's header reusing
 * the first call's index, its arguments then at the next index with no id or name
 * (DeepSeek behind a gateway); `tool_calls` as one object, not an array (older TGI);
 * `<think>…</think>` at the start of `content` (reasoning models served without a
 * reasoning parser); `data: [DONE] ` with trailing blanks; `reasoning_content: ""` beside
 * the text in `reasoning`; choices of other completions (n > 1); a bare error object as a
 * frame (vLLM's `{object: "error"}`, FastAPI's `{detail}`); the finish reasons
 * `model_length` (Mistral), `eos_token` (TGI) and `insufficient_system_resource` (DeepSeek).
 */
import { randomUUID } from 'node:crypto';
import { ReinError } from '../../errors.js';
import type { EventStream } from '../event-stream.js';
import { emptyResponseError, errorFromStreamPayload, streamCutError } from '../http-errors.js';
import type { ErrorContext } from '../http-errors.js';
import { PartialJsonParser } from '../partial-json.js';
import { emptyUsage } from '../types.js';
import type {
  AssistantMessage,
  AssistantStreamEvent,
  ModelRef,
  StopReason,
  TextContent,
  ThinkingContent,
  ToolCall,
  Usage,
} from '../types.js';
import { isRecord, notJsonEventError, tokenCount, type Json } from '../json.js';
import { argumentLimitError } from '../json-limits.js';
import { ThinkTagSplitter } from './think-tags.js';

interface ToolSlot {
  call: ToolCall;
  index: number;
  /**
   * Parses `call.rawArguments` for the `partialArguments` of the deltas, made on the first
   * read: the agent loop never reads them, and a character-by-character parse of every
   * delta cost more than the rest of decoding a chunk.
   */
  parser: PartialJsonParser | undefined;
  /** How many characters of `rawArguments` the parser has consumed. */
  parsed: number;
  /** The call's `index` on the wire, when the server sent one. */
  wireIndex: number | undefined;
  /** The call's `id` on the wire, when the server sent a string (`call.id` may be one rein made). */
  wireId: string | undefined;
  /** The call's `extra_content` so far (kept whole as `call.signature`, to go back with it). */
  extra: Json | undefined;
  ended: boolean;
  /** Arguments arrived after `tool_call_end` (interleaved deltas). */
  stale: boolean;
}

/** Turns chunks into events on `out`; ends `out` with exactly one `done` or `error`. */
export class ChatDecoder {
  readonly message: AssistantMessage;
  /** True once the terminal event was pushed. */
  finished = false;
  /** The last `finish_reason` seen (`undefined` when the server never sent one). */
  finishReason: string | undefined;
  /** Set while flushing the SSE parser at the end of the body: a truncated last frame is a cut, not bad JSON. */
  flushing = false;
  private open: 'text' | 'thinking' | 'tools' | undefined;
  private text: TextContent | undefined;
  private thinking: ThinkingContent | undefined;
  private blockIndex = 0;
  private readonly slots: ToolSlot[] = [];
  private openSlots: ToolSlot[] = [];
  /** The `index` of the choice that is this answer, once a chunk showed it. */
  private choiceIndex: number | undefined;
  /** Splits `<think>…</think>` off the start of string `content`. */
  private readonly thinkTags = new ThinkTagSplitter((kind, text) => (kind === 'text' ? this.appendText(text) : this.appendThinking(text)));

  constructor(
    private out: EventStream<AssistantStreamEvent, AssistantMessage>,
    model: ModelRef,
    private readonly ctx: ErrorContext,
    /** Ids of the run's earlier calls (`StreamOptions.toolCallIds`): a repeat is renamed. */
    private readonly runIds?: ReadonlySet<string>,
    /** Read `<think>…</think>` at the start of `content` as thinking (the compatibility record's `thinkingFormat`). */
    private readonly thinkTagsRead = true,
  ) {
    this.message = {
      role: 'assistant',
      content: [],
      stopReason: 'stop',
      usage: emptyUsage(),
      provider: model.provider,
      model: model.id,
      api: 'openai-chat',
    };
  }

  /**
   * Decodes into `out` instead, before anything was decoded (the request goes again in
   * another form: prompted tools), with `note` on the message to say so.
   */
  redirect(out: EventStream<AssistantStreamEvent, AssistantMessage>, note: string): void {
    this.out = out;
    (this.message.notes ??= []).push(note);
  }

  /** Emits `start`: the server accepted the request. */
  start(): void {
    this.out.push({ type: 'start', provider: this.message.provider, model: this.message.model });
  }

  /** Handles one server-sent event. */
  sse(event: string | undefined, data: string): void {
    if (this.finished) return;
    if (data === '[DONE]' || (data.length < 16 && data.trim() === '[DONE]')) {
      this.finish();
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      if (event === 'error') this.fail(errorFromStreamPayload(data, this.ctx));
      else if (!this.flushing) {
        this.fail(notJsonEventError(this.ctx.url, data));
      }
      return;
    }
    if (event === 'error') this.fail(errorFromStreamPayload(json, this.ctx));
    else if (isRecord(json)) this.chunk(json);
  }

  /** Handles one `chat.completion.chunk`. */
  chunk(chunk: Json): void {
    if (this.finished) return;
    if (this.message.responseId === undefined && typeof chunk.id === 'string' && chunk.id !== '') this.message.responseId = chunk.id;
    if (isRecord(chunk.usage)) this.message.usage = mapUsage(chunk.usage);
    else if (isRecord(chunk.x_groq) && isRecord(chunk.x_groq.usage)) this.message.usage = mapUsage(chunk.x_groq.usage); // older Groq: usage only there
    if (chunk.error !== undefined && chunk.error !== null) {
      this.fail(errorFromStreamPayload(chunk.error, this.ctx));
      return;
    }
    const choices = chunk.choices;
    if (choices === undefined && isBareError(chunk)) {
      this.fail(errorFromStreamPayload(chunk, this.ctx));
      return;
    }
    if (!Array.isArray(choices) || choices.length === 0) return;
    const choice = this.ownChoice(choices);
    if (choice === undefined) return;
    const delta = choice.delta ?? choice.message;
    if (isRecord(delta)) this.delta(delta);
    const reason = choice.finish_reason;
    if (typeof reason === 'string' && reason !== '') {
      const error = finishReasonError(reason, this.ctx);
      if (error !== undefined) this.fail(error);
      else this.finishReason = reason;
    }
  }

  /** Handles a whole non-streaming `chat.completion` body, then finishes. */
  completion(body: Json): void {
    if (body.error !== undefined && body.error !== null) {
      this.fail(errorFromStreamPayload(body.error, this.ctx));
      return;
    }
    const choices = Array.isArray(body.choices) ? body.choices : [];
    const message = this.ownChoice(choices)?.message;
    const calls = isRecord(message) ? toolCallList(message.tool_calls) : undefined;
    if (isRecord(message) && calls !== undefined) {
      // Non-streaming tool calls have no `index`; their position is it.
      message.tool_calls = calls.map((call: unknown, index) => (isRecord(call) ? { ...call, index } : call));
    }
    this.chunk(body);
    this.finish();
  }

  /** The body ended (cleanly, or cut when `cause` is given) without `[DONE]`. */
  streamEnded(cause?: unknown): void {
    if (this.finished) return;
    // A finish_reason means the content is complete, even if the usage chunk was lost.
    if (this.finishReason !== undefined) this.finish();
    else this.fail(streamCutError(this.ctx, cause));
  }

  /** Ends the stream with `done`, or with an error when the response carried nothing at all. */
  finish(): void {
    if (this.finished) return;
    this.thinkTags.end();
    if (this.finishReason === undefined && this.message.content.length === 0 && this.message.refusal === undefined) {
      // Not an empty answer: a model that says nothing still sends a finish_reason. Servers
      // end like this when they failed in a way this wire cannot carry (llama.cpp before its
      // `error:` field was read; proxies that lost the upstream).
      this.fail(emptyResponseError(this.ctx));
      return;
    }
    this.closeOpen();
    for (const slot of this.slots) if (slot.stale) slot.call.arguments = parseArguments(slot);
    this.message.stopReason = this.stopReason();
    this.finished = true;
    this.out.push({ type: 'done', message: this.message });
    this.out.end(this.message);
  }

  /** Ends the stream with `error`, carrying the partial message. */
  fail(error: ReinError): void {
    if (this.finished) return;
    this.thinkTags.end(); // the partial message keeps what was held back
    for (const slot of this.slots) slot.call.arguments = parseArguments(slot);
    this.message.stopReason = error.code === 'aborted' ? 'aborted' : 'error';
    this.message.error = error.toJSON();
    this.finished = true;
    this.out.push({ type: 'error', error, message: this.message });
    this.out.end(this.message);
  }

  private delta(delta: Json): void {
    // Some servers send both fields with the same text (read one), others an empty one beside the text.
    const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning);
    if (reasoning !== undefined) this.appendThinking(reasoning);
    if (typeof delta.content === 'string') {
      if (delta.content !== '') {
        if (this.thinkTags.passing || !this.thinkTagsRead) this.appendText(delta.content);
        else this.thinkTags.push(delta.content);
      }
    } else if (Array.isArray(delta.content)) this.contentParts(delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') this.message.refusal = (this.message.refusal ?? '') + delta.refusal;
    const calls = toolCallList(delta.tool_calls);
    if (calls !== undefined) {
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i];
        if (isRecord(call)) this.toolDelta(call);
      }
    } else if (isRecord(delta.function_call)) {
      this.toolDelta({ index: 0, function: delta.function_call }); // the legacy single-function form
    }
  }

  /**
   * Content as an array of parts (Mistral's reasoning models, streamed and not):
   * `{ type: 'text', text }` and `{ type: 'thinking', thinking: [{ type: 'text', text }] }`.
   * Other part types (references, images) carry no text to show.
   */
  private contentParts(parts: unknown[]): void {
    for (const part of parts) {
      if (!isRecord(part)) continue;
      if (part.type === 'text' && typeof part.text === 'string') {
        if (part.text !== '') this.appendText(part.text);
      } else if (part.type === 'thinking') {
        const thinking =
          typeof part.thinking === 'string' ? [{ type: 'text', text: part.thinking }] : Array.isArray(part.thinking) ? part.thinking : [];
        for (const piece of thinking)
          if (isRecord(piece) && typeof piece.text === 'string' && piece.text !== '') this.appendThinking(piece.text);
      }
    }
  }

  private appendText(delta: string): void {
    let block = this.text;
    if (this.open !== 'text' || block === undefined) {
      this.closeOpen();
      block = { type: 'text', text: '' };
      this.text = block;
      this.blockIndex = this.message.content.push(block) - 1;
      this.open = 'text';
      this.out.push({ type: 'text_start', index: this.blockIndex });
    }
    block.text += delta;
    this.out.push({ type: 'text_delta', index: this.blockIndex, delta });
  }

  private appendThinking(delta: string): void {
    let block = this.thinking;
    if (this.open !== 'thinking' || block === undefined) {
      this.closeOpen();
      block = { type: 'thinking', thinking: '' };
      this.thinking = block;
      this.blockIndex = this.message.content.push(block) - 1;
      this.open = 'thinking';
      this.out.push({ type: 'thinking_start', index: this.blockIndex });
    }
    block.thinking += delta;
    this.out.push({ type: 'thinking_delta', index: this.blockIndex, delta });
  }

  private toolDelta(call: Json): void {
    const fn = isRecord(call.function) ? call.function : {};
    const name = typeof fn.name === 'string' ? fn.name : '';
    let slot: ToolSlot | undefined;
    if (typeof call.index === 'number') {
      slot = this.slotAt(call.index);
      if (slot !== undefined && startsAnother(slot, call.id, name)) slot = undefined;
      else if (slot === undefined && name === '' && (typeof call.id !== 'string' || call.id === '')) slot = this.adoptFragment(call.index);
    } else if (name === '') {
      // Without an index, a name starts a new call and anything else continues the last one.
      slot = this.slots[this.slots.length - 1];
    }
    if (slot === undefined) slot = this.startTool(call, name);
    else if (slot.call.name === '' && name !== '') slot.call.name = name;
    if (isRecord(call.extra_content)) this.keepExtra(slot, call.extra_content);
    const args = typeof fn.arguments === 'string' ? fn.arguments : isRecord(fn.arguments) ? JSON.stringify(fn.arguments) : '';
    if (args === '') return;
    slot.call.rawArguments += args;
    if (slot.ended) slot.stale = true;
    else this.out.push(deltaEvent(slot, args, slot.call.rawArguments.length));
  }

  private startTool(call: Json, name: string): ToolSlot {
    // Tool calls stay open together (parallel calls may interleave); text or thinking closes them.
    if (this.open !== 'tools') this.closeOpen();
    const toolCall: ToolCall = { type: 'tool_call', id: this.uniqueId(call.id), name, arguments: {}, rawArguments: '' };
    const wireIndex = typeof call.index === 'number' ? call.index : undefined;
    const wireId = typeof call.id === 'string' ? call.id : undefined;
    const slot: ToolSlot = {
      call: toolCall,
      index: this.message.content.push(toolCall) - 1,
      parser: undefined,
      parsed: 0,
      wireIndex,
      wireId,
      extra: undefined,
      ended: false,
      stale: false,
    };
    this.slots.push(slot);
    this.openSlots.push(slot);
    this.open = 'tools';
    this.out.push({ type: 'tool_call_start', index: slot.index, id: toolCall.id, name });
    return slot;
  }

  /**
   * The choice of the one completion rein asks for (n = 1): choice 0, or the first one when
   * the first chunk has no choice 0 (a server that counts from 1), and the same index from
   * then on. Choices of other completions (a server or proxy that sends n > 1) are not part
   * of this answer.
   */
  private ownChoice(choices: unknown[]): Json | undefined {
    let fallback: Json | undefined;
    for (let i = 0; i < choices.length; i++) {
      const choice = choices[i];
      if (!isRecord(choice)) continue;
      const index = choiceIndexOf(choice);
      if (index === (this.choiceIndex ?? 0)) {
        this.choiceIndex = index;
        return choice;
      }
      fallback ??= choice;
    }
    if (this.choiceIndex !== undefined || fallback === undefined) return undefined;
    this.choiceIndex = choiceIndexOf(fallback);
    return fallback;
  }

  /**
   * The call a nameless, id-less fragment at a never-seen `wireIndex` continues: the latest
   * call still without arguments, which is then known by that index. Some servers (DeepSeek
   * behind a gateway) send a second call's header at the first call's index and its
   * arguments at the next one; a fragment with nothing to name a call cannot start one.
   */
  private adoptFragment(wireIndex: number): ToolSlot | undefined {
    const { slots } = this;
    for (let i = slots.length - 1; i >= 0; i--) {
      const slot = slots[i] as ToolSlot;
      if (slot.call.rawArguments === '') {
        slot.wireIndex = wireIndex;
        return slot;
      }
    }
    return undefined;
  }

  /**
   * Keeps a call's `extra_content` (Gemini 3 puts the call's `thought_signature` there, and
   * answers 400 to a history that lacks it) as its opaque `signature`, the whole object as
   * JSON, so any vendor's extras go back with the call to the same model.
   */
  private keepExtra(slot: ToolSlot, extra: Json): void {
    slot.extra = slot.extra === undefined ? extra : { ...slot.extra, ...extra };
    slot.call.signature = JSON.stringify(slot.extra);
  }

  /** The server's id, unless it is missing, a bare number (OpenRouter "0") or already used (in this response or the run). */
  private uniqueId(id: unknown): string {
    const unique =
      typeof id === 'string' && id !== '' && !isDigits(id) && !this.idTaken(id) && this.runIds?.has(id) !== true ? id : undefined;
    return unique ?? `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  }

  // A response carries a handful of calls: a scan of the slots costs less than a Map and a
  // Set made for every response.
  /** The latest call the server numbered `wireIndex`. */
  private slotAt(wireIndex: number): ToolSlot | undefined {
    const { slots } = this;
    for (let i = slots.length - 1; i >= 0; i--) if ((slots[i] as ToolSlot).wireIndex === wireIndex) return slots[i];
    return undefined;
  }

  private idTaken(id: string): boolean {
    for (const slot of this.slots) if (slot.call.id === id) return true;
    return false;
  }

  private closeOpen(): void {
    if (this.open === 'text' && this.text !== undefined) {
      this.out.push({ type: 'text_end', index: this.blockIndex, text: this.text.text });
    } else if (this.open === 'thinking' && this.thinking !== undefined) {
      this.out.push({ type: 'thinking_end', index: this.blockIndex, thinking: this.thinking.thinking });
    } else if (this.open === 'tools') {
      for (const slot of this.openSlots) {
        slot.call.arguments = parseArguments(slot);
        slot.ended = true;
        this.out.push({ type: 'tool_call_end', index: slot.index, toolCall: slot.call });
      }
      this.openSlots = [];
    }
    this.open = undefined;
  }

  private stopReason(): StopReason {
    const reason = this.finishReason;
    // Mistral says `model_length` when the model's context ran out mid-answer.
    if (reason === 'length' || reason === 'max_tokens' || reason === 'model_length') return 'length';
    if (reason === 'content_filter') return 'content_filter';
    // Forced tool_choice answers `stop` with tool calls; the calls are what matters.
    if (this.slots.length > 0 || reason === 'tool_calls' || reason === 'function_call') return 'tool_use';
    const refused = this.message.refusal !== undefined && this.message.refusal !== '';
    if (refused && !this.message.content.some((block) => block.type === 'text')) return 'refusal';
    return 'stop';
  }
}

/**
 * Whether a delta at the wire index of `slot` is another call: Ollama and LiteLLM's
 * ollama_chat number every parallel call 0, each whole (name and arguments) with its own id.
 * Continuations carry no name, or the id of the call they continue.
 */
function startsAnother(slot: ToolSlot, id: unknown, name: string): boolean {
  return name !== '' && slot.call.name !== '' && typeof id === 'string' && id !== '' && id !== slot.wireId;
}

/** A choice's `index`, 0 when it has none (or not a number). */
function choiceIndexOf(choice: Json): number {
  return typeof choice.index === 'number' ? choice.index : 0;
}

/** `tool_calls` as a list: older TGI sends one call as an object, not an array. */
function toolCallList(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  return isRecord(value) ? [value] : undefined;
}

/** The string when it has text; `undefined` for anything else, `""` included. */
function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * A frame with no `choices` that is an error object on its own: vLLM's
 * `{object: "error", message, code}`, FastAPI's `{detail}`, or a bare `{message}`.
 */
function isBareError(frame: Json): boolean {
  if (frame.object === 'error' || (frame.detail !== undefined && frame.detail !== null)) return true;
  return frame.object === undefined && typeof frame.message === 'string';
}

/**
 * The error a finish reason stands for, if it is one: `error` and `<type>_error` (the server
 * failed mid-answer), DeepSeek's `insufficient_system_resource` (the server cut the answer
 * for lack of resources). The answer is incomplete, and another attempt may finish it.
 */
function finishReasonError(reason: string, ctx: ErrorContext): ReinError | undefined {
  if (reason === 'error') return errorFromStreamPayload({ message: 'the provider ended the response with finish_reason "error"' }, ctx);
  if (reason.endsWith('_error')) {
    // A gateway translating another wire's in-stream error (Portkey: Anthropic's
    // `overloaded_error`, `api_error`) into a finish reason: the answer broke off, it did
    // not end. Classified by the error type it names (overloaded, rate limit, …).
    return errorFromStreamPayload(
      { type: reason, message: `the provider ended the response with finish_reason "${reason}": the answer is incomplete` },
      ctx,
    );
  }
  if (reason === 'insufficient_system_resource') {
    return new ReinError(
      'server_error',
      'transient',
      `${ctx.provider} (${ctx.url}) stopped the answer of ${ctx.model} for lack of resources (finish_reason "insufficient_system_resource"): the answer is incomplete; this is on the provider's side, retry later`,
    );
  }
  return undefined;
}

/** True for a string of ASCII digits only (OpenRouter's "0" is not an id). */
function isDigits(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * The final arguments: the parsed object, or `{}` when the text is not a JSON object. A
 * JSON string holding an object (arguments encoded twice, as some servers send them) is
 * read through, as the dispatcher's repair reads it, so events show what the tool gets.
 */
function parseArguments(slot: ToolSlot): Record<string, unknown> {
  if (argumentLimitError(slot.call.rawArguments) !== undefined) return {};
  try {
    const value: unknown = JSON.parse(slot.call.rawArguments);
    if (isRecord(value)) return value;
    if (typeof value !== 'string') return {};
    const inner: unknown = JSON.parse(value);
    return isRecord(inner) ? inner : {};
  } catch {
    return {};
  }
}

/**
 * A `tool_call_delta` whose `partialArguments` (the arguments as far as the first `upTo`
 * characters go) are parsed when first read, and then stay the same object.
 */
function deltaEvent(slot: ToolSlot, delta: string, upTo: number): AssistantStreamEvent {
  let partial: unknown;
  let read = false;
  return {
    type: 'tool_call_delta',
    index: slot.index,
    delta,
    get partialArguments(): unknown {
      if (!read) {
        partial = partialArguments(slot, upTo);
        read = true;
      }
      return partial;
    },
  };
}

/** The arguments parsed from the first `upTo` characters, incrementally when read in order. */
function partialArguments(slot: ToolSlot, upTo: number): unknown {
  const raw = slot.call.rawArguments;
  if (slot.parsed > upTo) {
    // A later delta was read first: parse this prefix on its own.
    const parser = new PartialJsonParser();
    parser.push(raw.slice(0, upTo));
    return parser.value;
  }
  const parser = (slot.parser ??= new PartialJsonParser());
  if (slot.parsed < upTo) {
    parser.push(raw.slice(slot.parsed, upTo));
    slot.parsed = upTo;
  }
  return parser.value;
}

/** Chat Completions usage → rein's {@link Usage} (`input` excludes cached prompt tokens). */
export function mapUsage(raw: Json): Usage {
  const prompt = tokenCount(raw.prompt_tokens);
  const output = tokenCount(raw.completion_tokens);
  const promptDetails = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const completionDetails = isRecord(raw.completion_tokens_details) ? raw.completion_tokens_details : {};
  // DeepSeek reports cache hits as prompt_cache_hit_tokens (newer versions also as cached_tokens).
  const cacheRead = tokenCount(promptDetails.cached_tokens) || tokenCount(raw.prompt_cache_hit_tokens);
  return {
    input: Math.max(0, prompt - cacheRead),
    output,
    cacheRead,
    cacheWrite: 0,
    reasoning: tokenCount(completionDetails.reasoning_tokens),
    total: tokenCount(raw.total_tokens) || prompt + output,
  };
}
