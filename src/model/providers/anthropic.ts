/**
 * The Anthropic Messages adapter (`POST {baseUrl}/v1/messages`, `anthropic-version:
 * 2023-06-01`). Request building is in anthropic-request.ts, event decoding in
 * anthropic-decode.ts, error classification in anthropic-errors.ts.
 */
import { createParser } from 'eventsource-parser';
import { ReinError } from '../../errors.js';
import { EventStream } from '../event-stream.js';
import { httpPost } from '../http.js';
import type { HttpResponse } from '../http.js';
import { errorFromNetwork } from '../http-errors.js';
import type { ErrorContext } from '../http-errors.js';
import { DEFAULT_IDLE_TIMEOUT_MS, emptyUsage } from '../types.js';
import type { AssistantMessage, AssistantStreamEvent, Context, ModelRef, StreamFunction, StreamOptions } from '../types.js';
import { AnthropicDecoder } from './anthropic-decode.js';
import { anthropicResponseError } from './anthropic-errors.js';
import { anthropicHeaders, buildAnthropicBody, messagesUrl } from './anthropic-request.js';

/**
 * Streams one Anthropic Messages response as rein events. Never throws: every failure (an
 * HTTP error status, an `error` event mid-stream, the network, an abort, a malformed body)
 * ends the stream with one `error` event whose message is the partial
 * {@link AssistantMessage} (`stopReason: 'aborted'` after an abort).
 *
 * With `options.stream === false` Anthropic answers with one JSON message, which is decoded
 * into the same events (`start`, blocks, `done`), so consumers see one shape.
 *
 * `options.thinking` low / medium / high asks for extended thinking with a budget of
 * 1024 / 4096 / 16384 tokens; thinking comes back as `thinking` blocks whose signature must
 * go back unchanged on later turns (the history handoff keeps it for the same model).
 *
 * @example
 * const stream = streamAnthropic(resolveModel('anthropic/claude-sonnet-4-5'), { system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] });
 * for await (const event of stream) if (event.type === 'text_delta') process.stdout.write(event.delta);
 * const message = await stream.result();
 */
export const streamAnthropic: StreamFunction = (model, context, options = {}) => {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  run(out, model, context, options).catch((error: unknown) => {
    // `run` handles every expected failure itself; this only guarantees that a bug in
    // rein still ends the stream instead of leaving the consumer waiting forever.
    if (out.isEnded) return;
    const failure = new ReinError('internal', 'fatal', `The anthropic-messages adapter failed: ${String(error)}`, { cause: error });
    const message: AssistantMessage = { role: 'assistant', content: [], stopReason: 'error', usage: emptyUsage(), provider: model.provider, model: model.id, api: 'anthropic-messages', error: failure.toJSON() };
    out.push({ type: 'error', error: failure, message });
    out.end(message);
  });
  return out;
};

async function run(
  out: EventStream<AssistantStreamEvent, AssistantMessage>,
  model: ModelRef,
  context: Context,
  options: StreamOptions,
): Promise<void> {
  const { signal } = options;
  const stream = options.stream !== false;
  const ctx: ErrorContext = { provider: model.provider, model: model.id, url: `${model.baseUrl}/v1/messages` };
  const decoder = new AnthropicDecoder(out, model, ctx);
  let started = false;
  try {
    const url = messagesUrl(model.baseUrl);
    ctx.url = url.href;
    const body = buildAnthropicBody(model, context, options);
    const res = await httpPost(url, anthropicHeaders(model), body, signal, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
    if (res.status < 200 || res.status >= 300) {
      decoder.fail(anthropicResponseError(res.status, res.headers, await res.text(), ctx));
      return;
    }
    decoder.start();
    started = true;
    const contentType = res.headers['content-type'] ?? '';
    if (contentType.includes('text/html')) {
      // A web page at /v1/messages: the base URL points at a UI or a login page, not the API.
      const page = (await res.text(200)).replace(/\s+/g, ' ');
      decoder.fail(new ReinError('invalid_response', 'fatal', `${ctx.url} answered with an HTML page, not the API: check the base URL. The page began: ${page}`));
    } else if (!stream || contentType.includes('json')) await decodeBody(res, decoder, ctx);
    else await decodeStream(res, decoder);
  } catch (error) {
    if (decoder.finished) return;
    if (signal?.aborted) decoder.fail(new ReinError('aborted', 'fatal', 'The model request was aborted', { cause: signal.reason }));
    else if (started && stream) decoder.streamEnded(error);
    else decoder.fail(errorFromNetwork(error, ctx));
  }
}

async function decodeStream(res: HttpResponse, decoder: AnthropicDecoder): Promise<void> {
  const parser = createParser({ onEvent: (event) => decoder.sse(event.event, event.data) });
  await res.consume((chunk) => {
    if (decoder.finished) return; // after message_stop or an error: let the rest drain so the socket is reused
    try {
      parser.feed(chunk);
    } catch (error) {
      // Runs inside a stream 'data' listener: an exception here would be uncaught.
      decoder.fail(new ReinError('internal', 'fatal', `Failed to decode the stream: ${String(error)}`, { cause: error }));
    }
  });
  if (decoder.finished) return;
  // A last event may lack its blank line; dispatch it (a truncated one is ignored).
  decoder.flushing = true;
  parser.feed('\n\n');
  decoder.streamEnded();
}

async function decodeBody(res: HttpResponse, decoder: AnthropicDecoder, ctx: ErrorContext): Promise<void> {
  const text = await res.text(Number.POSITIVE_INFINITY);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    decoder.fail(new ReinError('invalid_response', 'transient', `${ctx.url} answered 200 with a body that is not a JSON object: ${text.slice(0, 200)}`));
    return;
  }
  decoder.body(body as Record<string, unknown>);
}
