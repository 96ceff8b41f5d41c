/**
 * Secret redaction: values that look like API keys and tokens, and the values of secret
 * environment variables, become `[REDACTED:<kind>]` before anything is stored or logged.
 * Text without a secret costs two regular-expression tests and no allocation; a short text
 * seen before, one map lookup.
 */
import { isSecretEnvName, isSecretEnvValue } from './secret-env.js';
import { ASSIGNMENT_PATTERNS, TOKEN_PATTERNS, type SecretPattern } from './secret-patterns.js';

/** What {@link createRedactor} takes. */
export interface RedactorOptions {
  /** Environment whose secret-named variables are redacted (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Variables redacted whatever their name, when set to 4 characters or more. */
  envNames?: string[];
  /** Further literal secrets (4 characters or more), shown as `[REDACTED:value]`. */
  values?: string[];
  /** Redact values that look like keys and tokens (default true). */
  patterns?: boolean;
}

/** Replaces secrets in text and in JSON values. */
export interface Redactor {
  /** The text with every secret replaced; the very same string when there was none. */
  redactText(text: string): string;
  /**
   * A plain JSON value (objects, arrays, strings…) with every string redacted. Returns the
   * same reference when nothing changed and a copy (sharing unchanged parts) otherwise;
   * never mutates its input. Object keys, non-plain objects and the base64 `data` of image
   * content are left as they are.
   */
  redactValue<T>(value: T): T;
}

/** Clean texts up to this many characters are remembered (longer ones are rarely repeated). */
const CACHED_TEXT_MAX = 128;
/** How many clean texts a redactor remembers at most. */
const CACHED_TEXTS = 2048;

/** A literal must be this long to be redacted: shorter ones would mangle ordinary text. */
const MIN_LITERAL = 4;

/**
 * Builds a redactor from the environment's secret-looking variables (`OPENAI_API_KEY`,
 * `GITHUB_TOKEN`, … with values of 8 characters or more), `envNames`, `values` and the
 * known key formats.
 *
 * @example
 * const redactor = createRedactor({ envNames: ['DEPLOY_HOOK'] });
 * redactor.redactText(`curl -H "Authorization: Bearer ${process.env.GITHUB_TOKEN}"`);
 * // 'curl -H "Authorization: Bearer [REDACTED:env:GITHUB_TOKEN]"'
 */
export function createRedactor(options: RedactorOptions = {}): Redactor {
  const literals = literalSecrets(options);
  const usePatterns = options.patterns !== false;
  const exact = compile([...(literals.size > 0 ? [literalPattern(literals)] : []), ...(usePatterns ? TOKEN_PATTERNS : [])], 'g');
  const assigned = usePatterns ? compile(ASSIGNMENT_PATTERNS, 'gim') : undefined;

  const scan = (text: string): string => {
    let out = text;
    if (exact) out = exact.apply(out);
    if (assigned) out = assigned.apply(out);
    return out;
  };
  // A run's events repeat the same short strings (event types, states, run and tool names,
  // ids): each is scanned once, then looked up. Only texts found clean are remembered (a
  // text holding a secret is not kept here, and is scanned again); the set is bounded and
  // starts over when full.
  const clean = new Set<string>();
  const redactText = (text: string): string => {
    if (text.length > CACHED_TEXT_MAX) return scan(text);
    if (clean.has(text)) return text;
    const out = scan(text);
    if (out === text) {
      if (clean.size >= CACHED_TEXTS) clean.clear();
      clean.add(text);
    }
    return out;
  };

  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return redactText(value);
    if (typeof value !== 'object' || value === null || depth > 200) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const next = walk(item, depth + 1);
        if (next !== item && copy === undefined) copy = value.slice(0, i);
        copy?.push(next);
      }
      return copy ?? value;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    const record = value as Record<string, unknown>;
    // Image content: base64 of pixels is not text, and scanning megabytes of it costs.
    const isImage = record.type === 'image';
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(record)) {
      const item = record[key];
      const next = isImage && key === 'data' ? item : walk(item, depth + 1);
      if (next !== item) {
        copy ??= { ...record };
        copy[key] = next;
      }
    }
    return copy ?? value;
  };

  return { redactText, redactValue: <T>(value: T): T => walk(value, 0) as T };
}

let processRedactor: Redactor | undefined;

/**
 * The redactor an agent uses when given none: `createRedactor()` over `process.env`, built
 * once per process (at the first agent) rather than per agent — scanning the environment
 * and compiling the patterns is most of what a fresh agent would otherwise cost. A variable
 * set later is not picked up: pass `redact: createRedactor()` to scan again.
 */
export function defaultRedactor(): Redactor {
  processRedactor ??= createRedactor();
  return processRedactor;
}

/** Every literal secret and the kind it is shown as, longest first. */
function literalSecrets(options: RedactorOptions): Map<string, string> {
  const found = new Map<string, string>();
  const add = (value: string | undefined, kind: string, min: number): void => {
    if (typeof value !== 'string' || value.length < min || found.has(value)) return;
    found.set(value, kind);
    // The same secret as JSON or a URL would spell it inside a logged line.
    for (const variant of [JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]) {
      if (variant !== value && !found.has(variant)) found.set(variant, kind);
    }
  };
  const env = options.env ?? process.env;
  for (const name of options.envNames ?? []) add(env[name], `env:${name}`, MIN_LITERAL);
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && isSecretEnvName(name) && isSecretEnvValue(value)) add(value, `env:${name}`, 8);
  }
  for (const value of options.values ?? []) add(value, 'value', MIN_LITERAL);
  return new Map([...found].sort((a, b) => b[0].length - a[0].length));
}

function literalPattern(literals: Map<string, string>): SecretPattern {
  return {
    kind: (_prefix, secret) => literals.get(secret) ?? 'value',
    secret: [...literals.keys()].map((v) => v.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'),
  };
}

/** A set of patterns as one regular expression with a named group per prefix and secret. */
function compile(patterns: readonly SecretPattern[], flags: string): { apply(text: string): string } | undefined {
  if (patterns.length === 0) return undefined;
  const source = patterns.map((p, i) => `(?<p${i}>${p.prefix ?? ''})(?<s${i}>${p.secret})`).join('|');
  const regex = new RegExp(source, flags);
  const replace = (...args: unknown[]): string => {
    const match = args[0] as string;
    const groups = args[args.length - 1] as Record<string, string | undefined>;
    for (let i = 0; i < patterns.length; i++) {
      const secret = groups[`s${i}`];
      if (secret === undefined) continue;
      const pattern = patterns[i] as SecretPattern;
      const prefix = groups[`p${i}`] ?? '';
      if (secret.startsWith('[REDACTED') || (pattern.accept && !pattern.accept(secret, prefix))) return match;
      return `${prefix}[REDACTED:${typeof pattern.kind === 'string' ? pattern.kind : pattern.kind(prefix, secret)}]`;
    }
    return match;
  };
  return {
    apply(text: string): string {
      // The fast path: one scan, no allocation, for the text without secrets.
      regex.lastIndex = 0;
      return regex.test(text) ? text.replace(regex, replace) : text;
    },
  };
}
