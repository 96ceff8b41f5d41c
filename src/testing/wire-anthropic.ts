/**
 * The Anthropic Messages wire (`POST /v1/messages`): named SSE events (`message_start`,
 * `content_block_start/delta/stop`, `message_delta`, `message_stop`, a `ping`) and `message`
 * bodies in the shape of the recordings in `shared/fixtures/anthropic/`.
 */
import { argumentsValue, mapFinish, pieces, type Answer } from './answer.js';
import { anthropicError, thinkingSignature, validateAnthropicRequest } from './validate-anthropic.js';
import { anthropicView } from './view.js';
import { namedFrame, type WireFormat } from './wire-format.js';

const STOP_REASONS: Record<string, string> = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens', content_filter: 'refusal' };

/** The HTTP status of an error type, for an `error_in_stream` fault met without streaming. */
const FAILURE_STATUS: Record<string, number> = { overloaded_error: 529, rate_limit_error: 429, invalid_request_error: 400 };

function stopReason(answer: Answer): string | null {
  return answer.finishReason === null ? null : mapFinish(answer.finishReason, STOP_REASONS);
}

/** Anthropic's `input_tokens` leave out what was read from the cache. */
function usage(answer: Answer, outputTokens: number): Record<string, number> {
  const { tokens } = answer;
  return {
    input_tokens: Math.max(0, tokens.prompt - tokens.cached),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: tokens.cached,
    output_tokens: outputTokens,
  };
}

/** The body Anthropic sends with `status` (529 is its "overloaded"). */
function statusBody(status: number, model: string): unknown {
  switch (status) {
    case 400:
      return anthropicError('invalid_request_error', 'scripted fault: invalid request');
    case 401:
      return anthropicError('authentication_error', 'invalid x-api-key');
    case 403:
      return anthropicError('permission_error', 'Your API key does not have permission to use the specified resource.');
    case 404:
      return anthropicError('not_found_error', `model: ${model}`);
    case 413:
      return anthropicError('request_too_large', 'Request exceeds the maximum allowed number of bytes.');
    case 429:
      return anthropicError(
        'rate_limit_error',
        'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.',
      );
    case 500:
      return anthropicError('api_error', 'Internal server error');
    case 529:
      return anthropicError('overloaded_error', 'Overloaded');
    default:
      return anthropicError(status >= 500 ? 'api_error' : 'invalid_request_error', `scripted fault: HTTP ${status}`);
  }
}

function frames(answer: Answer, chunkSize: number, streamError?: { message: string; code?: string }): string[] {
  const { turn, calls } = answer;
  const out: string[] = [];
  const send = (type: string, data: Record<string, unknown>): void => {
    out.push(namedFrame(type, JSON.stringify({ type, ...data })));
  };
  send('message_start', {
    message: {
      id: answer.id,
      type: 'message',
      role: 'assistant',
      model: answer.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usage(answer, 1),
    },
  });
  let index = 0;
  const block = (start: Record<string, unknown>, deltas: Array<Record<string, unknown>>): void => {
    send('content_block_start', { index, content_block: start });
    // The recordings show a ping right after the first block opens.
    if (index === 0) out.push(namedFrame('ping', '{"type": "ping"}'));
    for (const delta of deltas) send('content_block_delta', { index, delta });
    send('content_block_stop', { index });
    index++;
  };
  if (turn.thinking) {
    const deltas: Array<Record<string, unknown>> = pieces(turn.thinking, chunkSize).map((thinking) => ({
      type: 'thinking_delta',
      thinking,
    }));
    deltas.push({ type: 'signature_delta', signature: thinkingSignature(turn.thinking) });
    block({ type: 'thinking', thinking: '', signature: '' }, deltas);
  }
  if (turn.text)
    block(
      { type: 'text', text: '' },
      pieces(turn.text, chunkSize).map((text) => ({ type: 'text_delta', text })),
    );
  for (const call of calls) {
    // Anthropic opens every tool_use with an empty partial_json, then the JSON in pieces.
    const deltas = ['', ...pieces(call.arguments, chunkSize)].map((partial_json) => ({ type: 'input_json_delta', partial_json }));
    block({ type: 'tool_use', id: call.id, name: call.name, input: {} }, deltas);
  }
  if (streamError) {
    out.push(namedFrame('error', JSON.stringify(anthropicError(streamError.code ?? 'api_error', streamError.message))));
    return out;
  }
  send('message_delta', {
    delta: { stop_reason: stopReason(answer), stop_sequence: null },
    usage: usage(answer, answer.tokens.completion),
  });
  send('message_stop', {});
  return out;
}

function messageBody(answer: Answer): string {
  const { turn, calls } = answer;
  const content: Array<Record<string, unknown>> = [];
  if (turn.thinking) content.push({ type: 'thinking', thinking: turn.thinking, signature: thinkingSignature(turn.thinking) });
  if (turn.text) content.push({ type: 'text', text: turn.text });
  for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsValue(call) });
  return JSON.stringify({
    id: answer.id,
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content,
    stop_reason: stopReason(answer),
    stop_sequence: null,
    usage: usage(answer, answer.tokens.completion),
  });
}

/** The Anthropic Messages wire, as the server drives it. */
export const anthropicWire: WireFormat = {
  api: 'anthropic-messages',
  unparsable: () =>
    anthropicError('invalid_request_error', 'There was an error parsing the body of your request. Please check that it is valid JSON.'),
  scriptError: (message) => anthropicError('api_error', message),
  validate: (body, headers) => validateAnthropicRequest(body, headers),
  model: (body) => body.model as string,
  streams: (body) => body.stream === true,
  view: (body) => anthropicView(body),
  responseId: (n) => `msg_scripted_${n}`,
  callId: (n) => `toolu_scripted_${n}`,
  statusFault(fault, model) {
    const headers: Record<string, string> = {};
    if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
    if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs);
    // Anthropic tells its SDKs whether to retry; a client may read it.
    headers['x-should-retry'] = String(fault.status === 408 || fault.status === 409 || fault.status === 429 || fault.status >= 500);
    return { status: fault.status, headers, body: fault.body ?? statusBody(fault.status, model) };
  },
  failure: (fault) => ({ status: FAILURE_STATUS[fault.code ?? ''] ?? 500, body: anthropicError(fault.code ?? 'api_error', fault.message) }),
  frames: (answer, _body, options) => frames(answer, options.chunkSize, options.streamError),
  ending: () => '',
  json: (answer) => messageBody(answer),
};
