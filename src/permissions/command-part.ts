/**
 * One simple command of a line, as permission rules see it: its words, and the forms a
 * deny rule must also catch (without `VAR=` prefixes, after wrappers such as `sudo`,
 * unquoted, the program without its directory, `sh -c` strings and `eval`).
 */
import type { CommandAnalysis } from './command.js';

/** Collapses runs of whitespace to one space and trims: how commands and patterns compare. */
export function normalizeCommand(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Commands that run the command given after their options. */
const WRAPPERS = new Set(['sudo', 'doas', 'env', 'command', 'builtin', 'exec', 'nohup', 'time', 'nice', 'ionice', 'timeout', 'stdbuf', 'xargs', 'watch', 'chroot', 'setsid', 'unbuffer']);
/** Shells whose `-c` argument is a command line. */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'ash', 'busybox']);
/** Words that start a part without being its command. */
const LEADING_WORDS = new Set(['then', 'do', 'else', 'elif', 'if', 'while', 'until', '!', '{', 'time']);
/** Parts made only of a closing word are no command at all. */
const CLOSING_WORDS = new Set(['fi', 'done', 'esac', '}', 'then', 'do', 'else']);

/**
 * Finishes one simple command: normalizes it into `analysis.parts` and records the forms
 * deny rules also see in `analysis.hidden`; `nested` reads a command line found inside it.
 */
export function addPart(raw: string, analysis: CommandAnalysis, nested: (body: string) => void): void {
  let words = splitWords(raw);
  while (words.length > 0 && LEADING_WORDS.has(words[0] as string)) words = words.slice(1);
  if (words.length === 0 || (words.length === 1 && CLOSING_WORDS.has(words[0] as string))) return;
  const part = words.join(' ');
  analysis.parts.push(part);
  const seen = new Set([part]);
  const hide = (form: string): void => {
    const normalized = normalizeCommand(form);
    if (normalized && !seen.has(normalized)) {
      seen.add(normalized);
      analysis.hidden.push(normalized);
    }
  };
  const plain = words.map(unquote);
  /** The command starting at word `k`, its program named without directory (`/bin/rm` → `rm`). */
  const commandAt = (k: number): void => {
    if (k < plain.length) hide([basename(plain[k] as string), ...plain.slice(k + 1)].join(' '));
  };
  hide(plain.join(' '));
  let start = 0;
  while (start < plain.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(plain[start] as string)) start++;
  commandAt(start);
  const program = basename(plain[start] ?? '');
  const starts = [start];
  if (WRAPPERS.has(program)) {
    // `sudo -u root rm -rf x`: which words are the wrapper's own options is unknowable
    // without knowing each wrapper, so every tail is a candidate command.
    for (let k = start + 1; k < plain.length && k < start + 64; k++) starts.push(k);
  } else if (program === 'find') {
    plain.forEach((w, k) => {
      if (/^-(exec|execdir|ok|okdir)$/.test(w)) starts.push(k + 1);
    });
  }
  for (const k of starts.slice(1)) commandAt(k);
  for (const k of starts) {
    const name = basename(plain[k] ?? '');
    if (SHELLS.has(name)) {
      const flag = plain.findIndex((w, j) => j > k && /^-[a-z]*c[a-z]*$/.test(w));
      const body = flag === -1 ? undefined : plain[flag + 1];
      if (body !== undefined) nested(body);
      break;
    }
    if (name === 'eval') {
      nested(plain.slice(k + 1).join(' '));
      break;
    }
  }
}

function basename(word: string): string {
  return word.replace(/^.*\//, '');
}

/** Splits on unquoted whitespace, keeping each word's quotes as written. */
function splitWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === '\\' && quote === '"') {
        word += c + (text[++i] ?? '');
        continue;
      }
      if (c === quote) quote = '';
    } else if (c === '\\') {
      word += c + (text[++i] ?? '');
      continue;
    } else if (c === "'" || c === '"') quote = c;
    else if (/\s/.test(c)) {
      if (word) words.push(word);
      word = '';
      continue;
    }
    word += c;
  }
  if (word) words.push(word);
  return words;
}

/** A word as the shell would pass it: quotes removed, escapes resolved. */
export function unquote(word: string): string {
  if (!/['"\\]/.test(word)) return word;
  let out = '';
  let quote = '';
  for (let i = 0; i < word.length; i++) {
    const c = word[i] as string;
    if (quote === "'") {
      if (c === "'") quote = '';
      else out += c;
    } else if (c === '\\') out += word[++i] ?? '';
    else if (quote === '"' && c === '"') quote = '';
    else if (!quote && (c === "'" || c === '"')) quote = c;
    else out += c;
  }
  return out;
}
