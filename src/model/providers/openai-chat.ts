/**
 * The OpenAI Chat Completions adapter (`POST {baseUrl}/chat/completions`). It also serves
 * every OpenAI-compatible server: Ollama, vLLM, LM Studio, OpenRouter, Groq, DeepSeek, ….
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { ReinError } from '../../errors.js';
import { displayUrl } from '../base-url.js';
import { EventStream } from '../event-stream.js';
import { errorFromResponse, type ErrorContext } from '../http-errors.js';
import type { AssistantMessage, AssistantStreamEvent, Context, ModelRef, StreamFunction, StreamOptions } from '../types.js';
import { promptedContext, readerFor } from '../prompted-tools.js';
import { chatCompat } from './chat-compat.js';
import { refusalOf, type RefusableParameters } from './chat-refusals.js';
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
export const streamOpenAIChat: StreamFunction = (model, context, options = {}) =>
  streamWire(model, options, new ChatWire(model, context, options));

/** The Chat Completions part of one request: one object per request, its methods shared. */
class ChatWire implements WireSpec<ChatDecoder> {
  readonly api = 'openai-chat';
  readonly htmlHint = 'check the base URL (it usually ends with /v1)';
  readonly errorUrl: string;
  /** Whether the request `prepare` built last carried `stream_options` / `max_tokens` (set with the body). */
  private sentStreamOptions = false;
  private sentMaxTokens = false;
  private sentReasoningEffort = false;
  private sentTools = false;
  private decoder: ChatDecoder | undefined;
  private out: EventStream<AssistantStreamEvent, AssistantMessage> | undefined;
  /** The context as sent: the agent's, or after a refusal of `tools`, with the tools in the prompt. */
  private context: Context;

  constructor(
    private readonly model: ModelRef,
    context: Context,
    private readonly options: StreamOptions,
  ) {
    this.context = context;
    // Quoted only when the base URL does not even parse; `prepare` names the real endpoint.
    this.errorUrl = displayUrl(model.baseUrl);
  }

  makeDecoder(out: EventStream<AssistantStreamEvent, AssistantMessage>, ctx: ErrorContext): ChatDecoder {
    this.out = out;
    this.decoder = new ChatDecoder(out, this.model, ctx, this.options.toolCallIds, chatCompat(this.model).thinkingFormat === 'think-tags');
    return this.decoder;
  }

  prepare(): { url: URL; errorUrl: string; headers: OutgoingHttpHeaders; body: string } {
    const { model } = this;
    const target = chatTarget(model.baseUrl);
    const compat = chatCompat(model);
    this.sentStreamOptions = this.options.stream !== false && compat.streamUsage;
    this.sentMaxTokens = this.options.maxTokens !== undefined && compat.maxTokensField === 'max_tokens';
    this.sentTools = this.context.tools !== undefined && this.context.tools.length > 0;
    this.sentReasoningEffort = reasoningEffort(model, this.options, compat) !== undefined;
    return {
      url: target.url,
      errorUrl: target.errorUrl,
      headers: chatHeaders(model),
      body: buildChatBody(model, this.context, this.options, compat),
    };
  }

  adjustAfterRefusal(status: number, text: string): boolean {
    // Judged by what this request carried: a concurrent request may have seen the refusal first.
    // Tools are switched to the prompt only where nobody asked for native tool calling.
    const tools = this.sentTools && this.model.toolCalling !== 'native';
    const sent: RefusableParameters = {
      streamOptions: this.sentStreamOptions,
      maxTokens: this.sentMaxTokens,
      reasoningEffort: this.sentReasoningEffort,
      tools,
    };
    const refused = refusalOf(this.model.baseUrl, this.model.id, sent, status, text);
    if (refused === 'tools') this.promptTools();
    return refused !== undefined;
  }

  /**
   * The server refused `tools`: this request goes again with the tools in the prompt, and
   * its text is read for calls (later requests take that way from the start: the refusal is
   * learned). Nothing was decoded yet, so the decoder writes to the reader from now on.
   */
  private promptTools(): void {
    const { out, decoder } = this;
    if (out === undefined || decoder === undefined) return;
    const original = this.context;
    this.context = promptedContext(original);
    const reader = readerFor(out, original, this.options);
    const inner = new EventStream<AssistantStreamEvent, AssistantMessage>();
    void inner.listen(reader.push);
    decoder.redirect(
      inner,
      `${this.model.provider} (${this.errorUrl}) refused the tools parameter for ${this.model.id}: its tools are described in the prompt from now on (toolCalling: prompt)`,
    );
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
