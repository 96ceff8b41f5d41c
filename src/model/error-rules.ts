/**
 * How a provider's refusal is classified, as an ordered table of rules: the first rule
 * whose `when` holds gives the error's `code`, its `kind` (whether a retry can help) and
 * the advice its message gives. The order is part of the meaning: a 413 is never retried
 * whatever code its body gives, a context overflow is told apart before the generic 400,
 * an unknown model before a wrong path. The last rule always holds.
 */
import type { ErrorCode, ErrorKind } from '../errors.js';
import type { ProviderError } from './provider-error-body.js';

/** Header values as Node gives them (http-errors.ts's `HeaderBag`). */
type HeaderBag = Record<string, string | string[] | undefined>;

/** Which request failed (http-errors.ts's `ErrorContext`). */
interface RequestContext {
  provider: string;
  model: string;
  url: string;
  urlCredentialsNotSent?: boolean;
}

/** What a rule looks at: the provider's words, the status, and where the request went. */
export interface Refusal {
  info: ProviderError;
  message: string;
  /** The provider's error code and type, `''` when it gave none. */
  code: string;
  type: string;
  status: number | undefined;
  headers: HeaderBag;
  ctx: RequestContext;
  /** Where the status came from: `HTTP 400`, `in the stream`, `in the stream, status 429`. */
  statusText: string;
  /** `: <the provider's message>`, to follow rein's first clause. */
  said: string;
  /** `provider (url)`. */
  at: string;
}

/** One row of the table. */
export interface ErrorRule {
  /** What the rule is about, for readers and tests. */
  name: string;
  when: (r: Refusal) => boolean;
  code: ErrorCode;
  kind: ErrorKind;
  /** The error's message. */
  advice: (r: Refusal) => string;
}

/** What the advice of some rules needs from the module that uses the table (no import cycle). */
export interface RuleHelpers {
  apiKeyEnvName: (provider: string) => string;
  redirectTarget: (location: string | undefined, url: string) => string | undefined;
  header: (headers: HeaderBag, name: string) => string | undefined;
  apiPath: (url: string) => string;
}

// OpenAI `context_length_exceeded`, DeepSeek (same message, other code), Anthropic
// "prompt is too long", and the usual wording of other servers: vLLM; llama.cpp ("request
// (4390 tokens) exceeds the available context size", and "Context size has been exceeded."
// with HTTP 500); TGI ("`inputs` tokens + `max_new_tokens` must be <= 4096", "`inputs` must
// have less than 4096 tokens").
const CONTEXT_LENGTH =
  /context[_ ]length|maximum context|context window|prompt is too long|too many tokens in (?:the )?prompt|exceeds? the (?:available )?context size|context size (?:has been |was )?exceeded|`?inputs`? tokens \+ `?max_new_tokens`? must be <=|`?inputs`? must have less than \d+ tokens/i;
/**
 * An unknown model refused with 400 instead of 404: OpenRouter "x is not a valid model ID",
 * DeepSeek "Model Not Exist", and other servers' wordings. Each names the model as what is
 * missing, so "model x does not support tools" is not one.
 */
const UNKNOWN_MODEL =
  /is not a valid model|\bmodel(?: \S+)? (?:does not|doesn't|not) exists?\b|\b(?:unknown|invalid) model\b(?! (?:output|response|request|parameters?))|\bno such model\b/i;
/** A 413 whose body counts the request in tokens (a token limit), not in bytes (a body size limit). */
const TOKENS = /\btokens?\b|\bTPM\b/i;
/** OpenRouter's 402 when the credit left cannot pay for the output budget asked for. */
const FEWER_TOKENS = /fewer max_tokens|can only afford/i;
/** Azure OpenAI's wording when its filter refuses a prompt (with code content_filter). */
const CONTENT_POLICY = /content management policy/i;
const OVERLOADED = /overloaded/i;
/** A URL or an absolute path a message quotes (`POST /v1beta/models/x`): not the message's own words. */
const URL_OR_PATH = /\b[a-z][a-z0-9+.-]*:\/\/\S+|(?<![\w.])\/[\w.~%:-]+(?:\/[\w.~%:-]*)+/gi;
/** A 404 about the path asked for (a gateway's "Invalid URL", "no route"), not about the model. */
const WRONG_PATH = /invalid url|no route|not a valid (?:url|path|endpoint)|unknown (?:url|path|endpoint|route)/i;
/**
 * A required parameter the request did not carry: pydantic's "max_tokens: Field required",
 * "missing required parameter: 'x'".
 */
const MISSING_FIELD =
  /(?:^|[\s:'"`(])([A-Za-z_][\w.]*)["'`]?:\s*field required|missing required (?:parameter|field|argument)s?:?\s*["'`]?([A-Za-z_][\w.]*)/i;

const contextOverflow = (r: Refusal): boolean =>
  r.code === 'context_length_exceeded' || r.type === 'exceed_context_size_error' || CONTEXT_LENGTH.test(r.message);
const unknownModel = (r: Refusal): boolean =>
  r.status === 404 || r.code === 'model_not_found' || (r.status === 400 && UNKNOWN_MODEL.test(r.message));

/** The table, in the order it is read. */
export function errorRules(h: RuleHelpers): readonly ErrorRule[] {
  return [
    {
      // Payload Too Large is never retried, whatever code the body gives (Groq's says
      // rate_limit_exceeded): the same request is as large the next time. Counted in tokens
      // (Groq: "Request too large for model … on tokens per minute (TPM): Limit 12000,
      // Requested 19764"): context_length, so that the loop compacts the history and asks
      // again once, the one thing that makes the request smaller.
      name: 'too large, in tokens',
      when: (r) => r.status === 413 && (contextOverflow(r) || r.type === 'tokens' || TOKENS.test(r.message)),
      code: 'context_length',
      kind: 'fatal',
      advice: (r) =>
        `${r.at} refused the request as too large for ${r.ctx.model} or for the token limit of this account (${r.statusText})${r.said}. Shorten the conversation (compact the history, trim long tool results) or lower --max-output-tokens (modelOptions.maxTokens): the output budget a request asks for counts towards the tokens it requests`,
    },
    {
      // Counted in bytes: the body size limit of the server or of a reverse proxy before it.
      name: 'too large, in bytes',
      when: (r) => r.status === 413,
      code: 'bad_request',
      kind: 'fatal',
      advice: (r) =>
        `${r.at} refused the request as too large (${r.statusText})${r.said}. The server, or a reverse proxy in front of it, limits the size of a request body (nginx: client_max_body_size); shorten the conversation (long tool results, images) or raise that limit`,
    },
    {
      // 500: llama.cpp's "Context size has been exceeded." (retrying would send the same request).
      name: 'context window exceeded',
      when: (r) => (r.status === undefined || r.status === 400 || r.status === 422 || r.status === 500) && contextOverflow(r),
      code: 'context_length',
      kind: 'fatal',
      advice: (r) =>
        `The request does not fit the context window of ${r.ctx.model} (${r.statusText})${r.said}. Shorten the conversation (compact the history, trim long tool results) or lower max tokens`,
    },
    {
      // 402 Payment Required: OpenRouter "Insufficient credits", DeepSeek "Insufficient Balance".
      // OpenRouter also answers 402 when the output budget asked for costs more than is left.
      name: 'credit used up',
      when: (r) => r.code === 'insufficient_quota' || r.status === 402,
      code: 'rate_limited',
      kind: 'fatal',
      advice: (r) =>
        `${r.at} reports the credit or quota of this API key is used up (${r.statusText})${r.said}. Add credit or check the plan of the key${FEWER_TOKENS.test(r.message) ? ', or ask for fewer output tokens (--max-output-tokens)' : ''}; retrying will not help`,
    },
    {
      // Azure OpenAI: 400 with code content_filter (innererror ResponsibleAIPolicyViolation).
      name: 'content filter',
      when: (r) => r.code === 'content_filter' || CONTENT_POLICY.test(r.message),
      code: 'content_filter',
      kind: 'fatal',
      advice: (r) =>
        `The content filter of ${r.at} refused the prompt (${r.statusText})${r.said}. Rephrase the task (or leave out the file or tool output that set it off); sending the same request again will not help`,
    },
    {
      name: 'overloaded',
      when: (r) =>
        r.status === 529 || r.type === 'overloaded_error' || ((r.status === undefined || r.status >= 500) && OVERLOADED.test(r.message)),
      code: 'overloaded',
      kind: 'transient',
      advice: (r) => `${r.at} is overloaded (${r.statusText})${r.said}. This is on the provider's side; retry later`,
    },
    {
      // Groq: the model wrote a tool call the server could not parse. Another sample usually
      // gets it right, so this is retried rather than stopping the run.
      name: 'tool call the server could not parse',
      when: (r) => r.code === 'tool_use_failed',
      code: 'invalid_response',
      kind: 'transient',
      advice: (r) =>
        `The model ${r.ctx.model} produced a tool call ${r.ctx.provider} could not parse (${r.statusText})${r.said}. It is retried; if it keeps failing, simplify the tool schemas or lower the temperature`,
    },
    {
      // Following it would send the request and its API key to an address nobody configured
      // (and turn a POST into a GET on 301/302/303): say where the server points instead.
      name: 'redirect',
      when: (r) => r.status !== undefined && r.status >= 300 && r.status < 400,
      code: 'config',
      kind: 'fatal',
      advice: (r) => {
        const target = h.redirectTarget(h.header(r.headers, 'location'), r.ctx.url);
        const where = target === undefined ? 'without saying where (no Location header)' : `to ${target}`;
        return `${r.at} redirected the request ${where} (${r.statusText}). rein does not follow redirects of model requests; set the base URL to the address the server uses now (an http:// URL that moved to https://, a path that gained or lost a trailing slash or /v1)`;
      },
    },
    {
      name: 'proxy wants credentials',
      when: (r) => r.status === 407,
      code: 'auth',
      kind: 'fatal',
      advice: (r) =>
        `The proxy between rein and ${r.at} wants credentials (${r.statusText})${r.said}. Put them in the proxy URL: HTTP_PROXY=http://user:password@host:port`,
    },
    {
      name: 'credentials refused',
      when: (r) => r.status === 401 || r.status === 403 || r.code === 'invalid_api_key' || r.type === 'authentication_error',
      code: 'auth',
      kind: 'fatal',
      advice: (r) => {
        const env = h.apiKeyEnvName(r.ctx.provider);
        const unsent = r.ctx.urlCredentialsNotSent
          ? `. The user and password in the base URL were not sent: the API key takes the Authorization header. To log in with them instead, leave ${env} (and the provider's apiKey) unset`
          : '';
        return `${r.at} refused the credentials (${r.statusText})${r.said}. Set ${env} (or the provider's apiKey) to a valid key with access to ${r.ctx.model}${unsent}`;
      },
    },
    {
      // "model" in the message's own words, not in a path it echoes (a gateway's "Invalid URL
      // (POST /v1beta/models/x:streamGenerateContent)" is a wrong base URL, not a wrong model).
      name: 'unknown model',
      when: (r) =>
        unknownModel(r) &&
        (r.code === 'model_not_found' || (/model/i.test(r.message.replace(URL_OR_PATH, ' ')) && !WRONG_PATH.test(r.message))),
      code: 'model_not_found',
      kind: 'fatal',
      advice: (r) =>
        `Model "${r.ctx.model}" is not available at ${r.at} (${r.statusText})${r.said}. Check the model id ("${r.ctx.provider}/${r.ctx.model}") and that your key has access to it`,
    },
    {
      name: 'wrong path',
      when: unknownModel,
      code: 'not_found',
      kind: 'fatal',
      advice: (r) =>
        `${r.ctx.url} was not found (${r.statusText})${r.said}. Check the base URL: the API's path (${h.apiPath(r.ctx.url)}) must exist under it`,
    },
    {
      name: 'rate limited',
      when: (r) => r.status === 429 || r.code === 'rate_limit_exceeded' || r.type === 'rate_limit_error' || r.type === 'tokens',
      code: 'rate_limited',
      kind: 'transient',
      advice: (r) => `Rate limited by ${r.at} (${r.statusText})${r.said}. Lower the concurrency or raise the rate limit if it persists`,
    },
    {
      name: 'request timeout',
      when: (r) => r.status === 408,
      code: 'timeout',
      kind: 'transient',
      advice: (r) => `${r.at} timed out waiting for the request (${r.statusText})${r.said}`,
    },
    {
      // A validation list (FastAPI) refuses the request's shape: no retry makes it valid.
      name: 'server failed',
      when: (r) =>
        r.status === 409 || (r.status === undefined && r.info.validation !== true) || (r.status !== undefined && r.status >= 500),
      code: 'server_error',
      kind: 'transient',
      advice: (r) => `${r.at} failed to answer (${r.statusText})${r.said}. This is on the provider's side; retry later`,
    },
    {
      // pydantic / Anthropic "max_tokens: Field required": something rein did not send, not something to remove.
      name: 'required parameter missing',
      when: (r) => MISSING_FIELD.test(r.message),
      code: 'bad_request',
      kind: 'fatal',
      advice: (r) => {
        const missing = MISSING_FIELD.exec(r.message);
        const field = missing?.[1] ?? missing?.[2] ?? r.info.param;
        const how =
          field !== undefined && /max_(?:completion_|output_)?tokens/.test(field)
            ? ': set the output limit (--max-output-tokens; modelOptions.maxTokens)'
            : '';
        return `${r.at} rejected the request for ${r.ctx.model} (${r.statusText})${r.said}. The server requires ${field === undefined ? 'a parameter' : `"${field}"`}, which the request did not carry${how}`;
      },
    },
    {
      name: 'request refused',
      when: () => true,
      code: 'bad_request',
      kind: 'fatal',
      advice: (r) =>
        `${r.at} rejected the request for ${r.ctx.model} (${r.statusText})${r.said}. Fix the request${r.info.param ? ` (parameter "${r.info.param}")` : ''}: remove the option or message kind this model or server does not support`,
    },
  ];
}
