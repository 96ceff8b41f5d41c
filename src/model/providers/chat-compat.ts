/**
 * The compatibility record of a Chat Completions server ({@link ChatCompat}): what rein
 * sends it and how it reads its answers. Three layers, the later winning:
 *
 * 1. detected from the provider and base URL ({@link detectChatCompat});
 * 2. declared per model (`ModelRef.compat`: `modelConfig.compat`, `providers.x.compat`);
 * 3. learned from the server's refusals while the process runs (`learned-quirks.ts`): a
 *    server that refused a parameter is not sent it again, whatever was declared, since
 *    sending it would only be refused again.
 */
import { learnedGeneration, learnedQuirks } from '../learned-quirks.js';
import type { ChatCompat, ModelRef } from '../types.js';

/** What an OpenAI-compatible server is taken to take when nothing else is known. */
const GENERIC: Readonly<ChatCompat> = Object.freeze({
  streamUsage: true,
  maxTokensField: 'max_tokens',
  reasoningEffort: true,
  thinkingFormat: 'think-tags',
  toolCallIds: 'any',
});

/**
 * api.openai.com's reasoning models (o-series, gpt-5) reject `max_tokens` and require
 * `max_completion_tokens`, which all its models take. Ollama, vLLM, LM Studio, OpenRouter,
 * Groq and DeepSeek read `max_tokens`, and so do most proxies.
 */
const OPENAI: Readonly<ChatCompat> = Object.freeze({ ...GENERIC, maxTokensField: 'max_completion_tokens' });

const OPENAI_HOST = /^https:\/\/api\.openai\.com(?:\/|$)/;

/** The record detected for a server from its provider name and base URL. */
export function detectChatCompat(_provider: string, baseUrl: string): ChatCompat {
  // By URL, not by provider: `openai/…` with OPENAI_BASE_URL pointing elsewhere is another server.
  return { ...(OPENAI_HOST.test(baseUrl) ? OPENAI : GENERIC) };
}

interface Resolved {
  generation: number;
  compat: Readonly<ChatCompat>;
}

// This is on every request: a model's record is computed once and kept with it until the
// learned cache changes (models are plain objects that live as long as their agent).
const resolved = new WeakMap<ModelRef, Resolved>();

/** The record that applies to `model` now: detected, then its declared `compat`, then what its server refused. */
export function chatCompat(model: ModelRef): Readonly<ChatCompat> {
  const generation = learnedGeneration();
  const kept = resolved.get(model);
  if (kept !== undefined && kept.generation === generation) return kept.compat;
  const compat = detectChatCompat(model.provider, model.baseUrl);
  if (model.compat !== undefined) assignDefined(compat, model.compat);
  const learned = learnedQuirks(model.baseUrl, model.id);
  if (learned !== undefined) assignDefined(compat, learned);
  resolved.set(model, { generation, compat });
  return compat;
}

/** The keys of {@link ChatCompat}, and the values each takes (for checking configuration). */
export const CHAT_COMPAT_VALUES: { readonly [K in keyof ChatCompat]: readonly ChatCompat[K][] } = {
  streamUsage: [true, false],
  maxTokensField: ['max_tokens', 'max_completion_tokens'],
  reasoningEffort: [true, false],
  thinkingFormat: ['think-tags', 'fields'],
  toolCallIds: ['any', 'mistral'],
};

function assignDefined(target: ChatCompat, source: Partial<ChatCompat>): void {
  for (const key of Object.keys(CHAT_COMPAT_VALUES) as Array<keyof ChatCompat>) {
    const value = source[key];
    if (value !== undefined) (target as unknown as Record<string, unknown>)[key] = value;
  }
}

/**
 * Why `value` is not a valid `compat` record, or `undefined` when it is; `where` names it
 * in the message (`modelConfig.compat`).
 */
export function compatProblem(value: unknown, where: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `${where} must be an object of Chat Completions quirks (${Object.keys(CHAT_COMPAT_VALUES).join(', ')})`;
  for (const [key, given] of Object.entries(value)) {
    if (!Object.hasOwn(CHAT_COMPAT_VALUES, key))
      return `${where}.${key} is not a quirk rein knows: use ${Object.keys(CHAT_COMPAT_VALUES).join(', ')}`;
    const allowed = CHAT_COMPAT_VALUES[key as keyof ChatCompat] as readonly unknown[];
    if (given !== undefined && !allowed.includes(given))
      return `${where}.${key} must be ${allowed.map((v) => JSON.stringify(v)).join(' or ')}, not ${JSON.stringify(given)}`;
  }
  return undefined;
}
