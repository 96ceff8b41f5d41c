/**
 * Counting tokens of what goes to the model, cheaply enough to do every turn.
 *
 * - OpenAI-family models are counted with their real encoding (gpt-tokenizer's
 *   `o200k_base` or `cl100k_base`), loaded lazily: importing rein never loads the
 *   vocabulary, and until {@link TokenCounter.load} finishes (or for any other model) a
 *   character-class estimate stands in.
 * - Every count is corrected by what the provider reports: {@link TokenCounter.calibrate}
 *   keeps a moving ratio of reported prompt tokens to our count of the same request, so
 *   the provider's own framing (role markers, its tool-use preamble) is learned per model.
 * - Tool specs are counted once per spec object and per array. Messages are counted as
 *   asked: the engine keeps running sums per history array, so each message is counted
 *   once in the normal flow. (Not a WeakMap per message: its entries cost every garbage
 *   collection, which measurably slowed the whole loop.)
 */
import type { ImageContent, Message, ModelRef, TextContent, ToolSpec } from '../model/types.js';
import { wireArguments } from '../model/json-limits.js';

/**
 * What one image is counted as. Images are not decoded: a typical 1024×1024 image costs
 * about 765 tokens at OpenAI and about 1,600 at Anthropic; calibration absorbs the rest.
 */
export const IMAGE_TOKENS = 1_000;

/** Role and separator tokens every message costs on the wire (OpenAI documents 3–4). */
const MESSAGE_OVERHEAD = 4;
/** The call id, the name's framing and the arguments' wrapper of one tool call or result. */
const CALL_OVERHEAD = 8;
/** The framing of one tool declaration. */
const SPEC_OVERHEAD = 8;

/** The calibration ratio never leaves this range, whatever a provider reports. */
const RATIO_MIN = 0.4;
const RATIO_MAX = 3;
/** Weight of the newest observation in the moving ratio. */
const RATIO_ALPHA = 0.5;

/** A real tokenizer rein can load for a model. */
export type Encoding = 'o200k_base' | 'cl100k_base';

/** Counts tokens for one model. Raw counts are uncalibrated; {@link TokenCounter.calibrated} applies the learned ratio. */
export interface TokenCounter {
  /** What counts right now: a real encoding once loaded, else `estimate`. */
  readonly method: Encoding | 'estimate';
  /** Bumped whenever raw counts change meaning (the tokenizer finished loading): caches of sums must be dropped. */
  readonly version: number;
  /** Reported prompt tokens per raw token, learned from the provider's usage (1 until then). */
  readonly ratio: number;
  /** Raw tokens of a string. */
  text(text: string): number;
  /** Raw tokens of one message, framing included. */
  message(message: Message): number;
  /** Raw tokens of the tool declarations (cached per array and per spec). */
  tools(specs: readonly ToolSpec[]): number;
  /** `raw` scaled by {@link TokenCounter.ratio}, rounded up. */
  calibrated(raw: number): number;
  /** Learns from one response: our raw count of the request against the prompt tokens the provider reported. */
  calibrate(raw: number, reported: number): void;
  /** Loads the model's tokenizer, if it has one; never rejects (counting falls back to the estimate). */
  load(): Promise<void>;
}

/**
 * The real encoding of an OpenAI-family model, or `undefined` for any other model (which
 * is then estimated). Covers `openai/…`, `openai-responses/…`, `openrouter/openai/…` and
 * OpenAI model ids served through an OpenAI-compatible wire.
 *
 * @example
 * encodingFor({ provider: 'openai', id: 'gpt-4o', api: 'openai-chat' }); // 'o200k_base'
 * encodingFor({ provider: 'anthropic', id: 'claude-sonnet-4-5', api: 'anthropic-messages' }); // undefined
 */
export function encodingFor(model: Pick<ModelRef, 'provider' | 'id' | 'api'>): Encoding | undefined {
  let id = model.id.trim().toLowerCase();
  if (model.provider === 'openrouter') {
    if (!id.startsWith('openai/')) return undefined;
    id = id.slice('openai/'.length);
  } else if (model.api !== 'openai-chat' && model.api !== 'openai-responses') {
    return undefined;
  }
  if (/^(?:gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|chatgpt-|codex-|o\d)/.test(id)) return 'o200k_base';
  if (/^(?:gpt-4|gpt-3\.5)/.test(id)) return 'cl100k_base';
  return undefined;
}

/**
 * Tokens of `text` estimated from its character classes, without a vocabulary: letters
 * ~4.4 per token, digits ~2.2, punctuation ~0.6 tokens each, whitespace almost free, CJK
 * ~0.8 tokens per character, other scripts ~3.2 characters per token. Fitted on prose,
 * code, JSON and three non-Latin scripts against o200k_base: within about ±20% (random
 * strings such as hashes are worse); calibration corrects the rest.
 *
 * @example
 * estimateTokens('The quick brown fox jumps over the lazy dog.'); // 10
 */
export function estimateTokens(text: string): number {
  let letters = 0;
  let digits = 0;
  let punctuation = 0;
  let spaces = 0;
  let wide = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) letters++;
      else if (c >= 48 && c <= 57) digits++;
      else if (c === 32 || c === 10 || c === 9 || c === 13) spaces++;
      else punctuation++;
    } else if ((c >= 0x2e80 && c <= 0xd7ff) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xff00 && c <= 0xffef)) wide++;
    else other++;
  }
  return Math.ceil(letters / 4.4 + digits / 2.2 + punctuation * 0.6 + spaces * 0.08 + wide * 0.8 + other / 3.2);
}

type CountFn = (text: string) => number;

const loaded = new Map<Encoding, Promise<CountFn | undefined>>();

/** The encoding's count function, imported once per process; `undefined` if it cannot be loaded. */
function loadEncoding(encoding: Encoding): Promise<CountFn | undefined> {
  let pending = loaded.get(encoding);
  if (!pending) {
    // Special-token text (`<|endoftext|>`) in a message is plain text to the API: count it as such.
    const options = { disallowedSpecial: new Set<string>() };
    const imported = encoding === 'o200k_base' ? import('gpt-tokenizer/encoding/o200k_base') : import('gpt-tokenizer/encoding/cl100k_base');
    pending = imported.then(
      (module): CountFn =>
        (text) =>
          module.countTokens(text, options),
      () => undefined,
    );
    loaded.set(encoding, pending);
  }
  return pending;
}

/**
 * A token counter for `model`: its real encoding once {@link TokenCounter.load} has run
 * (OpenAI family), a calibrated estimate otherwise.
 *
 * @example
 * const counter = createTokenCounter({ provider: 'openai', id: 'gpt-4o', api: 'openai-chat', baseUrl: '' });
 * await counter.load();
 * counter.text('hello world'); // 2
 */
export function createTokenCounter(model: Pick<ModelRef, 'provider' | 'id' | 'api'>): TokenCounter {
  return new Counter(encodingFor(model));
}

class Counter implements TokenCounter {
  method: Encoding | 'estimate' = 'estimate';
  version = 0;
  ratio = 1;
  private count: CountFn = estimateTokens;
  private specs = new WeakMap<ToolSpec, number>();
  private specArrays = new WeakMap<readonly ToolSpec[], number>();
  private loading: Promise<void> | undefined;

  constructor(private readonly encoding: Encoding | undefined) {}

  text(text: string): number {
    return text.length === 0 ? 0 : this.count(text);
  }

  message(message: Message): number {
    let tokens = MESSAGE_OVERHEAD;
    if (message.role === 'user') return tokens + this.parts(message.content);
    if (message.role === 'tool') return tokens + CALL_OVERHEAD + this.parts(message.content);
    for (const block of message.content) {
      if (block.type === 'text') tokens += this.text(block.text);
      else if (block.type === 'thinking') tokens += this.text(block.thinking);
      else tokens += CALL_OVERHEAD + this.text(block.name) + this.text(wireArguments(block));
    }
    return tokens;
  }

  tools(specs: readonly ToolSpec[]): number {
    let total = this.specArrays.get(specs);
    if (total !== undefined) return total;
    total = 0;
    for (const spec of specs) {
      let tokens = this.specs.get(spec);
      if (tokens === undefined) {
        tokens = SPEC_OVERHEAD + this.text(spec.name) + this.text(spec.description) + this.text(JSON.stringify(spec.parameters));
        this.specs.set(spec, tokens);
      }
      total += tokens;
    }
    this.specArrays.set(specs, total);
    return total;
  }

  calibrated(raw: number): number {
    return Math.ceil(raw * this.ratio);
  }

  calibrate(raw: number, reported: number): void {
    if (!(raw > 0) || !(reported > 0)) return;
    const next = this.ratio + RATIO_ALPHA * (reported / raw - this.ratio);
    this.ratio = Math.min(RATIO_MAX, Math.max(RATIO_MIN, next));
  }

  load(): Promise<void> {
    const encoding = this.encoding;
    if (encoding === undefined) return Promise.resolve();
    this.loading ??= loadEncoding(encoding).then((fn) => {
      if (!fn) return;
      this.count = fn;
      this.method = encoding;
      // Counts cached so far were estimates: start over, and let the ratio learn afresh.
      this.specs = new WeakMap();
      this.specArrays = new WeakMap();
      this.ratio = 1;
      this.version++;
    });
    return this.loading;
  }

  private parts(content: string | Array<TextContent | ImageContent>): number {
    if (typeof content === 'string') return this.text(content);
    let tokens = 0;
    for (const part of content) tokens += part.type === 'text' ? this.text(part.text) : IMAGE_TOKENS;
    return tokens;
  }
}
