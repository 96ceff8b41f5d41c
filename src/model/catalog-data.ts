/**
 * The offline model catalog: context window, output limit, whether the model reasons, and
 * list prices in USD per million tokens, for the common models of each vendor. Read by
 * `catalog.ts`; no network at build or run time.
 *
 * These are the vendors' published LIST prices (standard tier, no batch / flex / priority
 * discounts) and they change: callers with other prices (a negotiated rate, a proxy, a
 * model not listed) pass `ModelOverrides` to `lookupModel` / `costOf`.
 *
 * Conventions:
 * - `cacheRead` is the price of a prompt token read from the cache; `cacheWrite` of one
 *   written to it. OpenAI and Gemini charge no separate write price (a cache write bills as
 *   ordinary input; Gemini's explicit caches add a storage fee per hour, not modelled), so
 *   their `cacheWrite` is the input price. Anthropic's is the 5-minute write (1.25× input);
 *   1-hour writes cost 2× input and are not told apart in `Usage`.
 * - Tiered prices keep the base tier (see each entry's `note`): rein prices every request
 *   at the rate for prompts up to the tier boundary, so very long prompts on those models
 *   cost more than rein reports.
 * - `contextWindow` is the standard window; larger windows behind beta headers (Claude's
 *   1M) are noted, not assumed.
 */
/** Prices in USD per million tokens. */
export interface ModelPricing {
  /** Prompt tokens neither read from nor written to the cache. */
  input: number;
  /** Output tokens, reasoning included. */
  output: number;
  /** Prompt tokens read from the cache. */
  cacheRead: number;
  /** Prompt tokens written to the cache. */
  cacheWrite: number;
}

/** The day the prices and limits below were taken from the vendors' pages (ISO date). */
export const PRICES_AS_OF = '2026-11-30';

/** One model family of a vendor. Dated snapshots (`gpt-4o-2024-08-06`) resolve to it. */
export interface CatalogEntry {
  /** The family id as the vendor's API takes it. */
  id: string;
  contextWindow: number;
  maxOutputTokens: number;
  /** Supports thinking / reasoning (reasoning tokens bill as output). */
  reasoning: boolean;
  /** USD per million tokens. */
  pricing: ModelPricing;
  /** Other ids the vendor gives the same model that are not a dated snapshot (`claude-sonnet-4-0`). */
  aliases?: string[];
  /** What the numbers leave out (tiers, beta windows). */
  note?: string;
  /**
   * `prompt` for a model whose API has no tool calling for it: its tools are described in
   * the prompt (prompted tools). Absent: native tool calling.
   */
  toolCalling?: 'native' | 'prompt';
}

/** The vendors whose models the catalog knows, as provider names of `resolve.ts`. */
export type CatalogVendor = 'openai' | 'anthropic' | 'gemini';

const GPT_4_1_WINDOW = 1_047_576;
const GEMINI_WINDOW = 1_048_576;

/** The catalog, by vendor. */
export const CATALOG: Record<CatalogVendor, CatalogEntry[]> = {
  openai: [
    // Cached input is 50% off on gpt-4o and the o1/o3-mini generation, 75% on gpt-4.1, o3
    // and o4-mini, 90% on gpt-5.
    {
      id: 'gpt-4o',
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      reasoning: false,
      pricing: { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 2.5 },
      note: 'the first snapshot gpt-4o-2024-05-13 was priced $5 / $15',
    },
    {
      id: 'gpt-4o-mini',
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      reasoning: false,
      pricing: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0.15 },
    },
    {
      id: 'gpt-4.1',
      contextWindow: GPT_4_1_WINDOW,
      maxOutputTokens: 32_768,
      reasoning: false,
      pricing: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 },
    },
    {
      id: 'gpt-4.1-mini',
      contextWindow: GPT_4_1_WINDOW,
      maxOutputTokens: 32_768,
      reasoning: false,
      pricing: { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0.4 },
    },
    {
      id: 'gpt-4.1-nano',
      contextWindow: GPT_4_1_WINDOW,
      maxOutputTokens: 32_768,
      reasoning: false,
      pricing: { input: 0.1, output: 0.4, cacheRead: 0.025, cacheWrite: 0.1 },
    },
    {
      id: 'o1',
      contextWindow: 200_000,
      maxOutputTokens: 100_000,
      reasoning: true,
      pricing: { input: 15, output: 60, cacheRead: 7.5, cacheWrite: 15 },
    },
    // OpenAI's model page for o1-mini lists function calling as not supported (nor system
    // messages, structured outputs): its tools go in the prompt.
    {
      id: 'o1-mini',
      contextWindow: 128_000,
      maxOutputTokens: 65_536,
      reasoning: true,
      pricing: { input: 1.1, output: 4.4, cacheRead: 0.55, cacheWrite: 1.1 },
      toolCalling: 'prompt',
    },
    {
      id: 'o3',
      contextWindow: 200_000,
      maxOutputTokens: 100_000,
      reasoning: true,
      pricing: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 },
      note: 'priced $10 / $40 before June 2025',
    },
    {
      id: 'o3-mini',
      contextWindow: 200_000,
      maxOutputTokens: 100_000,
      reasoning: true,
      pricing: { input: 1.1, output: 4.4, cacheRead: 0.55, cacheWrite: 1.1 },
    },
    {
      id: 'o4-mini',
      contextWindow: 200_000,
      maxOutputTokens: 100_000,
      reasoning: true,
      pricing: { input: 1.1, output: 4.4, cacheRead: 0.275, cacheWrite: 1.1 },
    },
    {
      id: 'gpt-5',
      contextWindow: 400_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      pricing: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 1.25 },
    },
    {
      id: 'gpt-5-mini',
      contextWindow: 400_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      pricing: { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0.25 },
    },
    {
      id: 'gpt-5-nano',
      contextWindow: 400_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      pricing: { input: 0.05, output: 0.4, cacheRead: 0.005, cacheWrite: 0.05 },
    },
  ],
  anthropic: [
    // Cache reads are 0.1× input, 5-minute cache writes 1.25× input, on every model.
    {
      id: 'claude-opus-4-6',
      contextWindow: 200_000,
      maxOutputTokens: 128_000,
      reasoning: true,
      pricing: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
      note: '1M context with the context-1m beta',
    },
    {
      id: 'claude-opus-4-5',
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      pricing: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    },
    {
      id: 'claude-opus-4-1',
      contextWindow: 200_000,
      maxOutputTokens: 32_000,
      reasoning: true,
      pricing: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    },
    {
      id: 'claude-opus-4',
      contextWindow: 200_000,
      maxOutputTokens: 32_000,
      reasoning: true,
      pricing: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
      aliases: ['claude-opus-4-0'],
    },
    {
      id: 'claude-sonnet-4-6',
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      pricing: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      note: '1M context with the context-1m beta',
    },
    {
      id: 'claude-sonnet-4-5',
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      pricing: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      note: '1M context with the context-1m beta; prompts over 200k tokens bill $6 in / $22.50 out (rein prices the base tier)',
    },
    {
      id: 'claude-sonnet-4',
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      pricing: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      aliases: ['claude-sonnet-4-0'],
      note: '1M context with the context-1m beta; prompts over 200k tokens bill $6 in / $22.50 out (rein prices the base tier)',
    },
    {
      id: 'claude-3-7-sonnet',
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      pricing: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    },
    {
      id: 'claude-haiku-4-5',
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      reasoning: true,
      pricing: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    },
    {
      id: 'claude-3-5-haiku',
      contextWindow: 200_000,
      maxOutputTokens: 8_192,
      reasoning: false,
      pricing: { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
    },
  ],
  gemini: [
    // Output prices include thinking tokens. Cache reads are the "context caching" price.
    {
      id: 'gemini-3-pro-preview',
      contextWindow: GEMINI_WINDOW,
      maxOutputTokens: 65_536,
      reasoning: true,
      pricing: { input: 2, output: 12, cacheRead: 0.2, cacheWrite: 2 },
      note: 'prompts over 200k tokens bill $4 in / $18 out / $0.40 cache read (rein prices the base tier)',
    },
    {
      id: 'gemini-2.5-pro',
      contextWindow: GEMINI_WINDOW,
      maxOutputTokens: 65_536,
      reasoning: true,
      pricing: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 1.25 },
      note: 'prompts over 200k tokens bill $2.50 in / $15 out / $0.25 cache read (rein prices the base tier)',
    },
    {
      id: 'gemini-2.5-flash',
      contextWindow: GEMINI_WINDOW,
      maxOutputTokens: 65_536,
      reasoning: true,
      pricing: { input: 0.3, output: 2.5, cacheRead: 0.03, cacheWrite: 0.3 },
      note: 'audio input bills $1.00',
    },
    {
      id: 'gemini-2.5-flash-lite',
      contextWindow: GEMINI_WINDOW,
      maxOutputTokens: 65_536,
      reasoning: true,
      pricing: { input: 0.1, output: 0.4, cacheRead: 0.01, cacheWrite: 0.1 },
      note: 'audio input bills $0.30',
    },
    {
      id: 'gemini-2.0-flash',
      contextWindow: GEMINI_WINDOW,
      maxOutputTokens: 8_192,
      reasoning: false,
      pricing: { input: 0.1, output: 0.4, cacheRead: 0.025, cacheWrite: 0.1 },
      note: 'audio input bills $0.70',
    },
    {
      id: 'gemini-2.0-flash-lite',
      contextWindow: GEMINI_WINDOW,
      maxOutputTokens: 8_192,
      reasoning: false,
      pricing: { input: 0.075, output: 0.3, cacheRead: 0.075, cacheWrite: 0.075 },
      note: 'no context caching',
    },
  ],
};
