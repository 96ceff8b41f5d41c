/**
 * The OpenAI Responses adapter (`POST {baseUrl}/responses`): OpenAI's own API for its
 * reasoning models, also spoken by LM Studio and other local servers.
 */
import { displayUrl } from '../base-url.js';
import { errorFromResponse } from '../http-errors.js';
import type { StreamFunction } from '../types.js';
import { ResponsesDecoder } from './openai-responses-decode.js';
import { buildResponsesBody, responsesHeaders, responsesTarget } from './openai-responses-request.js';
import { streamWire } from './wire-request.js';

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
export const streamOpenAIResponses: StreamFunction = (model, context, options = {}) =>
  streamWire(model, options, {
    api: 'openai-responses',
    // Quoted only when the base URL does not even parse; `prepare` names the real endpoint.
    errorUrl: displayUrl(model.baseUrl),
    makeDecoder: (out, ctx) => new ResponsesDecoder(out, model, ctx, options.toolCallIds),
    prepare: () => {
      const { url, errorUrl } = responsesTarget(model.baseUrl);
      return { url, errorUrl, headers: responsesHeaders(model), body: buildResponsesBody(model, context, options) };
    },
    onEvent: (decoder, event, data) => decoder.sse(event, data),
    onBody: (decoder, body) => decoder.response(body as Record<string, unknown>),
    errorFromResponse,
    htmlHint: 'check the base URL (it usually ends with /v1)',
  });
