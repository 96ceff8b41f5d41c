/**
 * The Gemini adapter (Google's Generative Language API, `generativelanguage.googleapis.com`):
 * `POST {baseUrl}/v1beta/models/{id}:streamGenerateContent?alt=sse`, or `:generateContent`
 * when `options.stream === false`.
 */
import type { StreamFunction } from '../types.js';
import { GeminiDecoder } from './gemini-decode.js';
import { geminiErrorFromResponse } from './gemini-errors.js';
import { buildGeminiBody, geminiHeaders, geminiUrl } from './gemini-request.js';
import { streamWire } from './wire-request.js';

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
export const streamGemini: StreamFunction = (model, context, options = {}) =>
  streamWire(model, options, {
    api: 'gemini',
    errorUrl: model.baseUrl,
    makeDecoder: (out, ctx) => new GeminiDecoder(out, model, ctx),
    prepare: () => {
      const url = geminiUrl(model, options.stream !== false);
      // Errors name the endpoint without its query string.
      return { url, headers: geminiHeaders(model), body: buildGeminiBody(model, context, options), errorUrl: `${url.origin}${url.pathname}` };
    },
    onEvent: (decoder, _event, data) => decoder.sse(data),
    onBody: (decoder, body) => decoder.body(body),
    // generateContent answers an object; a non-SSE stream answers an array of them.
    bodyMayBeArray: true,
    errorFromResponse: geminiErrorFromResponse,
    htmlHint: 'check the base URL (e.g. https://generativelanguage.googleapis.com)',
  });
