/**
 * The OpenAI Chat Completions adapter (`POST {baseUrl}/chat/completions`). It also serves
 * every OpenAI-compatible server: Ollama, vLLM, LM Studio, OpenRouter, Groq, DeepSeek, ….
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { ReinError } from '../../errors.js';
import { displayUrl } from '../base-url.js';
import type { EventStream } from '../event-stream.js';
import { errorFromResponse, type ErrorContext } from '../http-errors.js';
import type { AssistantMessage, AssistantStreamEvent, Context, ModelRef, StreamFunction, StreamOptions } from '../types.js';
import { recordRefusal, sendsStreamOptions, usesMaxCompletionTokens, type RefusableParameters } from './chat-refusals.js';
import { ChatDecoder } from './openai-chat-decode.js';
import { buildChatBody, chatHeaders, chatTarget, reasoningEffort } from './openai-chat-request.js';
import { streamWire, type WireSpec } from './wire-request.js';

/**
 * Streams one Chat Completions response as rein events. Never throws: every failure (an
 * HTTP error status, the network, an abort, a malformed body) ends the stream with one
 * `error` event whose message is the partial {@link AssistantMessage}.
 *
 * With `options.stream === false` the server answers with one JSON body, which is decoded
 * into the same events (`start`, blocks, `done`), so consumers see one shape.
 *
 * @example
 * const stream = streamOpenAIChat(resolveModel('ollama/llama3.1'), { messages: [{ role: 'user', content: 'Hi' }] });
 * for await (const event of stream) if (event.type === 'text_delta') process.stdout.write(event.delta);
 * const message = await stream.result();
 */
export const streamOpenAIChat: StreamFunction = (model, context, options = {}) => streamWire(model, options, new ChatWire(model, context, options));

/** The Chat Completions part of one request: one object per request, its methods shared. */
class ChatWire implements WireSpec<ChatDecoder> {
  readonly api = 'openai-chat';
  readonly htmlHint = 'check the base URL (it usually ends with /v1)';
  readonly errorUrl: string;
  /** Whether the request `prepare` built last carried `stream_options` / `max_tokens` (set with the body). */
  private sentStreamOptions = false;
  private sentMaxTokens = false;
  private sentReasoningEffort = false;

  constructor(
    private readonly model: ModelRef,
    private readonly context: Context,
    private readonly options: StreamOptions,
  ) {
    // Quoted only when the base URL does not even parse; `prepare` names the real endpoint.
    this.errorUrl = displayUrl(model.baseUrl);
  }

  makeDecoder(out: EventStream<AssistantStreamEvent, AssistantMessage>, ctx: ErrorContext): ChatDecoder {
    return new ChatDecoder(out, this.model, ctx, this.options.toolCallIds);
  }

  prepare(): { url: URL; errorUrl: string; headers: OutgoingHttpHeaders; body: string } {
    const { model } = this;
    const target = chatTarget(model.baseUrl);
    this.sentStreamOptions = this.options.stream !== false && sendsStreamOptions(model.baseUrl);
    this.sentMaxTokens = this.options.maxTokens !== undefined && !usesMaxCompletionTokens(model.baseUrl, model.id);
    this.sentReasoningEffort = reasoningEffort(model, this.options) !== undefined;
    return { url: target.url, errorUrl: target.errorUrl, headers: chatHeaders(model), body: buildChatBody(model, this.context, this.options) };
  }

  adjustAfterRefusal(status: number, text: string): boolean {
    // Judged by what this request carried: a concurrent request may have seen the refusal first.
    const sent: RefusableParameters = { streamOptions: this.sentStreamOptions, maxTokens: this.sentMaxTokens, reasoningEffort: this.sentReasoningEffort };
    return recordRefusal(this.model.baseUrl, this.model.id, sent, status, text);
  }

  onEvent(decoder: ChatDecoder, event: string | undefined, data: string): void {
    decoder.sse(event, data);
  }

  onBody(decoder: ChatDecoder, body: unknown): void {
    decoder.completion(body as Record<string, unknown>);
  }

  errorFromResponse(status: number, headers: IncomingHttpHeaders, text: string, ctx: ErrorContext): ReinError {
    return errorFromResponse(status, headers, text, ctx);
  }
}
