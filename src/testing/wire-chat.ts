/**
 * The OpenAI Chat Completions wire (`POST /v1/chat/completions`): SSE chunk frames and
 * `chat.completion` bodies, byte-for-byte in the shape of the recordings in
 * `shared/fixtures/openai-chat/`. Built as strings with one `JSON.stringify` per delta
 * because the benchmark runs the server at hundreds of requests per second.
 */
import { pieces, type Answer } from './answer.js';
import { validateChatRequest } from './validate-chat.js';
import { chatView } from './view.js';
import type { ChatRequest } from './script.js';
import type { WireFormat } from './wire-format.js';

/** An OpenAI-shaped error body. */
export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** Builds an OpenAI-shaped error body. */
export function errorBody(message: string, type: string, code: string | null = null, param: string | null = null): ErrorBody {
  return { error: { message, type, param, code } };
}

/** The body a real server sends with `status`, for a `status` fault without its own body. */
export function statusErrorBody(status: number, model: string): ErrorBody {
  switch (status) {
    case 401:
      return errorBody(
        'Incorrect API key provided: sk-scri*****pted. You can find your API key at https://platform.openai.com/account/api-keys.',
        'invalid_request_error',
        'invalid_api_key',
      );
    case 404:
      return errorBody(
        `The model \`${model}\` does not exist or you do not have access to it.`,
        'invalid_request_error',
        'model_not_found',
      );
    case 429:
      return errorBody(
        'Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1s.',
        'requests',
        'rate_limit_exceeded',
      );
    case 500:
      return errorBody('The server had an error while processing your request. Sorry about that!', 'server_error', 'server_error');
    case 503:
      return errorBody('The engine is currently overloaded, please try again later', 'server_error', null);
    default:
      return errorBody(`scripted fault: HTTP ${status}`, status >= 500 ? 'server_error' : 'invalid_request_error', null);
  }
}

/** The `usage` object of Chat Completions: the script's details are kept as given. */
function chatUsage(answer: Answer): Record<string, unknown> {
  const { tokens } = answer;
  const given = answer.turn.usage ?? {};
  return {
    prompt_tokens: tokens.prompt,
    completion_tokens: tokens.completion,
    total_tokens: tokens.total,
    prompt_tokens_details: { cached_tokens: tokens.cached, ...given.prompt_tokens_details },
    completion_tokens_details: { reasoning_tokens: tokens.reasoning, ...given.completion_tokens_details },
  };
}

/**
 * The SSE `data:` frames of a streamed answer, without the final `data: [DONE]`. With
 * `streamError`, the frames end with an error frame instead of the finish and usage chunks.
 */
export function streamFrames(
  answer: Answer,
  options: { chunkSize: number; includeUsage: boolean; streamError?: { message: string; code?: string } },
): string[] {
  const { turn, calls } = answer;
  // OpenAI sends `"usage":null` on every chunk only when the usage chunk was asked for.
  const usageNull = options.includeUsage ? ',"usage":null' : '';
  const envelope = `{"id":${JSON.stringify(answer.id)},"object":"chat.completion.chunk","created":${answer.created},"model":${JSON.stringify(answer.model)},"choices":`;
  const head = `data: ${envelope}[{"index":0,"delta":`;
  const tail = answer.finishReason === null ? `}]${usageNull}}\n\n` : `,"finish_reason":null}]${usageNull}}\n\n`;
  const frames: string[] = [];
  const push = (delta: unknown): void => {
    frames.push(head + JSON.stringify(delta) + tail);
  };

  // Recordings: text turns open with `content: ""`, tool-only turns with `content: null`.
  const hasText = turn.text !== undefined || calls.length === 0;
  push({ role: 'assistant', content: hasText ? '' : null });
  if (turn.thinking) for (const piece of pieces(turn.thinking, options.chunkSize)) push({ reasoning_content: piece });
  if (turn.text) for (const piece of pieces(turn.text, options.chunkSize)) push({ content: piece });
  calls.forEach((call, index) => {
    push({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
    for (const piece of pieces(call.arguments, options.chunkSize)) push({ tool_calls: [{ index, function: { arguments: piece } }] });
  });

  if (options.streamError) {
    const { message, code } = options.streamError;
    frames.push(`data: ${JSON.stringify(errorBody(message, 'server_error', code ?? null))}\n\n`);
    return frames;
  }
  if (answer.finishReason !== null) {
    frames.push(`${head}{},"finish_reason":${JSON.stringify(answer.finishReason)}}]${usageNull}}\n\n`);
  }
  if (options.includeUsage) frames.push(`data: ${envelope}[],"usage":${JSON.stringify(chatUsage(answer))}}\n\n`);
  return frames;
}

/** The `chat.completion` JSON body of a non-streamed answer. */
export function completionBody(answer: Answer): string {
  const { turn, calls } = answer;
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: turn.text ?? (calls.length > 0 ? null : ''),
    refusal: null,
  };
  if (turn.thinking !== undefined) message.reasoning_content = turn.thinking;
  if (calls.length > 0) {
    message.tool_calls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
  }
  const choice: Record<string, unknown> = { index: 0, message, logprobs: null };
  if (answer.finishReason !== null) choice.finish_reason = answer.finishReason;
  return JSON.stringify({
    id: answer.id,
    object: 'chat.completion',
    created: answer.created,
    model: answer.model,
    choices: [choice],
    usage: chatUsage(answer),
  });
}

/** The Chat Completions wire, as the server drives it. */
export const chatWire: WireFormat = {
  api: 'openai-chat',
  unparsable: () =>
    errorBody('We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.', 'invalid_request_error'),
  scriptError: (message) => errorBody(message, 'server_error', 'script_error'),
  validate: (body) => validateChatRequest(body),
  model: (body) => body.model as string,
  streams: (body) => body.stream === true,
  view: (body) => chatView(body as ChatRequest),
  responseId: (n) => `chatcmpl-scripted-${n}`,
  callId: (n) => `call_${n}`,
  statusFault(fault, model) {
    const headers: Record<string, string> = {};
    if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
    if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs);
    return { status: fault.status, headers, body: fault.body ?? statusErrorBody(fault.status, model) };
  },
  failure: (fault) => ({ status: 500, body: errorBody(fault.message, 'server_error', fault.code ?? null) }),
  frames: (answer, body, options) =>
    streamFrames(answer, {
      chunkSize: options.chunkSize,
      includeUsage: (body as ChatRequest).stream_options?.include_usage === true,
      ...(options.streamError ? { streamError: options.streamError } : {}),
    }),
  ending: () => 'data: [DONE]\n\n',
  json: (answer) => completionBody(answer),
};
