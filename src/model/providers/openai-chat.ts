/**
 * The OpenAI Chat Completions adapter (`POST {baseUrl}/chat/completions`). It also serves
 * every OpenAI-compatible server: Ollama, vLLM, LM Studio, OpenRouter, Groq, DeepSeek, ….
 */
import { errorFromResponse } from '../http-errors.js';
import type { StreamFunction } from '../types.js';
import { ChatDecoder } from './openai-chat-decode.js';
import { buildChatBody, chatHeaders, chatUrl } from './openai-chat-request.js';
import { streamWire } from './wire-request.js';

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
  streamWire(model, options, {
    api: 'openai-chat',
    errorUrl: `${model.baseUrl}/chat/completions`,
    makeDecoder: (out, ctx) => new ChatDecoder(out, model, ctx),
    prepare: () => ({ url: chatUrl(model.baseUrl), headers: chatHeaders(model), body: buildChatBody(model, context, options) }),
    onEvent: (decoder, event, data) => decoder.sse(event, data),
    onBody: (decoder, body) => decoder.completion(body as Record<string, unknown>),
    errorFromResponse,
    htmlHint: 'check the base URL (it usually ends with /v1)',
  });
