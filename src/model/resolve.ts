/**
 * Turning a `provider/model` string into a {@link ModelRef}: which wire API, base URL, API
 * key, headers. Other servers are added through `config.providers` (no code needed).
 */
import { ReinError } from '../errors.js';
import { displayUrl } from './base-url.js';
import { compatProblem } from './providers/chat-compat.js';
import type { ChatCompat, ModelApi, ModelRef, ToolCalling } from './types.js';

/** An OpenAI-compatible server configured by the user. */
export interface ProviderConfig {
  /** Base URL as the API expects it (for Chat Completions, up to the version: `https://api.example.com/v1`). */
  baseUrl: string;
  /** The wire API the server speaks (default `openai-chat`). */
  api?: ModelApi;
  apiKey?: string;
  /** The environment variable holding the key; when set, the key is required. */
  apiKeyEnv?: string;
  headers?: Record<string, string>;
  /** Quirks of this Chat Completions server that rein does not detect (see {@link ChatCompat}). */
  compat?: Partial<ChatCompat>;
  /** How its models get their tools (`prompt` for servers without tool calling). */
  toolCalling?: ToolCalling;
}

/** Overrides and extra providers for {@link resolveModel}. */
export interface ResolveConfig {
  /** Overrides the provider's base URL (and makes its key optional: a custom server may need none). */
  baseUrl?: string;
  /** Overrides the key read from the environment. */
  apiKey?: string;
  headers?: Record<string, string>;
  /** Extra providers by prefix, or replacements of the built-in ones. */
  providers?: Record<string, ProviderConfig>;
  /** Quirks of the model's Chat Completions server, over what rein detects and a provider's `compat`. */
  compat?: Partial<ChatCompat>;
  /** How the model gets its tools: `native` or `prompt` (described in the system prompt). */
  toolCalling?: ToolCalling;
  /** No key is needed: requests never reach the provider (an agent with its own `streamFn`, such as `replayModel`). */
  keyOptional?: boolean;
}

interface KnownProvider {
  api: ModelApi;
  baseUrl: string;
  baseUrlEnv: string;
  apiKeyEnv?: string;
  /** The key is required when the default (hosted) base URL is used. */
  keyRequired: boolean;
}

const KNOWN: Record<string, KnownProvider> = {
  openai: {
    api: 'openai-chat',
    baseUrl: 'https://api.openai.com/v1',
    baseUrlEnv: 'OPENAI_BASE_URL',
    apiKeyEnv: 'OPENAI_API_KEY',
    keyRequired: true,
  },
  // The same OpenAI account and server, spoken to through the Responses API.
  'openai-responses': {
    api: 'openai-responses',
    baseUrl: 'https://api.openai.com/v1',
    baseUrlEnv: 'OPENAI_BASE_URL',
    apiKeyEnv: 'OPENAI_API_KEY',
    keyRequired: true,
  },
  // Anthropic's SDK takes a base without `/v1`; so do we (the adapter appends `/v1/messages`).
  anthropic: {
    api: 'anthropic-messages',
    baseUrl: 'https://api.anthropic.com',
    baseUrlEnv: 'ANTHROPIC_BASE_URL',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    keyRequired: true,
  },
  // A base without `/v1beta`, as in Google's SDK (the adapter appends `/v1beta/models/…`).
  gemini: {
    api: 'gemini',
    baseUrl: 'https://generativelanguage.googleapis.com',
    baseUrlEnv: 'GEMINI_BASE_URL',
    apiKeyEnv: 'GEMINI_API_KEY',
    keyRequired: true,
  },
  ollama: { api: 'openai-chat', baseUrl: 'http://127.0.0.1:11434/v1', baseUrlEnv: 'OLLAMA_BASE_URL', keyRequired: false },
  // vLLM runs without a key unless started with --api-key; read one when it is there.
  vllm: {
    api: 'openai-chat',
    baseUrl: 'http://127.0.0.1:8000/v1',
    baseUrlEnv: 'VLLM_BASE_URL',
    apiKeyEnv: 'VLLM_API_KEY',
    keyRequired: false,
  },
  lmstudio: { api: 'openai-chat', baseUrl: 'http://127.0.0.1:1234/v1', baseUrlEnv: 'LMSTUDIO_BASE_URL', keyRequired: false },
  openrouter: {
    api: 'openai-chat',
    baseUrl: 'https://openrouter.ai/api/v1',
    baseUrlEnv: 'OPENROUTER_BASE_URL',
    apiKeyEnv: 'OPENROUTER_API_KEY',
    keyRequired: true,
  },
};

/** The names of the built-in providers, in the order error messages list them. */
export const KNOWN_PROVIDERS: readonly string[] = Object.keys(KNOWN);

/**
 * The environment variable that holds `provider`'s API key: the built-in name for known
 * providers (`OPENAI_API_KEY`, `OPENROUTER_API_KEY`), else `<PROVIDER>_API_KEY`.
 */
export function apiKeyEnvName(provider: string): string {
  return KNOWN[provider]?.apiKeyEnv ?? `${provider.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY`;
}

/** The environment variable that sets a built-in provider's base URL; `undefined` for other providers. */
export function baseUrlEnvName(provider: string): string | undefined {
  return KNOWN[provider]?.baseUrlEnv;
}

/**
 * Resolves `provider/model` (or a bare model id, meaning `openai/<id>`) to a {@link ModelRef}.
 * Only the first slash separates the provider: `openrouter/anthropic/claude-sonnet-4.5` is
 * provider `openrouter`, model `anthropic/claude-sonnet-4.5`.
 *
 * @throws ReinError `config` (fatal) for an unknown provider, a missing required key or an
 *   invalid base URL; the message says how to fix it.
 * @example
 * resolveModel('ollama/llama3.1'); // { provider: 'ollama', id: 'llama3.1', baseUrl: 'http://127.0.0.1:11434/v1', … }
 */
export function resolveModel(spec: string, config: ResolveConfig = {}, env: Record<string, string | undefined> = process.env): ModelRef {
  const trimmed = spec.trim();
  const slash = trimmed.indexOf('/');
  const provider = slash === -1 ? 'openai' : trimmed.slice(0, slash);
  const id = slash === -1 ? trimmed : trimmed.slice(slash + 1);
  if (provider === '' || id === '') {
    throw new ReinError(
      'config',
      'fatal',
      `Invalid model "${spec}": write "provider/model" (e.g. "openai/gpt-4o", "ollama/llama3.1") or a bare OpenAI model id`,
    );
  }
  const custom = config.providers?.[provider];
  if (custom !== undefined) return fromCustom(provider, id, custom, config, env);
  const known = KNOWN[provider];
  if (known === undefined) {
    throw new ReinError(
      'config',
      'fatal',
      `Unknown model provider "${provider}" in "${spec}". Known providers: ${KNOWN_PROVIDERS.join(', ')}. ` +
        `To add an OpenAI-compatible server, configure it: providers: { "${provider}": { baseUrl: "https://host/v1", apiKeyEnv: "${apiKeyEnvName(provider)}" } }, ` +
        `or use "openai/<model>" with OPENAI_BASE_URL pointing at the server.`,
    );
  }
  const envBaseUrl = nonEmpty(env[known.baseUrlEnv]);
  const baseUrl = checkBaseUrl(
    config.baseUrl ?? envBaseUrl ?? known.baseUrl,
    config.baseUrl ? 'config.baseUrl' : envBaseUrl ? known.baseUrlEnv : provider,
  );
  const apiKey = nonEmpty(config.apiKey) ?? (known.apiKeyEnv ? nonEmpty(env[known.apiKeyEnv]) : undefined);
  if (apiKey === undefined && known.keyRequired && baseUrl === known.baseUrl && !config.keyOptional) {
    throw new ReinError(
      'config',
      'fatal',
      `${known.apiKeyEnv} is not set: export it, or point ${known.baseUrlEnv} at a server that needs no key`,
    );
  }
  return withQuirks(build(known.api, provider, id, baseUrl, apiKey, config.headers), undefined, config);
}

function fromCustom(
  provider: string,
  id: string,
  custom: ProviderConfig,
  config: ResolveConfig,
  env: Record<string, string | undefined>,
): ModelRef {
  const baseUrl = checkBaseUrl(config.baseUrl ?? custom.baseUrl, `providers.${provider}.baseUrl`);
  const apiKey = nonEmpty(config.apiKey) ?? nonEmpty(custom.apiKey) ?? (custom.apiKeyEnv ? nonEmpty(env[custom.apiKeyEnv]) : undefined);
  if (apiKey === undefined && custom.apiKeyEnv !== undefined && !config.keyOptional) {
    throw new ReinError(
      'config',
      'fatal',
      `${custom.apiKeyEnv} is not set: provider "${provider}" reads its API key from it. Export it, or drop apiKeyEnv if the server needs no key`,
    );
  }
  const headers = custom.headers || config.headers ? { ...custom.headers, ...config.headers } : undefined;
  return withQuirks(build(custom.api ?? 'openai-chat', provider, id, baseUrl, apiKey, headers), custom, config, `providers.${provider}`);
}

/** The declared quirks and tool calling of `model`: the provider's, then the call's own, checked. */
function withQuirks(model: ModelRef, custom: ProviderConfig | undefined, config: ResolveConfig, where = 'providers'): ModelRef {
  const compat =
    custom?.compat === undefined && config.compat === undefined
      ? undefined
      : { ...check(custom?.compat, `${where}.compat`), ...check(config.compat, 'compat') };
  if (compat !== undefined) model.compat = compat;
  const toolCalling = config.toolCalling ?? custom?.toolCalling;
  if (toolCalling !== undefined) {
    if (toolCalling !== 'native' && toolCalling !== 'prompt') {
      const from = config.toolCalling !== undefined ? 'toolCalling' : `${where}.toolCalling`;
      throw new ReinError('config', 'fatal', `${from} must be "native" or "prompt", not ${JSON.stringify(toolCalling)}`);
    }
    model.toolCalling = toolCalling;
  }
  return model;
}

function check(compat: Partial<ChatCompat> | undefined, where: string): Partial<ChatCompat> | undefined {
  if (compat === undefined) return undefined;
  const problem = compatProblem(compat, where);
  if (problem !== undefined) throw new ReinError('config', 'fatal', problem);
  return compat;
}

function build(
  api: ModelApi,
  provider: string,
  id: string,
  baseUrl: string,
  apiKey: string | undefined,
  headers: Record<string, string> | undefined,
): ModelRef {
  const model: ModelRef = { provider, id, api, baseUrl };
  if (apiKey !== undefined) model.apiKey = apiKey;
  if (headers !== undefined) model.headers = headers;
  return model;
}

/**
 * Validates a base URL and drops the trailing slashes of its path (the adapter appends its
 * API's path there, before the query). A user and password are accepted (gateways behind
 * Basic auth) and kept in the returned value, which the request needs; the error message
 * quotes the value without them.
 */
function checkBaseUrl(value: string, origin: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    // The value is not repeated as written: it may hold a password that failed to parse.
    const userinfo = value.includes('@') ? '; a user or password in it must be %-encoded (/ as %2F, @ as %40, : as %3A)' : '';
    throw new ReinError(
      'config',
      'fatal',
      `Invalid base URL "${displayUrl(value)}" (from ${origin}): expected an http(s) URL up to the API version, e.g. "http://127.0.0.1:11434/v1"${userinfo}`,
    );
  }
  // Only the path's slashes: a query (`?api-version=…`) or fragment is kept as written.
  const end = value.search(/[?#]/);
  return end === -1 ? value.replace(/\/+$/, '') : value.slice(0, end).replace(/\/+$/, '') + value.slice(end);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
