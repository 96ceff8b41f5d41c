/**
 * The Anthropic Messages adapter (`POST {baseUrl}/v1/messages`, `anthropic-version:
 * 2023-06-01`). Request building is in anthropic-request.ts, event decoding in
 * anthropic-decode.ts, error classification in anthropic-errors.ts.
 */
import { displayUrl } from '../base-url.js';
import type { StreamFunction } from '../types.js';
import { AnthropicDecoder } from './anthropic-decode.js';
import { anthropicResponseError } from './anthropic-errors.js';
import { anthropicHeaders, buildAnthropicBody, messagesTarget } from './anthropic-request.js';
import { streamWire } from './wire-request.js';

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
export const streamAnthropic: StreamFunction = (model, context, options = {}) =>
  streamWire(model, options, {
    api: 'anthropic-messages',
    // Quoted only when the base URL does not even parse; `prepare` names the real endpoint.
    errorUrl: displayUrl(model.baseUrl),
    makeDecoder: (out, ctx) => new AnthropicDecoder(out, model, ctx, options.toolCallIds),
    prepare: () => {
      const { url, errorUrl } = messagesTarget(model.baseUrl);
      return { url, errorUrl, headers: anthropicHeaders(model), body: buildAnthropicBody(model, context, options) };
    },
    onEvent: (decoder, event, data) => decoder.sse(event, data),
    onBody: (decoder, body) => decoder.body(body as Record<string, unknown>),
    errorFromResponse: anthropicResponseError,
    htmlHint: 'check the base URL (https://api.anthropic.com, without /v1)',
  });
