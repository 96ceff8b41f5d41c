/**
 * Decoding Gemini `GenerateContentResponse`s (each SSE `data:` frame of
 * `streamGenerateContent?alt=sse`, or the one body of `generateContent`) into rein's
 * {@link AssistantStreamEvent}s and the final {@link AssistantMessage}.
 *
 * Shapes handled, each seen in the recordings (see test/model/gemini.*.test.ts):
 * text and `thought: true` parts split over many frames; a `thoughtSignature` on a
 * function call (Gemini 3: only on the first of parallel calls), on a text part, or on an
 * empty text part of its own; whole `functionCall`s, several in one frame; calls streamed
 * as `partialArgs` with `willContinue`; usage repeated in every frame (the last one
 * counts; frames with only `trafficType` carry none); an `error` object in a 200 stream;
 * `promptFeedback.blockReason` with no candidates. Gemini sends no `[DONE]`: the body ends
 * after the frame with the `finishReason`.
 */
import { randomUUID } from 'node:crypto';
import { ReinError } from '../../errors.js';
import type { EventStream } from '../event-stream.js';
import { streamCutError } from '../http-errors.js';
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
import { geminiErrorFromPayload } from './gemini-errors.js';
import { PartialArgsWriter } from './gemini-partial-args.js';
import { isRecord, notJsonEventError, tokenCount, type Json } from '../json.js';
import { parseArgumentObject } from '../json-limits.js';

/** A function call being received. */
interface CallSlot {
  call: ToolCall;
  index: number;
  writer: PartialArgsWriter;
  parser: PartialJsonParser;
}

const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'LANGUAGE',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);
// The model wrote a call the server could not accept. Another sample usually gets it right,
// so these are transient errors (retried), as Groq's `tool_use_failed` is for Chat Completions.
const BAD_CALL = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS']);

/** Turns response chunks into events on `out`; ends `out` with exactly one `done` or `error`. */
export class GeminiDecoder {
  readonly message: AssistantMessage;
  /** True once the terminal event was pushed. */
  finished = false;
  /** Set while flushing the SSE parser at the end of the body: a truncated last frame is a cut, not bad JSON. */
  flushing = false;
  private finishReason: string | undefined;
  private finishMessage: string | undefined;
  private blockReason: string | undefined;
  private open: TextContent | ThinkingContent | undefined;
  private openIndex = 0;
  /** A call streamed with `willContinue`, waiting for its next piece. */
  private call: CallSlot | undefined;
  private calls = 0;
  private readonly ids = new Set<string>();

  constructor(
    private readonly out: EventStream<AssistantStreamEvent, AssistantMessage>,
    model: ModelRef,
    private readonly ctx: ErrorContext,
    /** Ids of the calls already in the run (`StreamOptions.toolCallIds`): a server id repeating one is replaced. */
    private readonly runIds?: ReadonlySet<string>,
  ) {
    this.message = {
      role: 'assistant',
      content: [],
      stopReason: 'stop',
      usage: emptyUsage(),
      provider: model.provider,
      model: model.id,
      api: 'gemini',
    };
  }

  /** Emits `start`: the server accepted the request. */
  start(): void {
    this.out.push({ type: 'start', provider: this.message.provider, model: this.message.model });
  }

  /** Handles one server-sent event's data. */
  sse(data: string): void {
    if (this.finished) return;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      if (!this.flushing) this.fail(notJsonEventError(this.ctx.url, data));
      return;
    }
    if (Array.isArray(json)) for (const item of json) this.chunk(item);
    else this.chunk(json);
  }

  /** Handles one `GenerateContentResponse`. */
  chunk(chunk: unknown): void {
    if (this.finished || !isRecord(chunk)) return;
    if (chunk.error !== undefined && chunk.error !== null) {
      this.fail(geminiErrorFromPayload(chunk.error, this.ctx));
      return;
    }
    if (this.message.responseId === undefined && typeof chunk.responseId === 'string' && chunk.responseId !== '')
      this.message.responseId = chunk.responseId;
    if (isRecord(chunk.usageMetadata)) {
      const usage = mapUsage(chunk.usageMetadata);
      if (usage !== undefined) this.message.usage = usage;
    }
    if (isRecord(chunk.promptFeedback) && typeof chunk.promptFeedback.blockReason === 'string')
      this.blockReason = chunk.promptFeedback.blockReason;
    // One candidate per request (candidateCount is never set): take the first.
    const candidate: unknown = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
    if (!isRecord(candidate)) return;
    const parts = isRecord(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    for (const part of parts) if (isRecord(part)) this.part(part);
    if (typeof candidate.finishReason === 'string' && candidate.finishReason !== '') this.finishReason = candidate.finishReason;
    if (typeof candidate.finishMessage === 'string') this.finishMessage = candidate.finishMessage;
  }

  /** Handles a whole non-streaming body (one response, or an array of them), then finishes. */
  body(body: unknown): void {
    if (Array.isArray(body)) for (const item of body) this.chunk(item);
    else this.chunk(body);
    this.finish();
  }

  /** The body ended (cleanly, or cut when `cause` is given). */
  streamEnded(cause?: unknown): void {
    if (this.finished) return;
    // A finishReason (or a blocked prompt) means the response is complete.
    if (this.finishReason !== undefined || this.blockReason !== undefined) this.finish();
    else this.fail(streamCutError(this.ctx, cause));
  }

  /** Ends the stream with `done`, or with `error` for a finish reason that is a failure. */
  finish(): void {
    if (this.finished) return;
    if (this.call !== undefined) this.endCall(this.call);
    this.closeOpen();
    const reason = this.finishReason;
    if (reason !== undefined && BAD_CALL.has(reason)) {
      this.fail(
        new ReinError(
          'invalid_response',
          'transient',
          `The model ${this.message.model} produced a function call ${this.ctx.provider} rejected (finishReason ${reason})${this.said()}. It is retried; if it keeps failing, simplify the tool schemas or lower the temperature`,
        ),
      );
      return;
    }
    const stop = this.stopReason();
    if (stop === undefined) {
      this.fail(
        new ReinError(
          'invalid_response',
          'transient',
          `${this.ctx.provider} ended the response with finishReason ${reason ?? '(none)'}${this.said()}`,
        ),
      );
      return;
    }
    this.message.stopReason = stop;
    this.finished = true;
    this.out.push({ type: 'done', message: this.message });
    this.out.end(this.message);
  }

  /** Ends the stream with `error`, carrying the partial message. */
  fail(error: ReinError): void {
    if (this.finished) return;
    if (this.call !== undefined) this.call.call.arguments = parseArguments(this.call.call.rawArguments);
    this.message.stopReason = error.code === 'aborted' ? 'aborted' : 'error';
    this.message.error = error.toJSON();
    this.finished = true;
    this.out.push({ type: 'error', error, message: this.message });
    this.out.end(this.message);
  }

  private part(part: Json): void {
    const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
    if (isRecord(part.functionCall)) {
      this.functionCall(part.functionCall, signature);
      return;
    }
    if (typeof part.text !== 'string' || (part.text === '' && signature === undefined)) return; // inlineData, code execution…: no slot in rein
    if (this.call !== undefined) this.endCall(this.call);
    this.append(part.thought === true ? 'thinking' : 'text', part.text, signature);
  }

  /**
   * Text or thinking, merged across parts into one block. A signature belongs to the part
   * it came on, so a second, different signature starts a new block rather than being
   * merged away; an empty part that carries only a signature (Gemini's way of signing a
   * text answer) signs the block before it.
   */
  private append(kind: 'text' | 'thinking', delta: string, signature: string | undefined): void {
    let block = this.open;
    const same = block !== undefined && block.type === kind;
    if (delta === '' && signature !== undefined) {
      const last = this.message.content[this.message.content.length - 1];
      const target = same ? block : last !== undefined && last.type !== 'tool_call' && last.type === kind ? last : undefined;
      if (target !== undefined && target.signature === undefined) {
        target.signature = signature;
        return;
      }
    }
    if (!same || block === undefined || (signature !== undefined && block.signature !== undefined && block.signature !== signature)) {
      this.closeOpen();
      block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' };
      this.open = block;
      this.openIndex = this.message.content.push(block) - 1;
      this.out.push({ type: kind === 'text' ? 'text_start' : 'thinking_start', index: this.openIndex });
    }
    if (signature !== undefined) block.signature = signature;
    if (delta === '') return;
    if (block.type === 'text') {
      block.text += delta;
      this.out.push({ type: 'text_delta', index: this.openIndex, delta });
    } else {
      block.thinking += delta;
      this.out.push({ type: 'thinking_delta', index: this.openIndex, delta });
    }
  }

  private functionCall(fc: Json, signature: string | undefined): void {
    const name = typeof fc.name === 'string' ? fc.name : '';
    let slot = this.call;
    if (slot !== undefined && name !== '') {
      this.endCall(slot); // a named part starts a new call
      slot = undefined;
    }
    if (slot === undefined) {
      if (name === '') return; // a continuation with no call to continue
      this.closeOpen();
      const call: ToolCall = { type: 'tool_call', id: this.callId(fc.id), name, arguments: {}, rawArguments: '' };
      if (signature !== undefined) call.signature = signature;
      slot = { call, index: this.message.content.push(call) - 1, writer: new PartialArgsWriter(), parser: new PartialJsonParser() };
      this.out.push({ type: 'tool_call_start', index: slot.index, id: call.id, name });
    } else if (signature !== undefined && slot.call.signature === undefined) {
      slot.call.signature = signature;
    }
    let delta = isRecord(fc.args) ? slot.writer.whole(fc.args) : '';
    if (Array.isArray(fc.partialArgs)) for (const arg of fc.partialArgs) if (isRecord(arg)) delta += slot.writer.partial(arg);
    this.argumentsDelta(slot, delta);
    if (fc.willContinue === true) this.call = slot;
    else this.endCall(slot);
  }

  private argumentsDelta(slot: CallSlot, delta: string): void {
    if (delta === '') return;
    slot.call.rawArguments += delta;
    slot.parser.push(delta);
    this.out.push({ type: 'tool_call_delta', index: slot.index, delta, partialArguments: slot.parser.value });
  }

  private endCall(slot: CallSlot): void {
    this.argumentsDelta(slot, slot.writer.end());
    slot.parser.end();
    slot.call.arguments = parseArguments(slot.call.rawArguments);
    if (this.call === slot) this.call = undefined;
    this.out.push({ type: 'tool_call_end', index: slot.index, toolCall: slot.call });
  }

  /**
   * Gemini sends no call ids (newer models may): one is made from the response id and the
   * call's position, so it is stable for this response and unique within a run, and uses
   * only the characters every provider accepts in ids (`[A-Za-z0-9_-]`).
   */
  private callId(serverId: unknown): string {
    const n = this.calls++;
    const taken = (candidate: string): boolean => this.ids.has(candidate) || this.runIds?.has(candidate) === true;
    let id = typeof serverId === 'string' && /^[\w-]{1,64}$/.test(serverId) && !taken(serverId) ? serverId : undefined;
    const response = this.message.responseId?.replace(/[^\w-]/g, '_').slice(0, 40);
    id ??= response ? `call_${response}_${n}` : `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    while (taken(id)) id = `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    this.ids.add(id);
    return id;
  }

  private closeOpen(): void {
    const block = this.open;
    if (block === undefined) return;
    this.open = undefined;
    if (block.type === 'text') this.out.push({ type: 'text_end', index: this.openIndex, text: block.text });
    else this.out.push({ type: 'thinking_end', index: this.openIndex, thinking: block.thinking });
  }

  /** The stop reason, or `undefined` for a finish reason that is a failure (OTHER, unknown). */
  private stopReason(): StopReason | undefined {
    const reason = this.finishReason;
    if (reason === 'MAX_TOKENS') return 'length';
    if ((reason !== undefined && FILTERED.has(reason)) || (reason === undefined && this.blockReason !== undefined)) return 'content_filter';
    if (reason === undefined || reason === 'STOP') return this.calls > 0 ? 'tool_use' : 'stop';
    return undefined;
  }

  private said(): string {
    return this.finishMessage ? `: ${this.finishMessage.slice(0, 500)}` : '';
  }
}

/** The final arguments: the parsed object, or `{}` when the text is not a JSON object. */
function parseArguments(raw: string): Record<string, unknown> {
  return parseArgumentObject(raw);
}

/**
 * Gemini `usageMetadata` → rein's {@link Usage}: cached prompt tokens leave `input` for
 * `cacheRead`; thoughts count as output (they are billed as output) and as `reasoning`.
 * `undefined` for a frame with no counts (partial-args frames carry only `trafficType`).
 */
export function mapUsage(raw: Json): Usage | undefined {
  if (typeof raw.promptTokenCount !== 'number' && typeof raw.totalTokenCount !== 'number' && typeof raw.candidatesTokenCount !== 'number')
    return undefined;
  const prompt = tokenCount(raw.promptTokenCount) + tokenCount(raw.toolUsePromptTokenCount);
  const cacheRead = tokenCount(raw.cachedContentTokenCount);
  const reasoning = tokenCount(raw.thoughtsTokenCount);
  const output = tokenCount(raw.candidatesTokenCount) + reasoning;
  return {
    input: Math.max(0, prompt - cacheRead),
    output,
    cacheRead,
    cacheWrite: 0,
    reasoning,
    total: tokenCount(raw.totalTokenCount) || prompt + output,
  };
}
