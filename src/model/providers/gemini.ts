/**
 * The Gemini adapter (Google's Generative Language API, `generativelanguage.googleapis.com`):
 * `POST {baseUrl}/v1beta/models/{id}:streamGenerateContent?alt=sse`, or `:generateContent`
 * when `options.stream === false`.
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
import { GeminiDecoder } from './gemini-decode.js';
import { geminiErrorFromResponse } from './gemini-errors.js';
import { buildGeminiBody, geminiHeaders, geminiUrl } from './gemini-request.js';

/**
 * Streams one Gemini response as rein events. Never throws: every failure (an HTTP error
 * status, the network, an abort, a malformed body) ends the stream with one `error` event
 * whose message is the partial {@link AssistantMessage}.
 *
 * Gemini sends no call ids; calls get ids made from the response id (`call_<responseId>_<n>`).
 * Thought signatures are kept on the blocks they came with (`signature`) and sent back on
 * later turns to the same model.
 *
 * @example
 * const stream = streamGemini(resolveModel('gemini/gemini-2.5-flash'), { messages: [{ role: 'user', content: 'Hi' }] }, { thinking: 'low' });
 * for await (const event of stream) if (event.type === 'text_delta') process.stdout.write(event.delta);
 * const message = await stream.result();
 */
export const streamGemini: StreamFunction = (model, context, options = {}) => {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  run(out, model, context, options).catch((error: unknown) => {
    // `run` handles every expected failure itself; this only guarantees that a bug in
    // rein still ends the stream instead of leaving the consumer waiting forever.
    if (out.isEnded) return;
    const failure = new ReinError('internal', 'fatal', `The gemini adapter failed: ${String(error)}`, { cause: error });
    const message: AssistantMessage = { role: 'assistant', content: [], stopReason: 'error', usage: emptyUsage(), provider: model.provider, model: model.id, api: 'gemini', error: failure.toJSON() };
    out.push({ type: 'error', error: failure, message });
    out.end(message);
  });
  return out;
};

async function run(out: EventStream<AssistantStreamEvent, AssistantMessage>, model: ModelRef, context: Context, options: StreamOptions): Promise<void> {
  const { signal } = options;
  const stream = options.stream !== false;
  const ctx: ErrorContext = { provider: model.provider, model: model.id, url: model.baseUrl };
  const decoder = new GeminiDecoder(out, model, ctx);
  let started = false;
  try {
    const url = geminiUrl(model, stream);
    ctx.url = `${url.origin}${url.pathname}`;
    const body = buildGeminiBody(model, context, options);
    const res = await httpPost(url, geminiHeaders(model), body, signal, options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
    if (res.status < 200 || res.status >= 300) {
      decoder.fail(geminiErrorFromResponse(res.status, res.headers, await res.text(), ctx));
      return;
    }
    decoder.start();
    started = true;
    const contentType = res.headers['content-type'] ?? '';
    if (contentType.includes('text/html')) {
      const page = (await res.text(200)).replace(/\s+/g, ' ');
      decoder.fail(new ReinError('invalid_response', 'fatal', `${ctx.url} answered with an HTML page, not the Gemini API: check the base URL (e.g. https://generativelanguage.googleapis.com). The page began: ${page}`));
    } else if (!stream || contentType.includes('json')) await decodeBody(res, decoder, ctx);
    else await decodeStream(res, decoder);
  } catch (error) {
    if (decoder.finished) return;
    if (signal?.aborted) decoder.fail(new ReinError('aborted', 'fatal', 'The model request was aborted', { cause: signal.reason }));
    else if (started && stream) decoder.streamEnded(error);
    else decoder.fail(errorFromNetwork(error, ctx));
  }
}

async function decodeStream(res: HttpResponse, decoder: GeminiDecoder): Promise<void> {
  // eventsource-parser accepts Gemini's `\r\n\r\n` event separators.
  const parser = createParser({ onEvent: (event) => decoder.sse(event.data) });
  await res.consume((chunk) => {
    if (decoder.finished) return; // after an error: let the rest drain so the socket is reused
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

async function decodeBody(res: HttpResponse, decoder: GeminiDecoder, ctx: ErrorContext): Promise<void> {
  const text = await res.text(Number.POSITIVE_INFINITY);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (typeof body !== 'object' || body === null) {
    decoder.fail(new ReinError('invalid_response', 'transient', `${ctx.url} answered 200 with a body that is not JSON: ${text.slice(0, 200)}`));
    return;
  }
  decoder.body(body);
}
