/**
 * What the scripted model answers: the script, its turns and faults, the request shape it
 * sees, and small builders that make scripts read like the conversation they fake.
 */

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

/** Token counts of a turn, in the wire's snake_case. Missing counts are estimated. */
export interface ScriptUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  /** Defaults to prompt + completion. */
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  completion_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown };
}

/**
 * Something going wrong on the wire, as real providers do.
 *
 * - `status`: an HTTP error before any body. `retryAfter` (seconds) and `retryAfterMs` become
 *   the `retry-after` / `retry-after-ms` headers. `body` replaces the default OpenAI-shaped
 *   error body; a string body is sent verbatim as `text/plain` (proxies do that).
 * - `cut`: stream `afterChunks` chunks, then drop the connection (no `[DONE]`). Without
 *   streaming the connection is dropped before any response.
 * - `slow`: wait `tokenDelayMs` between chunks (once before the body without streaming).
 * - `error_in_stream`: HTTP 200, the turn's content, then a `data: {"error":{…}}` frame and the
 *   end of the body. Without streaming it is an HTTP 500 with that error.
 */
export type Fault =
  | { type: 'status'; status: number; retryAfter?: number; retryAfterMs?: number; body?: unknown }
  | { type: 'cut'; afterChunks: number }
  | { type: 'slow'; tokenDelayMs: number }
  | { type: 'error_in_stream'; message: string; code?: string };

/** One answer of the scripted model. */
export interface ScriptTurn {
  text?: string;
  /** Sent as `delta.reasoning_content` (the DeepSeek / vLLM / Ollama convention). */
  thinking?: string;
  toolCalls?: ScriptToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. `null` omits the field (some servers do). */
  finishReason?: string | null;
  usage?: ScriptUsage;
  fault?: Fault;
  /** Wait this long before the response starts. */
  delayMs?: number;
}

/** What a script function learns about the request besides its body. */
export interface ScriptInfo {
  /** 0-based count of valid chat requests before this one. */
  index: number;
}

/** A function that answers each request (it may look at the messages and tools it was sent). */
export type ScriptFunction = (request: ChatRequest, info: ScriptInfo) => ScriptTurn | Promise<ScriptTurn>;

/**
 * The scripted model's behaviour: a list (each valid request takes the next turn) or a
 * function of the request. Requests rejected with HTTP 400 take no turn.
 */
export type Script = ScriptTurn[] | ScriptFunction;

/** Thrown when the script has no answer; the server turns it into an HTTP 500. */
export class ScriptError extends Error {
  override readonly name = 'ScriptError';
}

/** The turn that answers request number `index`. Throws {@link ScriptError} when there is none. */
export async function takeTurn(script: Script, request: ChatRequest, index: number): Promise<ScriptTurn> {
  if (Array.isArray(script)) {
    const turn = script[index];
    if (turn === undefined) throw new ScriptError(`scripted model: script exhausted after ${script.length} turns`);
    return turn;
  }
  let turn: ScriptTurn | undefined;
  try {
    turn = await script(request, { index });
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
