/**
 * Parameters a Chat Completions server refused, so that rein asks again in the form it
 * takes and sends that form from then on (for the rest of the process). Two refusals are
 * common enough among servers that speak the API to be worth it:
 *
 * - `stream_options: { include_usage: true }`, how a stream reports its token usage: Azure
 *   OpenAI before api-version 2024-09-01 answers 400 "Unrecognized request argument
 *   supplied: stream_options", and gateways that check parameters strictly answer 400
 *   "Unknown parameter: 'stream_options'" (or 422). It is left out for that base URL; the
 *   server's usage is then known only when it sends it unasked.
 * - `max_tokens`, which reasoning models behind OpenAI-compatible endpoints other than
 *   api.openai.com (Azure OpenAI, proxies) refuse: 400 "Unsupported parameter: 'max_tokens'
 *   is not supported with this model. Use 'max_completion_tokens' instead." The limit is
 *   sent as `max_completion_tokens` for that base URL and model.
 * - `reasoning_effort`, how `thinking` goes out, which models without reasoning refuse:
 *   400 "Unrecognized request argument supplied: reasoning_effort" (Azure), "reasoning_effort
 *   is not supported with this model" (OpenAI's gpt-4o). It is left out for that base URL
 *   and model: the level is advice about effort, and the model cannot take it.
 * - `tools`, which servers without tool calling for a model refuse: Ollama 400 "llama3
 *   does not support tools" (ollama/ollama#5793, #6027), vLLM started without
 *   `--enable-auto-tool-choice` 400 "\"auto\" tool choice requires --enable-auto-tool-choice
 *   and --tool-call-parser to be set" (vllm-project/vllm#9986), llama.cpp's server without
 *   `--jinja` "tools param requires --jinja flag". That model at that base URL gets its
 *   tools in the prompt from then on (`prompted-tools.ts`).
 *
 * What was refused is kept in the one cache of `learned-quirks.ts`, which the compatibility
 * record (`chat-compat.ts`) reads.
 */
import { providerErrorOf, type ProviderError } from '../http-errors.js';
import { forgetLearnedQuirks, learnQuirk } from '../learned-quirks.js';

/** What a request carried that a server may refuse. */
export interface RefusableParameters {
  streamOptions: boolean;
  maxTokens: boolean;
  reasoningEffort: boolean;
  /** The request carried `tools` (natively). */
  tools?: boolean;
}

/** What {@link recordRefusal} learned: the parameter refused, or `undefined` when the failure refused none. */
export type Refused = 'stream_options' | 'max_tokens' | 'reasoning_effort' | 'tools';

/**
 * Whether a failed response refuses one of the parameters `sent` carried; if so, it is
 * recorded, and a request built now takes the form the server accepts. Only the error's
 * own words count (what `providerErrorOf` reads: its message, `param` and `code`, or a
 * 422's `detail` entries), never the rest of the body: servers built on FastAPI echo the whole request in a 422, and vLLM's
 * "'max_tokens' or 'max_completion_tokens' is too large" is about the context, not the name.
 */
export function recordRefusal(baseUrl: string, modelId: string, sent: RefusableParameters, status: number, body: string): boolean {
  return refusalOf(baseUrl, modelId, sent, status, body) !== undefined;
}

/** {@link recordRefusal}, saying which parameter was refused. */
export function refusalOf(baseUrl: string, modelId: string, sent: RefusableParameters, status: number, body: string): Refused | undefined {
  if (status !== 400 && status !== 422 && !(sent.tools === true && status === 500)) return undefined;
  const said: ProviderError = providerErrorOf(body) ?? { message: body.slice(0, 2000) };
  if (sent.tools === true && TOOLS_REFUSED.test(said.message)) {
    learnQuirk(baseUrl, modelId, { toolCalling: 'prompt' });
    return 'tools';
  }
  if (status === 500) return undefined;
  if (sent.streamOptions && refuses(said, 'stream_options')) {
    // The whole server: it is the API version or the gateway that does not know the parameter.
    learnQuirk(baseUrl, '', { streamUsage: false });
    return 'stream_options';
  }
  if (
    sent.maxTokens &&
    refuses(said, 'max_tokens') &&
    (said.message.includes('max_completion_tokens') || said.code === 'unsupported_parameter')
  ) {
    learnQuirk(baseUrl, modelId, { maxTokensField: 'max_completion_tokens' });
    return 'max_tokens';
  }
  if (sent.reasoningEffort && refuses(said, 'reasoning_effort')) {
    learnQuirk(baseUrl, modelId, { reasoningEffort: false });
    return 'reasoning_effort';
  }
  return undefined;
}

/**
 * A server's refusal of tool calling for the model (Ollama, vLLM, llama.cpp, and the usual
 * wording "tools are not supported", "tool calling is not supported with this model").
 */
const TOOLS_REFUSED =
  /does not support tools|\bauto"? tool choice requires --enable-auto-tool-choice|tools param requires --jinja|\b(?:tools?|tool[_ ]calling|tool[_ ]use|function[_ ]calling)\b`? (?:are|is) not supported\b/i;

/** Wording of a refused parameter (OpenAI, Azure, gateways, pydantic). */
const REFUSAL = /unknown|unrecogni[sz]ed|unsupported|not supported|not permitted|not allowed|extra (?:inputs|fields)|unexpected/i;

/** Whether what the server said refuses the parameter `name`. */
function refuses(statement: ProviderError, name: string): boolean {
  if (statement.param === name) return REFUSAL.test(statement.message) || /unknown|unsupported/.test(statement.code ?? '');
  return statement.message.includes(name) && REFUSAL.test(statement.message) && !/too (?:large|long|big)|exceed/i.test(statement.message);
}

/** Forgets every refusal (tests). */
export function forgetRefusals(): void {
  forgetLearnedQuirks();
}
