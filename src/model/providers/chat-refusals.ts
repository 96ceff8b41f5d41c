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
 */
import { providerErrorOf, type ProviderError } from '../http-errors.js';

const withoutStreamOptions = new Set<string>();
const withMaxCompletionTokens = new Set<string>();
const withoutReasoningEffort = new Set<string>();

const modelKey = (baseUrl: string, modelId: string): string => `${baseUrl}\n${modelId}`;

/** Whether requests to `baseUrl` carry `stream_options`. */
export function sendsStreamOptions(baseUrl: string): boolean {
  return withoutStreamOptions.size === 0 || !withoutStreamOptions.has(baseUrl);
}

/** Whether the output limit goes to `baseUrl` as `max_completion_tokens` (api.openai.com, or after a refusal of `max_tokens`). */
export function usesMaxCompletionTokens(baseUrl: string, modelId: string): boolean {
  return /^https:\/\/api\.openai\.com(?:\/|$)/.test(baseUrl) || (withMaxCompletionTokens.size > 0 && withMaxCompletionTokens.has(modelKey(baseUrl, modelId)));
}

/** Whether `reasoning_effort` goes to this model (until it refused it). */
export function sendsReasoningEffort(baseUrl: string, modelId: string): boolean {
  return withoutReasoningEffort.size === 0 || !withoutReasoningEffort.has(modelKey(baseUrl, modelId));
}

/** What a request carried that a server may refuse. */
export interface RefusableParameters {
  streamOptions: boolean;
  maxTokens: boolean;
  reasoningEffort: boolean;
}

/**
 * Whether a failed response refuses one of the parameters `sent` carried; if so, it is
 * recorded, and a request built now takes the form the server accepts. Only the error's
 * own words count (what `providerErrorOf` reads: its message, `param` and `code`, or a
 * 422's `detail` entries), never the rest of the body: servers built on FastAPI echo the whole request in a 422, and vLLM's
 * "'max_tokens' or 'max_completion_tokens' is too large" is about the context, not the name.
 */
export function recordRefusal(baseUrl: string, modelId: string, sent: RefusableParameters, status: number, body: string): boolean {
  if (status !== 400 && status !== 422) return false;
  const said: ProviderError = providerErrorOf(body) ?? { message: body.slice(0, 2000) };
  if (sent.streamOptions && refuses(said, 'stream_options')) {
    withoutStreamOptions.add(baseUrl);
    return true;
  }
  if (sent.maxTokens && refuses(said, 'max_tokens') && (said.message.includes('max_completion_tokens') || said.code === 'unsupported_parameter')) {
    withMaxCompletionTokens.add(modelKey(baseUrl, modelId));
    return true;
  }
  if (sent.reasoningEffort && refuses(said, 'reasoning_effort')) {
    withoutReasoningEffort.add(modelKey(baseUrl, modelId));
    return true;
  }
  return false;
}

/** Wording of a refused parameter (OpenAI, Azure, gateways, pydantic). */
const REFUSAL = /unknown|unrecogni[sz]ed|unsupported|not supported|not permitted|not allowed|extra (?:inputs|fields)|unexpected/i;

/** Whether what the server said refuses the parameter `name`. */
function refuses(statement: ProviderError, name: string): boolean {
  if (statement.param === name) return REFUSAL.test(statement.message) || /unknown|unsupported/.test(statement.code ?? '');
  return statement.message.includes(name) && REFUSAL.test(statement.message) && !/too (?:large|long|big)|exceed/i.test(statement.message);
}

/** Forgets every refusal (tests). */
export function forgetRefusals(): void {
  withoutStreamOptions.clear();
  withMaxCompletionTokens.clear();
  withoutReasoningEffort.clear();
}
