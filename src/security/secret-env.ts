/**
 * Which environment variables hold secrets, judged by name: `OPENAI_API_KEY`,
 * `GITHUB_TOKEN`, `PGPASSWORD`, `NEXTAUTH_SECRET` do; `KEYBOARD_LAYOUT`,
 * `TOKENIZERS_PARALLELISM`, `GIT_AUTHOR_NAME`, `SSH_AUTH_SOCK`, `PWD` do not.
 */

/** Words that make a name secret wherever they appear in it (`PGPASSWORD`). */
const SECRET_SUBSTRINGS = /PASSWORD|PASSWD|PASSPHRASE|SECRET|CREDENTIAL|PRIVATE_?KEY|COOKIE/;
/** Words that make a name secret only as a whole `_`-separated segment (`HF_TOKEN`, not `TOKENIZERS`). */
const SECRET_SEGMENTS = new Set(['KEY', 'APIKEY', 'TOKEN', 'AUTH', 'PAT', 'PASS', 'PW', 'PWD', 'DSN', 'SIGNATURE']);
/** A last segment that says the value is about a secret, not the secret (`…_KEY_FILE`, `SSH_AUTH_SOCK`). */
const NOT_SECRET_LAST = new Set([
  'FILE',
  'PATH',
  'DIR',
  'SOCK',
  'SOCKET',
  'TYPE',
  'MODE',
  'NAME',
  'USER',
  'USERNAME',
  'ID',
  'HOST',
  'PORT',
  'REGION',
  'URL',
  'URI',
  'ENDPOINT',
  'LIMIT',
  'COUNT',
  'SIZE',
  'MAX',
  'MIN',
  'TIMEOUT',
  'TTL',
  'EXPIRY',
  'EXPIRES',
  'ENABLED',
  'DISABLED',
  'HEADER',
  'LENGTH',
  'METHOD',
  'PROVIDER',
  'VERSION',
  'PARALLELISM',
  'COMMAND',
  'PROGRAM',
  'HELPER',
]);
/** Variables every shell sets, whose names merely look secret. */
const NOT_SECRET_NAMES = new Set(['PWD', 'OLDPWD']);

/** True when a variable of this name should have its value redacted. */
export function isSecretEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  if (NOT_SECRET_NAMES.has(upper)) return false;
  const segments = upper.split(/[^A-Z0-9]+/).filter(Boolean);
  if (NOT_SECRET_LAST.has(segments.at(-1) ?? '')) return false;
  return SECRET_SUBSTRINGS.test(upper) || segments.some((s) => SECRET_SEGMENTS.has(s));
}

/** Values that are settings, not secrets, even under a secret-looking name: flags and paths. */
export function isSecretEnvValue(value: string): boolean {
  if (value.length < 8) return false;
  if (/^(?:true|false|yes|no|on|off|none|null|enabled|disabled)$/i.test(value)) return false;
  // A file path names where a secret lives, not the secret (GOOGLE_APPLICATION_CREDENTIALS).
  return !/^(?:\/|~\/|\.\.?\/|[A-Za-z]:[\\/])\S*$/.test(value);
}
