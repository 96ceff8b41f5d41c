/**
 * Renders scripted turns in the OpenAI Chat Completions wire format: SSE chunk frames and
 * `chat.completion` bodies, byte-for-byte in the shape of the recordings in
 * `shared/fixtures/openai-chat/`. Built as strings with one `JSON.stringify` per delta
 * because the benchmark runs the server at hundreds of requests per second.
 */
import type { ScriptTurn } from './script.js';

/** A tool call with its id and argument text decided. */
export interface ResolvedCall {
  id: string;
  name: string;
  arguments: string;
}

/** Everything needed to send one turn, decided once for both wire modes. */
export interface Answer {
  id: string;
  created: number;
  model: string;
  turn: ScriptTurn;
  calls: ResolvedCall[];
  /** `null` leaves `finish_reason` out entirely. */
  finishReason: string | null;
  usage: Record<string, unknown>;
}

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
      return errorBody(`The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found');
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

function estimateUsage(turn: ScriptTurn, calls: ResolvedCall[], promptChars: number): Record<string, unknown> {
  // About four characters per token: rough, but deterministic and proportional to size,
  // which is all budget and compaction tests need.
  const thinking = turn.thinking?.length ?? 0;
  let output = (turn.text?.length ?? 0) + thinking;
  for (const call of calls) output += call.name.length + call.arguments.length;
  const given = turn.usage ?? {};
  const prompt = given.prompt_tokens ?? Math.ceil(promptChars / 4);
  const completion = given.completion_tokens ?? Math.ceil(output / 4);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: given.total_tokens ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, ...given.prompt_tokens_details },
    completion_tokens_details: { reasoning_tokens: Math.ceil(thinking / 4), ...given.completion_tokens_details },
  };
}

/** Decides ids, argument text, finish reason and usage of a turn. */
export function resolveAnswer(
  turn: ScriptTurn,
  ids: { response: string; nextCallId: () => string },
  model: string,
  promptChars: number,
): Answer {
  const calls: ResolvedCall[] = (turn.toolCalls ?? []).map((call) => ({
    id: call.id ?? ids.nextCallId(),
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
  const finishReason = turn.finishReason === undefined ? (calls.length > 0 ? 'tool_calls' : 'stop') : turn.finishReason;
  return {
    id: ids.response,
    created: Math.floor(Date.now() / 1000),
    model,
    turn,
    calls,
    finishReason,
    usage: estimateUsage(turn, calls, promptChars),
  };
}

/** Splits text into pieces of `size` UTF-16 units without splitting a surrogate pair. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff && end < text.length) end++;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
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
  if (options.includeUsage) frames.push(`data: ${envelope}[],"usage":${JSON.stringify(answer.usage)}}\n\n`);
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
    usage: answer.usage,
  });
}
