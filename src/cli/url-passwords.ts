/**
 * URL passwords (`http://alice:s3cret@host/v1`) kept out of what the CLI prints, as the run
 * store keeps them out of the log: a base URL with credentials shows up in `run_started`
 * under `--json` and in error messages, and both end up in terminals, CI logs and bug
 * reports. The pattern and the replacement are the store redactor's own (`url_password` in
 * security/secret-patterns.ts), so `rein run` prints `alice:[REDACTED:url_password]@` just
 * as `rein show` does.
 */
import { Writable } from 'node:stream';
import { ASSIGNMENT_PATTERNS, type SecretPattern } from '../security/secret-patterns.js';

const KIND = 'url_password';
const PATTERN = ASSIGNMENT_PATTERNS.find((p) => p.kind === KIND) as SecretPattern;
// Flags as the store compiles its assignment patterns (case-insensitive, every match).
const FIND = new RegExp(`(${PATTERN.prefix ?? ''})(${PATTERN.secret})`, 'gi');

/** `text` with the password of every URL in it replaced; the very same string when there is none. */
export function redactUrlPasswords(text: string): string {
  // The cheap test first: most text holds no URL with credentials.
  if (!text.includes('://')) return text;
  return text.replace(FIND, (match, prefix: string, secret: string) =>
    secret.startsWith('[REDACTED') || (PATTERN.accept && !PATTERN.accept(secret, prefix)) ? match : `${prefix}[REDACTED:${KIND}]`,
  );
}

/**
 * A stream that writes to `target` what it is given, URL passwords redacted: stdout under
 * `--json`, where each JSON line is written whole in one write. (The answer streamed in
 * human mode is not passed through it: that stays byte-exact.)
 */
export function urlPasswordRedacting<T extends Writable & { isTTY?: boolean }>(target: T): Writable & { isTTY?: boolean } {
  const out: Writable & { isTTY?: boolean } = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      target.write(redactUrlPasswords(typeof chunk === 'string' ? chunk : chunk.toString('utf8')));
      // Done at once: `target` buffers (and reports its own errors), so nothing waits here
      // and nothing is left behind when the process ends.
      done();
    },
  });
  if (target.isTTY) out.isTTY = true;
  return out;
}
