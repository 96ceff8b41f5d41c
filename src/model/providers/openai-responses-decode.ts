/**
 * Decoding OpenAI Responses stream events (or one non-streaming response body) into rein's
 * {@link AssistantStreamEvent}s and the final {@link AssistantMessage}: the protocol part
 * (which event means what, how a response ends, errors). The output items themselves become
 * blocks in {@link OutputBlocks}.
 */
import { ReinError } from '../../errors.js';
import type { EventStream } from '../event-stream.js';
import { errorFromStreamPayload } from '../http-errors.js';
import type { ErrorContext } from '../http-errors.js';
import { emptyUsage } from '../types.js';
import type { AssistantMessage, AssistantStreamEvent, ModelRef, StopReason, Usage } from '../types.js';
import { OutputBlocks, num, str } from './openai-responses-blocks.js';
import { isRecord, notJsonEventError, tokenCount, type Json } from '../json.js';

/** Turns Responses events into events on `out`; ends `out` with exactly one `done` or `error`. */
export class ResponsesDecoder {
  readonly message: AssistantMessage;
  /** True once the terminal event was pushed. */
  finished = false;
  /** Set while flushing the SSE parser at the end of the body: a truncated last frame is a cut, not bad JSON. */
  flushing = false;
  private readonly blocks: OutputBlocks;

  constructor(
    private readonly out: EventStream<AssistantStreamEvent, AssistantMessage>,
    model: ModelRef,
    private readonly ctx: ErrorContext,
    /** Ids of the run's earlier calls (`StreamOptions.toolCallIds`): a repeat is renamed. */
    runIds?: ReadonlySet<string>,
  ) {
    this.message = {
      role: 'assistant',
      content: [],
      stopReason: 'stop',
      usage: emptyUsage(),
      provider: model.provider,
      model: model.id,
      api: 'openai-responses',
    };
    this.blocks = new OutputBlocks(out, this.message, runIds);
  }

  /** Emits `start`: the server accepted the request. */
  start(): void {
    this.out.push({ type: 'start', provider: this.message.provider, model: this.message.model });
  }

  /** Handles one server-sent event (`event` is the SSE event name, when there was one). */
  sse(event: string | undefined, data: string): void {
    if (this.finished || data === '[DONE]') return; // not part of this API; some compatible servers add it
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      if (event === 'error') this.fail(errorFromStreamPayload(data, this.ctx));
      else if (!this.flushing) this.fail(notJsonEventError(this.ctx.url, data));
      return;
    }
    if (!isRecord(json)) return;
    // The payload names its type; the SSE event name only stands in when it does not.
    if (typeof json.type !== 'string' && event !== undefined) json.type = event;
    this.event(json);
  }

  /** Handles one stream event object. Unknown types are ignored (the API adds new ones). */
  event(ev: Json): void {
    if (this.finished) return;
    switch (ev.type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        if (isRecord(ev.response)) this.noteResponse(ev.response);
        return;
      case 'response.output_item.added':
        if (isRecord(ev.item)) this.blocks.added(ev.item, ev.output_index);
        return;
      case 'response.output_item.done':
        if (isRecord(ev.item)) this.blocks.done(ev.item, ev.output_index);
        return;
      case 'response.output_text.delta':
        this.blocks.text(ev, 'message', `c${num(ev.content_index)}`, str(ev.delta));
        return;
      case 'response.output_text.done':
        this.blocks.textDone(ev, 'message', `c${num(ev.content_index)}`, str(ev.text));
        return;
      case 'response.refusal.delta':
        this.message.refusal = (this.message.refusal ?? '') + str(ev.delta);
        return;
      case 'response.refusal.done':
        if (!this.message.refusal) this.message.refusal = str(ev.refusal);
        return;
      case 'response.function_call_arguments.delta':
        this.blocks.arguments(ev, str(ev.delta));
        return;
      case 'response.function_call_arguments.done':
        this.blocks.argumentsDone(ev, ev.arguments);
        return;
      case 'response.reasoning_summary_text.delta':
        this.blocks.text(ev, 'reasoning', `s${num(ev.summary_index)}`, str(ev.delta));
        return;
      case 'response.reasoning_summary_text.done':
        this.blocks.textDone(ev, 'reasoning', `s${num(ev.summary_index)}`, str(ev.text));
        return;
      case 'response.reasoning_text.delta':
        this.blocks.text(ev, 'reasoning', `c${num(ev.content_index)}`, str(ev.delta));
        return;
      case 'response.reasoning_text.done':
        this.blocks.textDone(ev, 'reasoning', `c${num(ev.content_index)}`, str(ev.text));
        return;
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        this.ended(isRecord(ev.response) ? ev.response : {}, ev.type.slice('response.'.length));
        return;
      case 'error':
        // Recorded shape `{type: 'error', error: {code, message}}`; the documented one has
        // code and message at the top. A `response.failed` follows and is ignored.
        this.fail(errorFromStreamPayload(isRecord(ev.error) ? ev.error : ev, this.ctx));
        return;
      default:
    }
  }

  /** Handles a whole non-streaming response body, then finishes. */
  response(body: Json): void {
    this.ended(body, typeof body.status === 'string' ? body.status : isRecord(body.error) ? 'failed' : 'completed');
  }

  /** The body ended (cleanly, or cut when `cause` is given) before a terminal event. */
  streamEnded(cause?: unknown): void {
    if (this.finished) return;
    const why = cause instanceof Error ? `: ${cause.message}` : '';
    const { url, provider, model } = this.ctx;
    const message = `The response stream from ${url} (${provider}/${model}) ended before it was complete (no response.completed event)${why}; the request can be retried`;
    this.fail(new ReinError('stream_cut', 'transient', message, cause === undefined ? {} : { cause }));
  }

  /** Ends the stream with `error`, carrying the partial message. */
  fail(error: ReinError): void {
    if (this.finished) return;
    this.blocks.settleArguments();
    this.message.stopReason = error.code === 'aborted' ? 'aborted' : 'error';
    this.message.error = error.toJSON();
    this.finished = true;
    this.out.push({ type: 'error', error, message: this.message });
    this.out.end(this.message);
  }

  /** A terminal response (`completed`, `incomplete` or `failed`): its usage, and the output not streamed. */
  private ended(response: Json, status: string): void {
    this.noteResponse(response);
    if (isRecord(response.usage)) this.message.usage = mapUsage(response.usage);
    if (status === 'failed' || (isRecord(response.error) && status !== 'completed')) {
      const error = isRecord(response.error) ? response.error : { message: `the response ended with status "${status}" and no error` };
      this.fail(errorFromStreamPayload(error, this.ctx));
      return;
    }
    // A non-streaming body, or a server that sent only the final event: decode its output.
    if (this.blocks.isEmpty && Array.isArray(response.output)) {
      for (const [index, item] of response.output.entries()) {
        if (!isRecord(item)) continue;
        this.blocks.added(item, index);
        this.blocks.done(item, index);
      }
    }
    this.blocks.closeAll();
    this.message.stopReason = this.stopReason(status, response);
    this.finished = true;
    this.out.push({ type: 'done', message: this.message });
    this.out.end(this.message);
  }

  private stopReason(status: string, response: Json): StopReason {
    if (status === 'incomplete') {
      const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
      // The other reason is max_output_tokens: the output was cut short either way.
      return reason === 'content_filter' ? 'content_filter' : 'length';
    }
    if (this.blocks.hasToolCalls) return 'tool_use';
    const refused = this.message.refusal !== undefined && this.message.refusal !== '';
    if (refused && !this.message.content.some((block) => block.type === 'text')) return 'refusal';
    return 'stop';
  }

  private noteResponse(response: Json): void {
    if (this.message.responseId === undefined && typeof response.id === 'string' && response.id !== '')
      this.message.responseId = response.id;
  }
}

/** Responses usage → rein's {@link Usage} (`input` excludes cached input tokens). */
export function mapUsage(raw: Json): Usage {
  const input = tokenCount(raw.input_tokens);
  const output = tokenCount(raw.output_tokens);
  const inputDetails = isRecord(raw.input_tokens_details) ? raw.input_tokens_details : {};
  const outputDetails = isRecord(raw.output_tokens_details) ? raw.output_tokens_details : {};
  const cacheRead = tokenCount(inputDetails.cached_tokens);
  return {
    input: Math.max(0, input - cacheRead),
    output,
    cacheRead,
    cacheWrite: 0,
    reasoning: tokenCount(outputDetails.reasoning_tokens),
    total: tokenCount(raw.total_tokens) || input + output,
  };
}
