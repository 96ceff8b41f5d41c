/**
 * What rein knows about a model without asking anyone: its context window, output limit,
 * whether it reasons, and its list prices, from the offline catalog in `catalog-data.ts`.
 * Cost totals, budgets (`maxCostUsd`) and `rein models` read it.
 *
 * Matching: an exact id or alias first; else the longest catalog id that the asked id
 * starts with, provided the rest is a snapshot suffix (`-2024-08-06`, `-20250929`,
 * `-latest`, `-001`, `-preview…`, `-exp…`). A bare prefix is not enough: `claude-opus-4-7`
 * must not take the prices of `claude-opus-4`, nor `o3-pro` those of `o3`.
 */
import { CATALOG } from './catalog-data.js';
import type { CatalogEntry, CatalogVendor, ModelPricing } from './catalog-data.js';

export type { ModelPricing } from './catalog-data.js';
import type { Cost, Usage } from './types.js';

/** What rein knows about one model. */
export interface ModelInfo {
  /** The provider as asked (`openrouter`, `openai-responses`, …). */
  provider: string;
  /** The model id as asked (`claude-sonnet-4-5-20250929`). */
  id: string;
  /** The catalog entry the values come from (`anthropic/claude-sonnet-4-5`); absent for an unknown model. */
  catalogId?: string;
  contextWindow: number;
  maxOutputTokens: number;
  /** Supports thinking / reasoning. */
  reasoning: boolean;
  /** USD per million tokens; absent when the price is unknown. */
  pricing?: ModelPricing;
  /** What the numbers leave out (tiered prices, beta context windows). */
  note?: string;
  /** `prompt` when the model has no native tool calling (its tools go in the prompt); absent for native. */
  toolCalling?: 'native' | 'prompt';
}

/**
 * Per-model settings from config that win over the catalog. A partial `pricing` completes
 * the catalog's; for a model the catalog does not know, `input` and `output` are needed
 * and the cache prices default to `input`.
 */
export interface ModelOverrides {
  contextWindow?: number;
  maxOutputTokens?: number;
  reasoning?: boolean;
  pricing?: Partial<ModelPricing>;
}

/**
 * What an unknown model is taken to be: a window and output limit most current models
 * exceed (so context assembly stays within it), no thinking, and no price (cost unknown).
 */
export const UNKNOWN_MODEL_DEFAULTS: Readonly<Pick<ModelInfo, 'contextWindow' | 'maxOutputTokens' | 'reasoning'>> = Object.freeze({
  contextWindow: 128_000,
  maxOutputTokens: 8_192,
  reasoning: false,
});

/** Provider names of `resolve.ts` whose models are a catalog vendor's. */
const VENDOR_OF_PROVIDER: Record<string, CatalogVendor> = {
  openai: 'openai',
  // The same models and account as `openai`, through the Responses API.
  'openai-responses': 'openai',
  anthropic: 'anthropic',
  gemini: 'gemini',
};

/** OpenRouter's vendor prefixes (`anthropic/claude-sonnet-4.5`). */
const OPENROUTER_VENDORS: Record<string, CatalogVendor> = { openai: 'openai', anthropic: 'anthropic', google: 'gemini' };

const SNAPSHOT_SUFFIX = /^-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3}|latest|preview(?:-[\w.-]+)?|exp(?:-[\w.-]+)?)$/;

interface VendorIndex {
  exact: Map<string, CatalogEntry>;
  /** Ids and aliases, longest first, for snapshot matching. */
  prefixes: Array<[string, CatalogEntry]>;
}

let index: Map<CatalogVendor, VendorIndex> | undefined;

function vendorIndex(vendor: CatalogVendor): VendorIndex {
  index ??= new Map(
    (Object.keys(CATALOG) as CatalogVendor[]).map((name) => {
      const exact = new Map<string, CatalogEntry>();
      for (const entry of CATALOG[name]) for (const key of [entry.id, ...(entry.aliases ?? [])]) exact.set(key, entry);
      const prefixes = [...exact].sort((a, b) => b[0].length - a[0].length);
      return [name, { exact, prefixes }];
    }),
  );
  return index.get(vendor) as VendorIndex;
}

function findInVendor(vendor: CatalogVendor, id: string): CatalogEntry | undefined {
  const { exact, prefixes } = vendorIndex(vendor);
  const hit = exact.get(id);
  if (hit !== undefined) return hit;
  for (const [key, entry] of prefixes) {
    if (id.startsWith(key) && SNAPSHOT_SUFFIX.test(id.slice(key.length))) return entry;
  }
  return undefined;
}

interface Match {
  vendor: CatalogVendor;
  entry: CatalogEntry;
  /** OpenRouter's `:free` variants cost nothing. */
  free: boolean;
}

function findEntry(provider: string, rawId: string): Match | undefined {
  // Gemini's own listings name models `models/gemini-2.5-pro`.
  const id = rawId.trim().replace(/^models\//, '');
  if (provider === 'openrouter') return findOpenRouter(id);
  const vendor = VENDOR_OF_PROVIDER[provider];
  if (vendor === undefined) return undefined;
  const entry = findInVendor(vendor, id);
  return entry === undefined ? undefined : { vendor, entry, free: false };
}

/**
 * `vendor/model[:variant]` on OpenRouter → the vendor's entry. OpenRouter writes Claude
 * versions with dots (`claude-sonnet-4.5`) where Anthropic writes dashes.
 */
function findOpenRouter(id: string): Match | undefined {
  const slash = id.indexOf('/');
  if (slash === -1) return undefined;
  const vendor = OPENROUTER_VENDORS[id.slice(0, slash)];
  if (vendor === undefined) return undefined;
  const [model = '', variant] = id.slice(slash + 1).split(':');
  const candidate = vendor === 'anthropic' ? model.replace(/(\d)\.(\d)/g, '$1-$2') : model;
  const entry = findInVendor(vendor, candidate);
  return entry === undefined ? undefined : { vendor, entry, free: variant === 'free' };
}

/**
 * What rein knows about `provider`/`id`. Always returns something: an unknown model gets
 * {@link UNKNOWN_MODEL_DEFAULTS} and no pricing. `overrides` (from config) win.
 *
 * @example
 * lookupModel('anthropic', 'claude-sonnet-4-5-20250929').contextWindow; // 200000
 * lookupModel('openrouter', 'anthropic/claude-sonnet-4.5').catalogId;  // 'anthropic/claude-sonnet-4-5'
 * lookupModel('ollama', 'llama3.1', { contextWindow: 131072 }).contextWindow; // 131072
 */
export function lookupModel(provider: string, id: string, overrides?: ModelOverrides): ModelInfo {
  const match = findEntry(provider, id);
  const info: ModelInfo = { provider, id, ...UNKNOWN_MODEL_DEFAULTS };
  if (match !== undefined) {
    const { entry } = match;
    info.catalogId = `${match.vendor}/${entry.id}`;
    info.contextWindow = entry.contextWindow;
    info.maxOutputTokens = entry.maxOutputTokens;
    info.reasoning = entry.reasoning;
    info.pricing = match.free ? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } : { ...entry.pricing };
    if (entry.note !== undefined) info.note = entry.note;
    if (entry.toolCalling !== undefined) info.toolCalling = entry.toolCalling;
  }
  return overrides === undefined ? info : applyOverrides(info, overrides);
}

function applyOverrides(info: ModelInfo, overrides: ModelOverrides): ModelInfo {
  const out: ModelInfo = { ...info };
  if (overrides.contextWindow !== undefined) out.contextWindow = overrides.contextWindow;
  if (overrides.maxOutputTokens !== undefined) out.maxOutputTokens = overrides.maxOutputTokens;
  if (overrides.reasoning !== undefined) out.reasoning = overrides.reasoning;
  const p = overrides.pricing;
  if (p !== undefined) {
    if (info.pricing !== undefined) out.pricing = { ...info.pricing, ...definedOnly(p) };
    else if (p.input !== undefined && p.output !== undefined) {
      out.pricing = { input: p.input, output: p.output, cacheRead: p.cacheRead ?? p.input, cacheWrite: p.cacheWrite ?? p.input };
    }
  }
  return out;
}

function definedOnly(pricing: Partial<ModelPricing>): Partial<ModelPricing> {
  return Object.fromEntries(Object.entries(pricing).filter(([, value]) => value !== undefined));
}

/**
 * What `usage` cost in USD at the catalog's (or the overridden) prices, split like
 * {@link Usage}; `undefined` when the model's price is unknown.
 *
 * @example
 * costOf({ provider: 'openai', id: 'gpt-4.1' }, message.usage)?.total;
 */
export function costOf(model: { provider: string; id: string }, usage: Usage, overrides?: ModelOverrides): Cost | undefined {
  const pricing = lookupModel(model.provider, model.id, overrides).pricing;
  return pricing === undefined ? undefined : priceUsage(pricing, usage);
}

/** What `usage` costs at `pricing` (USD per million tokens); for callers that looked the price up once. */
export function priceUsage(pricing: ModelPricing, usage: Usage): Cost {
  const input = (usage.input * pricing.input) / 1e6;
  const output = (usage.output * pricing.output) / 1e6;
  const cacheRead = (usage.cacheRead * pricing.cacheRead) / 1e6;
  const cacheWrite = (usage.cacheWrite * pricing.cacheWrite) / 1e6;
  return { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite };
}

/** Every catalog entry, by vendor (`openai`, `anthropic`, `gemini`) in catalog order. */
export function listModels(): ModelInfo[] {
  return (Object.keys(CATALOG) as CatalogVendor[]).flatMap((vendor) =>
    CATALOG[vendor].map((entry): ModelInfo => {
      const info: ModelInfo = {
        provider: vendor,
        id: entry.id,
        catalogId: `${vendor}/${entry.id}`,
        contextWindow: entry.contextWindow,
        maxOutputTokens: entry.maxOutputTokens,
        reasoning: entry.reasoning,
        pricing: { ...entry.pricing },
      };
      if (entry.note !== undefined) info.note = entry.note;
      if (entry.toolCalling !== undefined) info.toolCalling = entry.toolCalling;
      return info;
    }),
  );
}
