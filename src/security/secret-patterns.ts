/**
 * What secrets look like. Each pattern is tuned for precision over recall: a git sha, a
 * UUID, base64 image data or an ordinary identifier must never be mistaken for a key,
 * because a redacted stored run is harder to read and to resume. Sources hold no capturing
 * groups: the redactor combines them into one regular expression with named groups.
 */

/** One kind of secret. */
export interface SecretPattern {
  /** What the replacement names: `[REDACTED:<kind>]`. May depend on the prefix (`password` vs `token`). */
  kind: string | ((prefix: string, secret: string) => string);
  /** Text before the secret that is kept (a key name, `Bearer `): a regex source. */
  prefix?: string;
  /** The secret itself: a regex source. */
  secret: string;
  /** A last check on a match; false leaves it alone. */
  accept?: (secret: string, prefix: string) => boolean;
}

/**
 * Not preceded by a letter or digit (`nope-ghp_…` and `KEY_sk-…` are still keys: a key
 * glued to a name by `-` or `_` is no less a key), nor followed by a character a token could
 * continue with.
 */
const START = '(?<![A-Za-z0-9])';
const END = '(?![A-Za-z0-9_-])';

const hasDigitAndLetter = (s: string): boolean => /\d/.test(s) && /[A-Za-z]/.test(s);

/** Exact formats of providers' keys and tokens, matched case-sensitively. */
export const TOKEN_PATTERNS: readonly SecretPattern[] = [
  {
    kind: 'private_key',
    // A whole PEM block, or from its header to the end of the base64 when it was cut.
    secret:
      '-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\\s\\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\\s|\\\\n)*[A-Za-z0-9+/=]{16,})*)',
  },
  { kind: 'anthropic_key', secret: `${START}sk-ant-[A-Za-z0-9_-]{20,}` },
  { kind: 'openai_key', secret: `${START}sk-[A-Za-z0-9_-]{20,}`, accept: (s) => hasDigitAndLetter(s.slice(3)) },
  { kind: 'stripe_key', secret: `${START}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}${END}` },
  { kind: 'aws_access_key', secret: '(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])' },
  { kind: 'github_token', secret: `${START}(?:(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})${END}` },
  { kind: 'gitlab_token', secret: `${START}glpat-[A-Za-z0-9_-]{20,}${END}` },
  { kind: 'slack_token', secret: `${START}xox[abprs]-[A-Za-z0-9-]{10,}${END}`, accept: (s) => /\d/.test(s) },
  { kind: 'slack_webhook', secret: 'https://hooks\\.slack\\.com/services/[A-Za-z0-9_/-]+' },
  { kind: 'google_api_key', secret: `${START}AIza[0-9A-Za-z_-]{35}${END}` },
  { kind: 'npm_token', secret: `${START}npm_[A-Za-z0-9]{36}${END}` },
  { kind: 'huggingface_token', secret: `${START}hf_[A-Za-z0-9]{34,}${END}` },
  { kind: 'groq_key', secret: `${START}gsk_[A-Za-z0-9]{40,}${END}` },
  { kind: 'xai_key', secret: `${START}xai-[A-Za-z0-9]{40,}${END}` },
  { kind: 'sendgrid_key', secret: `${START}SG\\.[A-Za-z0-9_-]{16,32}\\.[A-Za-z0-9_-]{32,64}${END}` },
  // Header and payload are base64url JSON objects, so both start with `eyJ` (`{"`).
  { kind: 'jwt', secret: `${START}eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]*${END}` },
];

/** The names under which a value is a secret: a key ends in one of these. */
const SECRET_WORDS =
  '(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|auth[_-]?key|credentials?)';
/** A key that ends in a secret word (`DB_PASSWORD`, `client_secret`, `apiKey`, `x-api-key`). */
const KEY = `(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?${SECRET_WORDS}`;
/** Keys ending in a secret word that name no secret: paging cursors, token counts. */
const NOT_SECRET_KEY = /(page|next|continuation|cursor|sync|max|min|num|count|limit|total|usage)[_-]?(token|key)$/i;
/** Values that stand for a secret without being one. */
const PLACEHOLDER =
  /^(?:[$%<{[*]|process\.env|os\.environ|env\.|your[_-]|(?:null|none|nil|true|false|undefined|string|required|optional|changeme|example|redacted|secret|password|token|xxx+|\.\.\.)$)|^(.)\1*$/i;

function assignedKind(prefix: string): string {
  const key = prefix.toLowerCase();
  if (/pass/.test(key)) return 'password';
  if (/token/.test(key)) return 'token';
  if (/secret/.test(key)) return 'secret';
  if (/key/.test(key)) return 'api_key';
  return 'credentials';
}

/** A value assigned to a secret-named key: long enough, not a placeholder, not a count. */
function assignedValue(value: string, prefix: string): boolean {
  const key = prefix.replace(/["'\s:=]+$/, '').replace(/^["'\s-]+/, '');
  if (NOT_SECRET_KEY.test(key) || PLACEHOLDER.test(value)) return false;
  return value.length >= (/pass/i.test(key) ? 4 : 8);
}

/** Credentials in assignments, headers and URLs, matched case-insensitively. */
export const ASSIGNMENT_PATTERNS: readonly SecretPattern[] = [
  { kind: 'bearer_token', prefix: '\\bbearer\\s+', secret: '[A-Za-z0-9._~+/-]{16,}=*', accept: (s) => /\d/.test(s) },
  { kind: 'basic_auth', prefix: '\\bauthorization["\']?\\s*[:=]\\s*["\']?basic\\s+', secret: '[A-Za-z0-9+/]{6,}={0,2}' },
  {
    kind: 'password',
    prefix: '\\bcurl\\b[^\\n|;&]*?\\s(?:-u|--user)\\s+["\']?[^\\s:\'"]+:',
    secret: '[^\\s\'"]+',
    accept: (s) => !PLACEHOLDER.test(s),
  },
  {
    kind: 'aws_secret_key',
    prefix: '["\']?(?:aws_?)?secret_?access_?key["\']?\\s*[:=]\\s*["\']?',
    secret: '[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])',
  },
  // scheme://user:password@host
  {
    kind: 'url_password',
    prefix: '\\b[a-z][a-z0-9+.-]*://[^\\s/:@\'"]*:',
    secret: '[^\\s/@\'"]+(?=@)',
    accept: (s) => !PLACEHOLDER.test(s),
  },
  // KEY=value: env lines, URL queries, --flag=value. No spaces, no quotes.
  { kind: assignedKind, prefix: `(?:--)?${KEY}=`, secret: '[^\\s"\'&;,<>)}\\]`]+', accept: assignedValue },
  // "key": "value", key = 'value', key: "value": JSON, code, YAML, TOML.
  { kind: assignedKind, prefix: `["']?${KEY}["']?[ \\t]*[:=][ \\t]*["']`, secret: '[^"\'\\n]{1,400}(?=["\'])', accept: assignedValue },
  // key: value and key = value on a line of their own (YAML, INI), the value one word.
  {
    kind: assignedKind,
    prefix: `^[ \\t-]*${KEY}[ \\t]*[:=][ \\t]*`,
    secret: '[^\\s"\'#]{1,400}(?=[ \\t]*(?:#.*)?$)',
    accept: assignedValue,
  },
  // X-Api-Key: value, in a header or a sentence: needs a digit to tell a key from a word.
  { kind: assignedKind, prefix: `${KEY}:[ \\t]*`, secret: '[A-Za-z0-9._~+/=-]{8,}', accept: (s, p) => /\d/.test(s) && assignedValue(s, p) },
];
