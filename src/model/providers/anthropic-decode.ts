/**
 * Decoding Anthropic Messages server-sent events (or one non-streaming message body) into
 * rein's {@link AssistantStreamEvent}s and the final {@link AssistantMessage}.
 *
 * Events (https://docs.anthropic.com/en/docs/build-with-claude/streaming): `message_start`
 * (id, input and cache usage) → per content block `content_block_start` / `_delta` /
 * `_stop` → `message_delta` (stop_reason, cumulative usage) → `message_stop`; `ping`
 * anywhere; `error` instead of the rest. The decoder dispatches on the payload's `type`,
 * so frames without an `event:` line decode the same.
 *
 * Block types: `text`, `thinking` (its signature arrives as `signature_delta`),
 * `redacted_thinking` (kept as thinking `''` with its opaque `data` as the signature and
 * `redacted: true`), `tool_use` (arguments as `input_json_delta` fragments). Every other
 * block type, i.e. the server-side tools' `server_tool_use`, `web_search_tool_result`,
 * `*_code_execution_tool_result`, `mcp_tool_use` … and any type added later, is skipped
 * with its deltas: Anthropic ran those tools itself, so they are not calls for the harness,
 * and the text blocks around them carry the answer. `citations_delta` is skipped too (the
 * cited text is in the text deltas). Unknown event and delta types are ignored, as the
 * API's versioning policy asks of clients.
 */
import { randomUUID } from 'node:crypto';
import type { ReinError } from '../../errors.js';
import type { EventStream } from '../event-stream.js';
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
import { anthropicStreamCut, anthropicStreamError } from './anthropic-errors.js';
import { isRecord, notJsonEventError, type Json } from '../json.js';
import { MAX_ARGUMENT_CHARS, parseArgumentObject } from '../json-limits.js';

/** A content block in progress, by its Anthropic `index`. */
type Slot =
  | { kind: 'text'; index: number; block: TextContent; open: boolean }
  | { kind: 'thinking'; index: number; block: ThinkingContent; open: boolean }
  | { kind: 'tool'; index: number; call: ToolCall; parser: PartialJsonParser; open: boolean }
  | { kind: 'skipped' };

/** Turns Anthropic events into events on `out`; ends `out` with exactly one `done` or `error`. */
export class AnthropicDecoder {
  readonly message: AssistantMessage;
  /** True once the terminal event was pushed. */
  finished = false;
  /** Set while flushing the SSE parser at the end of the body: a truncated last frame is a cut, not bad JSON. */
  flushing = false;
  /** The `stop_reason` of `message_delta` (`undefined` until it came). */
  stopReason: string | undefined;
  private readonly slots = new Map<number, Slot>();

  constructor(
    private readonly out: EventStream<AssistantStreamEvent, AssistantMessage>,
    model: ModelRef,
    private readonly ctx: ErrorContext,
    /** Ids of the run's earlier calls (`StreamOptions.toolCallIds`): a repeat is renamed. */
    private readonly runIds?: ReadonlySet<string>,
  ) {
    this.message = {
      role: 'assistant',
      content: [],
      stopReason: 'stop',
      usage: emptyUsage(),
      provider: model.provider,
      model: model.id,
      api: 'anthropic-messages',
    };
  }

  /** Emits `start`: the server accepted the request. */
  start(): void {
    this.out.push({ type: 'start', provider: this.message.provider, model: this.message.model });
  }

  /** Handles one server-sent event (`event` is its `event:` line, if any). */
  sse(event: string | undefined, data: string): void {
    if (this.finished) return;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      if (event === 'error') this.fail(anthropicStreamError({ error: { message: data } }, this.ctx));
      else if (!this.flushing) this.fail(notJsonEventError(this.ctx.url, data));
      return;
    }
    if (!isRecord(json)) return;
    if (event === 'error' && json.type !== 'error') this.fail(anthropicStreamError(json, this.ctx));
    else this.event(json);
  }

  /** Handles one event payload. */
  event(json: Json): void {
    if (this.finished) return;
    switch (json.type) {
      case 'message_start':
        if (isRecord(json.message)) this.messageStart(json.message);
        break;
      case 'content_block_start':
        if (typeof json.index === 'number' && isRecord(json.content_block)) this.blockStart(json.index, json.content_block);
        break;
      case 'content_block_delta':
        if (typeof json.index === 'number' && isRecord(json.delta)) this.blockDelta(json.index, json.delta);
        break;
      case 'content_block_stop':
        if (typeof json.index === 'number') this.blockStop(json.index);
        break;
      case 'message_delta':
        if (isRecord(json.delta) && typeof json.delta.stop_reason === 'string') this.stopReason = json.delta.stop_reason;
        if (isRecord(json.usage)) this.usage(json.usage);
        break;
      case 'message_stop':
        this.finish();
        break;
      case 'error':
        this.fail(anthropicStreamError(json, this.ctx));
        break;
      default:
        break; // ping, and event types added after this adapter was written
    }
  }

  /** Handles a whole non-streaming message body, then finishes. */
  body(body: Json): void {
    if (body.type === 'error' || isRecord(body.error)) {
      this.fail(anthropicStreamError(body, this.ctx));
      return;
    }
    this.messageStart(body);
    const content = Array.isArray(body.content) ? body.content : [];
    for (const [index, block] of content.entries()) {
      if (!isRecord(block)) continue;
      this.blockStart(index, block);
      this.blockStop(index);
    }
    if (typeof body.stop_reason === 'string') this.stopReason = body.stop_reason;
    this.finish();
  }

  /** The body ended (cleanly, or cut when `cause` is given) without `message_stop`. */
  streamEnded(cause?: unknown): void {
    if (this.finished) return;
    // A stop_reason means the content is complete; only the closing frame was lost.
    if (this.stopReason !== undefined) this.finish();
    else this.fail(anthropicStreamCut(this.ctx, cause));
  }

  /** Ends the stream with `done`. */
  finish(): void {
    if (this.finished) return;
    for (const slot of this.slots.values()) this.close(slot);
    this.message.stopReason = mapStopReason(
      this.stopReason,
      this.message.content.some((block) => block.type === 'tool_call'),
    );
    this.finished = true;
    this.out.push({ type: 'done', message: this.message });
    this.out.end(this.message);
  }

  /** Ends the stream with `error`, carrying the partial message. */
  fail(error: ReinError): void {
    if (this.finished) return;
    for (const slot of this.slots.values()) if (slot.kind === 'tool') slot.call.arguments = parseArguments(slot.call.rawArguments);
    this.message.stopReason = error.code === 'aborted' ? 'aborted' : 'error';
    this.message.error = error.toJSON();
    this.finished = true;
    this.out.push({ type: 'error', error, message: this.message });
    this.out.end(this.message);
  }

  private messageStart(message: Json): void {
    if (typeof message.id === 'string' && message.id !== '') this.message.responseId = message.id;
    if (isRecord(message.usage)) this.usage(message.usage);
  }

  /**
   * Applies a usage object. `message_delta` repeats the counts cumulatively (and, with
   * server tools, raises `input_tokens` above `message_start`'s), so later values win.
   * Anthropic's `input_tokens` excludes cached tokens, as rein's `input` does.
   */
  private usage(raw: Json): void {
    const usage: Usage = this.message.usage;
    if (isCount(raw.input_tokens)) usage.input = raw.input_tokens;
    if (isCount(raw.output_tokens)) usage.output = raw.output_tokens;
    if (isCount(raw.cache_read_input_tokens)) usage.cacheRead = raw.cache_read_input_tokens;
    if (isCount(raw.cache_creation_input_tokens)) usage.cacheWrite = raw.cache_creation_input_tokens;
    const details = isRecord(raw.output_tokens_details) ? raw.output_tokens_details : {};
    if (isCount(details.thinking_tokens)) usage.reasoning = details.thinking_tokens;
    usage.total = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  }

  private blockStart(anthropicIndex: number, block: Json): void {
    const index = this.message.content.length;
    switch (block.type) {
      case 'text': {
        const slot: Extract<Slot, { kind: 'text' }> = { kind: 'text', index, block: { type: 'text', text: '' }, open: true };
        this.add(anthropicIndex, slot, slot.block, { type: 'text_start', index });
        if (typeof block.text === 'string') this.text(slot, block.text); // non-streaming bodies carry it whole
        break;
      }
      case 'thinking':
      case 'redacted_thinking': {
        const redacted = block.type === 'redacted_thinking';
        const thinking: ThinkingContent = { type: 'thinking', thinking: '' };
        const signature = redacted ? block.data : block.signature;
        if (typeof signature === 'string' && signature !== '') thinking.signature = signature;
        if (redacted) thinking.redacted = true;
        const slot: Extract<Slot, { kind: 'thinking' }> = { kind: 'thinking', index, block: thinking, open: true };
        this.add(anthropicIndex, slot, thinking, { type: 'thinking_start', index });
        if (!redacted && typeof block.thinking === 'string') this.thinking(slot, block.thinking);
        break;
      }
      case 'tool_use': {
        const id = this.uniqueId(block.id);
        const name = typeof block.name === 'string' ? block.name : '';
        const call: ToolCall = { type: 'tool_call', id, name, arguments: {}, rawArguments: '' };
        const slot: Extract<Slot, { kind: 'tool' }> = { kind: 'tool', index, call, parser: new PartialJsonParser(), open: true };
        this.add(anthropicIndex, slot, call, { type: 'tool_call_start', index, id, name });
        // Streams send `input: {}` here and the arguments as deltas; a non-streaming body
        // (or a server that sends the input whole) has it here.
        if (isRecord(block.input) && Object.keys(block.input).length > 0) this.json(slot, JSON.stringify(block.input));
        break;
      }
      default:
        // Server-side tool blocks and unknown types: not the harness's to run (see above).
        this.slots.set(anthropicIndex, { kind: 'skipped' });
    }
  }

  /**
   * The server's id, unless it is missing or already used in this response or the run:
   * Anthropic refuses a history whose `tool_use` ids repeat, and the loop tells calls apart
   * by id. A made-up id matches Anthropic's `^[a-zA-Z0-9_-]+$`.
   */
  private uniqueId(id: unknown): string {
    const unique = typeof id === 'string' && id !== '' && !this.idTaken(id) && this.runIds?.has(id) !== true ? id : undefined;
    return unique ?? `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  }

  // A response carries a handful of calls: a scan of its blocks costs less than a Set made per response.
  private idTaken(id: string): boolean {
    for (const block of this.message.content) if (block.type === 'tool_call' && block.id === id) return true;
    return false;
  }

  private add(anthropicIndex: number, slot: Slot, block: AssistantMessage['content'][number], event: AssistantStreamEvent): void {
    const previous = this.slots.get(anthropicIndex);
    if (previous !== undefined) this.close(previous); // a repeated index: the old block is over
    this.slots.set(anthropicIndex, slot);
    this.message.content.push(block);
    this.out.push(event);
  }

  private blockDelta(anthropicIndex: number, delta: Json): void {
    const slot = this.slots.get(anthropicIndex);
    if (slot === undefined || slot.kind === 'skipped' || !slot.open) return;
    if (delta.type === 'text_delta' && slot.kind === 'text' && typeof delta.text === 'string') this.text(slot, delta.text);
    else if (delta.type === 'thinking_delta' && slot.kind === 'thinking' && typeof delta.thinking === 'string')
      this.thinking(slot, delta.thinking);
    else if (delta.type === 'signature_delta' && slot.kind === 'thinking' && typeof delta.signature === 'string') {
      slot.block.signature = (slot.block.signature ?? '') + delta.signature;
    } else if (delta.type === 'input_json_delta' && slot.kind === 'tool' && typeof delta.partial_json === 'string')
      this.json(slot, delta.partial_json);
    // citations_delta and delta types added later: nothing to keep.
  }

  private text(slot: Extract<Slot, { kind: 'text' }>, delta: string): void {
    if (delta === '') return;
    slot.block.text += delta;
    this.out.push({ type: 'text_delta', index: slot.index, delta });
  }

  private thinking(slot: Extract<Slot, { kind: 'thinking' }>, delta: string): void {
    if (delta === '') return; // Anthropic sends an empty thinking_delta before the signature
    slot.block.thinking += delta;
    this.out.push({ type: 'thinking_delta', index: slot.index, delta });
  }

  private json(slot: Extract<Slot, { kind: 'tool' }>, delta: string): void {
    if (delta === '') return; // every tool block opens with an empty input_json_delta
    slot.call.rawArguments += delta;
    slot.parser.push(delta);
    this.out.push({ type: 'tool_call_delta', index: slot.index, delta, partialArguments: slot.parser.value });
  }

  private blockStop(anthropicIndex: number): void {
    const slot = this.slots.get(anthropicIndex);
    if (slot !== undefined) this.close(slot);
  }

  private close(slot: Slot): void {
    if (slot.kind === 'skipped' || !slot.open) return;
    slot.open = false;
    if (slot.kind === 'text') this.out.push({ type: 'text_end', index: slot.index, text: slot.block.text });
    else if (slot.kind === 'thinking') this.out.push({ type: 'thinking_end', index: slot.index, thinking: slot.block.thinking });
    else {
      slot.parser.end();
      const { parser, call } = slot;
      call.arguments =
        parser.done && !parser.failed && call.rawArguments.length <= MAX_ARGUMENT_CHARS
          ? isRecord(parser.value)
            ? parser.value
            : {}
          : parseArguments(call.rawArguments);
      this.out.push({ type: 'tool_call_end', index: slot.index, toolCall: call });
    }
  }
}

/**
 * Anthropic's `stop_reason` → rein's. `pause_turn` (a long server-tool turn paused by
 * Anthropic) is `stop`: the answer so far is complete text, and a loop that wants more may
 * send the conversation again. `model_context_window_exceeded` is `length`: output was cut.
 */
function mapStopReason(reason: string | undefined, hasToolCalls: boolean): StopReason {
  switch (reason) {
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'refusal';
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    default:
      return hasToolCalls ? 'tool_use' : 'stop';
  }
}

/** The final arguments: the parsed object, or `{}` when the text is not a JSON object. */
function parseArguments(raw: string): Record<string, unknown> {
  return parseArgumentObject(raw);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
