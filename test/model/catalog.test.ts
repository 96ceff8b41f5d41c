/**
 * The offline model catalog: lookups (exact, dated snapshots, OpenRouter ids, unknown
 * models, config overrides) and costs that equal the list prices times the usage of real
 * recordings, computed by hand from the recorded numbers.
 */
import { describe, expect, it } from 'vitest';
import { CATALOG, PRICES_AS_OF } from '../../src/model/catalog-data.js';
import { UNKNOWN_MODEL_DEFAULTS, costOf, listModels, lookupModel } from '../../src/model/catalog.js';
import type { Usage } from '../../src/model/types.js';
import { replayRecording } from '../conformance/recordings.js';

function usage(fields: Partial<Usage>): Usage {
  const u: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0, ...fields };
  if (fields.total === undefined) u.total = u.input + u.output + u.cacheRead + u.cacheWrite;
  return u;
}

describe('lookupModel', () => {
  it('finds a model by its exact id', () => {
    expect(lookupModel('openai', 'gpt-4o')).toEqual({
      provider: 'openai',
      id: 'gpt-4o',
      catalogId: 'openai/gpt-4o',
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      reasoning: false,
      pricing: { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 2.5 },
      note: expect.any(String),
    });
    expect(lookupModel('anthropic', 'claude-opus-4-1')).toMatchObject({
      catalogId: 'anthropic/claude-opus-4-1',
      reasoning: true,
      pricing: { input: 15, output: 75 },
    });
    expect(lookupModel('gemini', 'gemini-2.5-flash-lite')).toMatchObject({
      catalogId: 'gemini/gemini-2.5-flash-lite',
      contextWindow: 1_048_576,
    });
  });

  it('covers the common models of each vendor', () => {
    const required = {
      openai: ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'o3', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'gpt-5-nano'],
      anthropic: [
        'claude-opus-4-1',
        'claude-opus-4',
        'claude-sonnet-4-5',
        'claude-sonnet-4',
        'claude-3-7-sonnet',
        'claude-haiku-4-5',
        'claude-3-5-haiku',
      ],
      gemini: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.0-flash'],
    };
    for (const [provider, ids] of Object.entries(required)) {
      for (const id of ids) expect(lookupModel(provider, id).catalogId, `${provider}/${id}`).toBe(`${provider}/${id}`);
    }
  });

  it('resolves dated snapshots and -latest aliases to their family (longest known prefix wins)', () => {
    const cases: Array<[string, string, string]> = [
      ['openai', 'gpt-4o-2024-08-06', 'openai/gpt-4o'],
      ['openai', 'gpt-4o-mini-2024-07-18', 'openai/gpt-4o-mini'],
      ['openai', 'gpt-4.1-2025-04-14', 'openai/gpt-4.1'],
      ['openai', 'gpt-4.1-nano-2025-04-14', 'openai/gpt-4.1-nano'],
      ['openai', 'gpt-5-mini-2025-08-07', 'openai/gpt-5-mini'],
      ['openai', 'o4-mini-2025-04-16', 'openai/o4-mini'],
      ['anthropic', 'claude-sonnet-4-5-20250929', 'anthropic/claude-sonnet-4-5'],
      ['anthropic', 'claude-sonnet-4-20250514', 'anthropic/claude-sonnet-4'],
      ['anthropic', 'claude-opus-4-1-20250805', 'anthropic/claude-opus-4-1'],
      ['anthropic', 'claude-haiku-4-5-20251001', 'anthropic/claude-haiku-4-5'],
      ['anthropic', 'claude-3-7-sonnet-latest', 'anthropic/claude-3-7-sonnet'],
      ['anthropic', 'claude-3-5-haiku-latest', 'anthropic/claude-3-5-haiku'],
      ['anthropic', 'claude-sonnet-4-0', 'anthropic/claude-sonnet-4'],
      ['gemini', 'gemini-2.0-flash-001', 'gemini/gemini-2.0-flash'],
      ['gemini', 'gemini-2.0-flash-exp', 'gemini/gemini-2.0-flash'],
      ['gemini', 'gemini-2.5-flash-preview-05-20', 'gemini/gemini-2.5-flash'],
      ['gemini', 'gemini-2.5-flash-lite-preview-06-17', 'gemini/gemini-2.5-flash-lite'],
      ['gemini', 'models/gemini-2.5-pro', 'gemini/gemini-2.5-pro'],
    ];
    for (const [provider, id, family] of cases) expect(lookupModel(provider, id).catalogId, `${provider}/${id}`).toBe(family);
  });

  it('does not give a newer or bigger model the prices of a shorter id it happens to start with', () => {
    for (const [provider, id] of [
      ['anthropic', 'claude-opus-4-7'],
      ['openai', 'o3-pro'],
      ['openai', 'gpt-5.5'],
      ['openai', 'gpt-4o-audio-preview-x'],
      ['gemini', 'gemini-2.5-flash-image'],
    ] as const) {
      expect(lookupModel(provider, id).catalogId, `${provider}/${id}`).toBeUndefined();
    }
  });

  it('openai-responses shares OpenAI’s entries', () => {
    expect(lookupModel('openai-responses', 'gpt-5-2025-08-07')).toMatchObject({
      catalogId: 'openai/gpt-5',
      pricing: lookupModel('openai', 'gpt-5').pricing,
    });
  });

  it('maps OpenRouter vendor/model ids to the vendor’s entry, dots in Claude versions included', () => {
    expect(lookupModel('openrouter', 'anthropic/claude-sonnet-4.5')).toMatchObject({
      provider: 'openrouter',
      id: 'anthropic/claude-sonnet-4.5',
      catalogId: 'anthropic/claude-sonnet-4-5',
    });
    expect(lookupModel('openrouter', 'anthropic/claude-3.7-sonnet').catalogId).toBe('anthropic/claude-3-7-sonnet');
    expect(lookupModel('openrouter', 'openai/gpt-4.1-mini').catalogId).toBe('openai/gpt-4.1-mini');
    expect(lookupModel('openrouter', 'google/gemini-2.5-pro').catalogId).toBe('gemini/gemini-2.5-pro');
    expect(lookupModel('openrouter', 'anthropic/claude-sonnet-4.5:thinking').pricing).toEqual(
      lookupModel('anthropic', 'claude-sonnet-4-5').pricing,
    );
    // `:free` variants cost nothing; the limits are the vendor's.
    expect(lookupModel('openrouter', 'google/gemini-2.0-flash-exp:free')).toMatchObject({
      catalogId: 'gemini/gemini-2.0-flash',
      pricing: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    });
    expect(lookupModel('openrouter', 'minimax/minimax-m2:free').catalogId).toBeUndefined();
    expect(lookupModel('openrouter', 'gpt-4o').catalogId).toBeUndefined();
  });

  it('gives an unknown model conservative defaults and no price', () => {
    for (const [provider, id] of [
      ['ollama', 'llama3.1'],
      ['openai', 'my-finetune'],
      ['vllm', 'gpt-4o'],
    ] as const) {
      const info = lookupModel(provider, id);
      expect(info).toEqual({ provider, id, ...UNKNOWN_MODEL_DEFAULTS });
      expect(costOf({ provider, id }, usage({ input: 1000, output: 1000 }))).toBeUndefined();
    }
    expect(UNKNOWN_MODEL_DEFAULTS).toEqual({ contextWindow: 128_000, maxOutputTokens: 8_192, reasoning: false });
  });

  it('lets config overrides win, completing a partial price with the catalog’s', () => {
    const info = lookupModel('openai', 'gpt-4o', { contextWindow: 64_000, reasoning: true, pricing: { input: 2 } });
    expect(info).toMatchObject({
      contextWindow: 64_000,
      maxOutputTokens: 16_384,
      reasoning: true,
      pricing: { input: 2, output: 10, cacheRead: 1.25, cacheWrite: 2.5 },
    });
    // `undefined` in an override (a config key left empty) changes nothing.
    expect(lookupModel('openai', 'gpt-4o', { pricing: { input: undefined } }).pricing?.input).toBe(2.5);
    // The catalog itself is not changed by an override.
    expect(lookupModel('openai', 'gpt-4o').pricing?.input).toBe(2.5);
  });

  it('prices an unknown model from an override with input and output (cache prices default to input)', () => {
    const overrides = { maxOutputTokens: 32_768, pricing: { input: 0.5, output: 1.5 } };
    expect(lookupModel('ollama', 'qwen3:32b', overrides)).toMatchObject({
      maxOutputTokens: 32_768,
      pricing: { input: 0.5, output: 1.5, cacheRead: 0.5, cacheWrite: 0.5 },
    });
    // An input price alone is not a price: the output is what dominates.
    expect(lookupModel('ollama', 'qwen3:32b', { pricing: { input: 0.5 } }).pricing).toBeUndefined();
    expect(costOf({ provider: 'ollama', id: 'qwen3:32b' }, usage({ input: 2_000_000, output: 1_000_000 }), overrides)?.total).toBeCloseTo(
      2.5,
      12,
    );
  });
});

describe('the catalog data', () => {
  it('records when its prices were taken', () => {
    expect(PRICES_AS_OF).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(Number.isNaN(Date.parse(PRICES_AS_OF))).toBe(false);
  });

  it('has sane numbers: prices finite and non-negative, cache reads no dearer than input, output within the window', () => {
    for (const [vendor, entries] of Object.entries(CATALOG)) {
      for (const entry of entries) {
        const where = `${vendor}/${entry.id}`;
        for (const price of Object.values(entry.pricing)) expect(Number.isFinite(price) && price >= 0, where).toBe(true);
        expect(entry.pricing.cacheRead, where).toBeLessThanOrEqual(entry.pricing.input);
        expect(entry.pricing.output, where).toBeGreaterThanOrEqual(entry.pricing.input);
        expect(Number.isInteger(entry.contextWindow) && Number.isInteger(entry.maxOutputTokens), where).toBe(true);
        expect(entry.maxOutputTokens, where).toBeLessThan(entry.contextWindow);
      }
    }
  });

  it('has no id or alias twice within a vendor, and every id resolves to itself', () => {
    for (const [vendor, entries] of Object.entries(CATALOG)) {
      const keys = entries.flatMap((e) => [e.id, ...(e.aliases ?? [])]);
      expect(new Set(keys).size, vendor).toBe(keys.length);
      for (const entry of entries) expect(lookupModel(vendor, entry.id).catalogId).toBe(`${vendor}/${entry.id}`);
    }
  });

  it('listModels returns every entry with its vendor as provider', () => {
    const listed = listModels();
    expect(listed).toHaveLength(Object.values(CATALOG).flat().length);
    expect(listed.find((m) => m.id === 'claude-haiku-4-5')).toMatchObject({
      provider: 'anthropic',
      catalogId: 'anthropic/claude-haiku-4-5',
      pricing: { input: 1, output: 5 },
    });
    // Callers may change what they get without changing the catalog.
    listed[0]!.pricing!.input = 999;
    expect(listModels()[0]!.pricing!.input).not.toBe(999);
  });
});

describe('costOf', () => {
  it('splits the cost like the usage and totals it', () => {
    const cost = costOf(
      { provider: 'anthropic', id: 'claude-opus-4-1' },
      usage({ input: 1_000_000, output: 100_000, cacheRead: 2_000_000, cacheWrite: 400_000 }),
    );
    expect(cost?.input).toBeCloseTo(15, 12);
    expect(cost?.output).toBeCloseTo(7.5, 12);
    expect(cost?.cacheRead).toBeCloseTo(3, 12);
    expect(cost?.cacheWrite).toBeCloseTo(7.5, 12);
    expect(cost?.total).toBeCloseTo(33, 12);
  });

  it('zero usage costs zero', () => {
    expect(costOf({ provider: 'gemini', id: 'gemini-2.5-pro' }, usage({}))).toEqual({
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      total: 0,
    });
  });
});

/**
 * A reported USD equals the catalog prices times the recorded usage. Each case writes the
 * usage down by hand from the numbers in the recording, checks the dollars computed by
 * hand, and checks that rein's adapter, decoding the recording, reports that usage.
 */
describe('cost of recorded responses', () => {
  const cases = [
    {
      name: 'OpenAI Chat Completions, gpt-4.1 with a prompt-cache hit',
      file: 'openai-chat/stream-text-usage-cached-tokens.sse',
      model: { provider: 'openai', id: 'gpt-4.1' },
      // prompt_tokens 1144 of which cached_tokens 1024; completion_tokens 3; total_tokens 1147.
      usage: usage({ input: 120, output: 3, cacheRead: 1024, total: 1147 }),
      // 120 × $2 + 3 × $8 + 1024 × $0.50, per million.
      usd: (120 * 2 + 3 * 8 + 1024 * 0.5) / 1e6,
      literal: 0.000776,
    },
    {
      name: 'Anthropic Messages, claude-sonnet-4-5 (dated id) with a prompt-cache hit',
      file: 'anthropic/stream-text-prompt-cache-hit.sse',
      model: { provider: 'anthropic', id: 'claude-sonnet-4-5-20250929' },
      // message_delta usage: input_tokens 3, cache_read_input_tokens 1217, cache_creation_input_tokens 0, output_tokens 6.
      usage: usage({ input: 3, output: 6, cacheRead: 1217, total: 1226 }),
      usd: (3 * 3 + 6 * 15 + 1217 * 0.3) / 1e6,
      literal: 0.0004641,
    },
    {
      name: 'OpenAI Responses, gpt-5 with reasoning tokens',
      file: 'openai-responses/stream-reasoning-function-call.sse',
      model: { provider: 'openai-responses', id: 'gpt-5' },
      // input_tokens 53 (cached 0), output_tokens 469 of which reasoning_tokens 448, total 522.
      usage: usage({ input: 53, output: 469, reasoning: 448, total: 522 }),
      usd: (53 * 1.25 + 469 * 10) / 1e6,
      literal: 0.00475625,
    },
    {
      name: 'Gemini, gemini-2.5-flash with thinking tokens billed as output',
      file: 'gemini/stream-thinking.sse',
      model: { provider: 'gemini', id: 'gemini-2.5-flash' },
      // last usageMetadata: promptTokenCount 14, candidatesTokenCount 139, thoughtsTokenCount 436, totalTokenCount 589.
      usage: usage({ input: 14, output: 139 + 436, reasoning: 436, total: 589 }),
      usd: (14 * 0.3 + 575 * 2.5) / 1e6,
      literal: 0.0014417,
    },
  ];

  for (const c of cases) {
    it(`${c.name}: catalog prices × recorded usage`, () => {
      expect(c.usd).toBeCloseTo(c.literal, 15);
      const cost = costOf(c.model, c.usage);
      expect(cost?.total).toBeCloseTo(c.literal, 15);
      expect((cost?.input ?? 0) + (cost?.output ?? 0) + (cost?.cacheRead ?? 0) + (cost?.cacheWrite ?? 0)).toBeCloseTo(c.literal, 15);
    });

    it(`${c.name}: rein's adapter decodes that usage from the recording`, async () => {
      const { message } = await replayRecording(c.file, { id: c.model.id });
      expect(message.error, 'the adapter failed to decode the recording').toBeUndefined();
      const { cost: _cost, ...reported } = message.usage;
      expect(reported).toEqual(c.usage);
      expect(costOf({ provider: message.provider, id: message.model }, message.usage)?.total).toBeCloseTo(c.literal, 15);
    });
  }
});
