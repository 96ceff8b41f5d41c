/**
 * What the scripted model answers: the script, its turns and faults, the request shape it
 * sees, and small builders that make scripts read like the conversation they fake.
 */
import type { ModelApi } from '../model/types.js';

/** A message of a Chat Completions request, loosely typed: the server validates it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  name?: string;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  [key: string]: unknown;
}

/** A tool declared in a Chat Completions request. */
export interface ChatTool {
  type: string;
  function: { name: string; description?: string; parameters?: Record<string, unknown>; [key: string]: unknown };
}

/** The parsed body of `POST /v1/chat/completions`, loosely typed (unknown fields are kept). */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean; [key: string]: unknown };
  [key: string]: unknown;
}

/** One tool call of a scripted turn. */
export interface ScriptToolCall {
  name: string;
  /** An object is sent as JSON; a string is sent verbatim, so a test can send malformed JSON. */
  arguments: Record<string, unknown> | string;
  /** Defaults to `call_<n>`, unique per server. */
  id?: string;
}

/**
 * Token counts of a turn, in Chat Completions' snake_case and meaning (the prompt includes
 * cached tokens, the completion includes reasoning). Each wire reports them its own way:
 * Anthropic's `input_tokens` leave out cache reads, Gemini's `candidatesTokenCount` leaves
 * out thoughts. Missing counts are estimated.
 */
export interface ScriptUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  /** Defaults to prompt + completion. */
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  completion_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown };
}

/**
 * Something going wrong on the wire, as real providers do. Each wire answers in its own
 * shape (see the `wire-*.ts` files).
 *
 * - `status`: an HTTP error before any body. `retryAfter` (seconds) and `retryAfterMs` become
 *   the `retry-after` / `retry-after-ms` headers; Gemini sends no such header but a
 *   `google.rpc.RetryInfo` detail with `retryDelay` in the body. `body` replaces the wire's
 *   default error body; a string body is sent verbatim as `text/plain` (proxies do that).
 * - `cut`: stream `afterChunks` SSE events, then drop the connection (no terminating event).
 *   Without streaming the connection is dropped before any response.
 * - `slow`: wait `tokenDelayMs` between events (once before the body without streaming).
 * - `error_in_stream`: HTTP 200, the turn's content, then the wire's in-stream error (Chat:
 *   a `data: {"error":{…}}` frame; Anthropic: `event: error`; Responses: `error` then
 *   `response.failed`; Gemini: a `data: {"error":{…}}` chunk) and the end of the body.
 *   `code` is the wire's error code or type (`server_error`, `overloaded_error`, `UNAVAILABLE`).
 *   Without streaming it is an HTTP 500 with that error.
 */
export type Fault =
  | { type: 'status'; status: number; retryAfter?: number; retryAfterMs?: number; body?: unknown }
  | { type: 'cut'; afterChunks: number }
  | { type: 'slow'; tokenDelayMs: number }
  | { type: 'error_in_stream'; message: string; code?: string };

/** One answer of the scripted model. */
export interface ScriptTurn {
  text?: string;
  /**
   * The model's reasoning, in each wire's form: Chat `delta.reasoning_content` (the DeepSeek /
   * vLLM / Ollama convention), an Anthropic `thinking` block with a stable fake signature, a
   * Responses `reasoning` item with a summary, Gemini `thought: true` parts.
   */
  thinking?: string;
  toolCalls?: ScriptToolCall[];
  /**
   * Why the model stopped, in Chat Completions' words (`stop`, `length`, `tool_calls`,
   * `content_filter`), translated for the other wires (Anthropic `end_turn` / `max_tokens` /
   * `tool_use` / `refusal`, Gemini `STOP` / `MAX_TOKENS` / `SAFETY`, a Responses `incomplete`
   * status); any other string is sent verbatim. Defaults to `tool_calls` when there are tool
   * calls, else `stop`. `null` omits the field (some servers do).
   */
  finishReason?: string | null;
  usage?: ScriptUsage;
  fault?: Fault;
  /** Wait this long before the response starts. */
  delayMs?: number;
}

/** What a script function learns about the request besides its content. */
export interface ScriptInfo {
  /** 0-based count of valid requests (of any wire) before this one. */
  index: number;
}

/** A tool call of an assistant message in the history the model was sent. */
export type SeenToolCall = {
  /** The call's id; Gemini sends none unless the client set one, and then the name stands in. */
  id: string;
  name: string;
  /** The arguments as JSON text (objects of wires that send objects are serialized). */
  arguments: string;
};

/**
 * One message of the history, the same for every wire. System prompts are not messages
 * (see {@link ScriptRequest.system}); text parts are joined, images left out. A user turn
 * that carries tool results (Anthropic `tool_result` blocks, Gemini `functionResponse`
 * parts) becomes one `tool` message per result, then a `user` message for its text.
 *
 * Type aliases, not interfaces, so that a {@link ScriptRequest} stays assignable to
 * {@link ChatRequest} and script functions written for Chat Completions keep compiling.
 */
export type ScriptMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; thinking?: string; toolCalls: SeenToolCall[] }
  | {
      role: 'tool';
      /** The id of the call it answers (Gemini: the response's id, else the tool name). */
      toolCallId: string;
      /** The tool's name, looked up from the call when the wire does not repeat it. */
      name: string;
      content: string;
      isError: boolean;
    };

/**
 * A request as a script function sees it: the same provider-neutral view whichever wire it
 * came through, so one script drives every API. `body` is the request as sent.
 */
export type ScriptRequest = {
  /** The wire it came through. */
  api: ModelApi;
  /** The model id the request names (Gemini: from the URL). */
  model: string;
  /** System prompt(s) and developer instructions, joined by blank lines. */
  system?: string;
  messages: ScriptMessage[];
  /** Names of the tools offered, in order. */
  toolNames: string[];
  stream: boolean;
  /** The parsed JSON body, as the wire sent it. */
  body: Record<string, unknown>;
};

/** A function that answers each request (it may look at the messages and tools it was sent). */
export type ScriptFunction = (request: ScriptRequest, info: ScriptInfo) => ScriptTurn | Promise<ScriptTurn>;

/**
 * The scripted model's behaviour: a list (each valid request takes the next turn) or a
 * function of the request. Requests rejected with HTTP 400 take no turn.
 */
export type Script = ScriptTurn[] | ScriptFunction;

/** Thrown when the script has no answer; the server turns it into an HTTP 500. */
export class ScriptError extends Error {
  override readonly name = 'ScriptError';
}

/**
 * The turn that answers request number `index`. `request` is called only for a function
 * script, so a list script costs no normalization. Throws {@link ScriptError} when there is none.
 */
export async function takeTurn(script: Script, request: () => ScriptRequest, index: number): Promise<ScriptTurn> {
  if (Array.isArray(script)) {
    const turn = script[index];
    if (turn === undefined) throw new ScriptError(`scripted model: script exhausted after ${script.length} turns`);
    return turn;
  }
  let turn: ScriptTurn | undefined;
  try {
    turn = await script(request(), { index });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ScriptError(`scripted model: script function threw on request ${index}: ${message}`);
  }
  // A function that forgets to return is a test bug; say so instead of answering emptily.
  if (turn === null || typeof turn !== 'object') {
    throw new ScriptError(`scripted model: script function returned no turn for request ${index}`);
  }
  return turn;
}

/**
 * A turn that answers with text.
 *
 * @example
 * const script = [text('Hello!')];
 */
export function text(content: string, extra: Omit<ScriptTurn, 'text'> = {}): ScriptTurn {
  return { ...extra, text: content };
}

/**
 * A turn with one tool call.
 *
 * @example
 * const script = [toolCall('read_file', { path: 'a.txt' }), text('It says hi.')];
 */
export function toolCall(name: string, args: Record<string, unknown> | string = {}, id?: string): ScriptTurn {
  return { toolCalls: [id === undefined ? { name, arguments: args } : { name, arguments: args, id }] };
}

/**
 * A turn with several (parallel) tool calls.
 *
 * @example
 * toolCalls({ name: 'a', arguments: {} }, { name: 'b', arguments: '{"broken' })
 */
export function toolCalls(...calls: ScriptToolCall[]): ScriptTurn {
  return { toolCalls: calls };
}

/**
 * A turn that fails on the wire.
 *
 * @example
 * const script = [fault({ type: 'status', status: 429, retryAfter: 1 }), text('ok')];
 */
export function fault(what: Fault, extra: Omit<ScriptTurn, 'fault'> = {}): ScriptTurn {
  return { ...extra, fault: what };
}
