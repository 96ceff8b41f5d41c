/**
 * The Gemini adapter (Google's Generative Language API, `generativelanguage.googleapis.com`):
 * `POST {baseUrl}/v1beta/models/{id}:streamGenerateContent?alt=sse`, or `:generateContent`
 * when `options.stream === false`.
 */
import { displayUrl } from '../base-url.js';
import type { StreamFunction } from '../types.js';
import { GeminiDecoder } from './gemini-decode.js';
import { geminiErrorFromResponse } from './gemini-errors.js';
import { buildGeminiBody, geminiHeaders, geminiTarget } from './gemini-request.js';
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
    // Quoted only when the base URL does not even parse; `prepare` names the real endpoint.
    errorUrl: displayUrl(model.baseUrl),
    makeDecoder: (out, ctx) => new GeminiDecoder(out, model, ctx, options.toolCallIds),
    prepare: () => {
      // Errors name the endpoint without credentials: no user or password, no `key=` parameter.
      const { url, errorUrl } = geminiTarget(model, options.stream !== false);
      return { url, errorUrl, headers: geminiHeaders(model), body: buildGeminiBody(model, context, options) };
    },
    onEvent: (decoder, _event, data) => decoder.sse(data),
    onBody: (decoder, body) => decoder.body(body),
    // generateContent answers an object; a non-SSE stream answers an array of them.
    bodyMayBeArray: true,
    errorFromResponse: geminiErrorFromResponse,
    htmlHint: 'check the base URL (e.g. https://generativelanguage.googleapis.com)',
  });
