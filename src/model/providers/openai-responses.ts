/**
 * The OpenAI Responses adapter (`POST {baseUrl}/responses`): OpenAI's own API for its
 * reasoning models, also spoken by LM Studio and other local servers.
 */
import { createParser } from 'eventsource-parser';
import { ReinError } from '../../errors.js';
import { EventStream } from '../event-stream.js';
import { httpPost } from '../http.js';
import type { HttpResponse } from '../http.js';
import { errorFromNetwork, errorFromResponse } from '../http-errors.js';
import type { ErrorContext } from '../http-errors.js';
import { DEFAULT_IDLE_TIMEOUT_MS, emptyUsage } from '../types.js';
import type { AssistantMessage, AssistantStreamEvent, Context, ModelRef, StreamFunction, StreamOptions } from '../types.js';
import { ResponsesDecoder } from './openai-responses-decode.js';
import { buildResponsesBody, responsesHeaders, responsesUrl } from './openai-responses-request.js';

/**
 * Streams one Responses API response as rein events. Never throws: every failure (an HTTP
 * error status, an `error` event or `response.failed` in the stream, the network, an
 * abort, a malformed body) ends the stream with one `error` event whose message is the
 * partial {@link AssistantMessage}.
 *
 * The request is stateless (`store: false`); the model's reasoning comes back encrypted in
 * `ThinkingContent.signature` and is sent back on later turns to the same model. With
 * `options.stream === false` the JSON body is decoded into the same events.
 *
 * @example
 * const stream = streamOpenAIResponses(resolveModel('openai-responses/gpt-5'), { messages: [{ role: 'user', content: 'Hi' }] }, { thinking: 'low' });
 * for await (const event of stream) if (event.type === 'text_delta') process.stdout.write(event.delta);
 * const message = await stream.result();
 */
export const streamOpenAIResponses: StreamFunction = (model, context, options = {}) => {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  run(out, model, context, options).catch((error: unknown) => {
    // `run` handles every expected failure itself; this only guarantees that a bug in
    // rein still ends the stream instead of leaving the consumer waiting forever.
    if (out.isEnded) return;
    const failure = new ReinError('internal', 'fatal', `The openai-responses adapter failed: ${String(error)}`, { cause: error });
    const message: AssistantMessage = {
      role: 'assistant',
      content: [],
      stopReason: 'error',
      usage: emptyUsage(),
      provider: model.provider,
      model: model.id,
      api: 'openai-responses',
      error: failure.toJSON(),
    };
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
  const ctx: ErrorContext = { provider: model.provider, model: model.id, url: `${model.baseUrl}/responses` };
  const decoder = new ResponsesDecoder(out, model, ctx);
  let started = false;
  try {
    const url = responsesUrl(model.baseUrl);
    ctx.url = url.href;
    const body = buildResponsesBody(model, context, options);
    const res = await httpPost(url, responsesHeaders(model), body, signal, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
    if (res.status < 200 || res.status >= 300) {
      decoder.fail(errorFromResponse(res.status, res.headers, await res.text(), ctx));
      return;
    }
    decoder.start();
    started = true;
    const contentType = res.headers['content-type'] ?? '';
    if (contentType.includes('text/html')) {
      // A web page at /responses: the base URL points at a UI, not at the API.
      const page = (await res.text(200)).replace(/\s+/g, ' ');
      decoder.fail(new ReinError('invalid_response', 'fatal', `${ctx.url} answered with an HTML page, not the API: check the base URL (it usually ends with /v1). The page began: ${page}`));
    } else if (!stream || contentType.includes('json')) await decodeBody(res, decoder, ctx);
    else await decodeStream(res, decoder);
  } catch (error) {
    if (decoder.finished) return;
    if (signal?.aborted) decoder.fail(new ReinError('aborted', 'fatal', 'The model request was aborted', { cause: signal.reason }));
    else if (started && stream) decoder.streamEnded(error);
    else decoder.fail(errorFromNetwork(error, ctx));
  }
}

async function decodeStream(res: HttpResponse, decoder: ResponsesDecoder): Promise<void> {
  const parser = createParser({ onEvent: (event) => decoder.sse(event.event, event.data) });
  await res.consume((chunk) => {
    if (decoder.finished) return; // after the terminal event: let the rest drain so the socket is reused
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

async function decodeBody(res: HttpResponse, decoder: ResponsesDecoder, ctx: ErrorContext): Promise<void> {
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
  decoder.response(body as Record<string, unknown>);
}
