/**
 * Reading a shell command the way permission rules need it: the simple commands a
 * compound line is made of, what hides inside it (command substitutions, `sh -c` strings,
 * here-documents, wrappers such as `sudo`), and whether it does something a prefix rule
 * must never allow on its own (substitution, writing to a file). Not a shell parser: it is
 * conservative where it is unsure, so an allow rule matches less and a deny rule more.
 */
import { markOpaque, markUnsafe, type CommandAnalysis } from './command-analysis.js';
import { addPart, unquote } from './command-part.js';

export type { CommandAnalysis } from './command-analysis.js';

/** Redirection targets that write no file. */
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);
/** How deep substitutions and `sh -c` strings are followed; a deeper line is `opaque`. */
const MAX_DEPTH = 16;

/**
 * Splits a command line into its simple commands and finds what hides inside it.
 *
 * @example
 * analyzeCommand('git add -A && git commit -m "x"').parts; // ['git add -A', 'git commit -m "x"']
 * analyzeCommand('echo $(cat ~/.ssh/id_rsa)').unsafe;      // 'command substitution'
 */
export function analyzeCommand(command: string): CommandAnalysis {
  const analysis: CommandAnalysis = { parts: [], hidden: [] };
  scan(command, analysis, 0);
  return analysis;
}

/** Adds a nested command line (a substitution's body, an `sh -c` string) to what deny rules see. */
function nested(body: string, analysis: CommandAnalysis, depth: number): void {
  if (depth >= MAX_DEPTH) {
    markOpaque(analysis, 'commands nested too deeply');
    return;
  }
  const inner: CommandAnalysis = { parts: [], hidden: [] };
  scan(body, inner, depth + 1);
  analysis.hidden.push(...inner.parts, ...inner.hidden);
  if (inner.opaque) markOpaque(analysis, inner.opaque);
  if (inner.unsafe) markUnsafe(analysis, inner.unsafe);
}

/** Index just past the `)` closing a `(` opened before `from`, skipping quotes; `text.length` when unclosed. */
function closingParen(text: string, from: number): number {
  let depth = 1;
  let quote = '';
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\' && (quote === '"' || quote === '$')) i++;
      else if (c === quote || (quote === '$' && c === "'")) quote = '';
    } else if (c === '\\') i++;
    else if (c === '$' && text[i + 1] === "'") {
      quote = '$';
      i++;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return text.length;
}

/** Index just past the backtick closing one opened before `from`. */
function closingBacktick(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '`') return i + 1;
  }
  return text.length;
}

function scan(text: string, analysis: CommandAnalysis, depth: number): void {
  let part = '';
  let quote = '';
  /** Here-document delimiters waiting for the end of the current line. */
  const heredocs: Heredoc[] = [];
  const endPart = (): void => {
    addPart(part, analysis, (body) => nested(body, analysis, depth));
    part = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (quote === "'") {
      part += c;
      if (c === "'") quote = '';
      continue;
    }
    if (quote === '$') {
      // ANSI-C quoting (`$'…'`): a backslash escapes the next character, `'` ends it.
      part += c;
      if (c === '\\') part += text[++i] ?? '';
      else if (c === "'") quote = '';
      continue;
    }
    if (c === '\\') {
      // A backslash-newline is removed, joining the words around it (`r\⏎m` is `rm`);
      // any other escaped character stays as written.
      if (next !== '\n') part += c + (next ?? '');
      i++;
      continue;
    }
    if (c === '`' || (c === '$' && next === '(')) {
      const start = c === '`' ? i + 1 : i + 2;
      const end = c === '`' ? closingBacktick(text, start) : closingParen(text, start);
      markUnsafe(analysis, 'command substitution');
      nested(text.slice(start, Math.max(start, end - 1)), analysis, depth);
      part += text.slice(i, end);
      i = end - 1;
      continue;
    }
    if (quote === '"') {
      part += c;
      if (c === '"') quote = '';
      continue;
    }
    if (c === '$' && next === "'") {
      quote = '$';
      part += "$'";
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      part += c;
      continue;
    }
    if ((c === '<' || c === '>') && next === '(') {
      const end = closingParen(text, i + 2);
      markUnsafe(analysis, 'process substitution');
      nested(text.slice(i + 2, Math.max(i + 2, end - 1)), analysis, depth);
      part += text.slice(i, end);
      i = end - 1;
      continue;
    }
    if (c === '#' && (part === '' || /\s$/.test(part))) {
      // A comment runs to the end of the line.
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
      continue;
    }
    if (c === '\n') {
      endPart();
      if (heredocs.length > 0) i = skipHeredocs(text, i + 1, heredocs.splice(0), analysis, depth) - 1;
      continue;
    }
    if (c === '(' && next === ')' && /^\s*[^\s]+\s*$/.test(part)) markOpaque(analysis, 'a function definition');
    if (c === ';' || c === '(' || c === ')') {
      endPart();
      continue;
    }
    if (c === '|') {
      endPart();
      if (next === '|' || next === '&') i++;
      continue;
    }
    if (c === '&') {
      if (next === '>') {
        i = redirection(text, i + 1, analysis) - 1; // `&>file`, `&>>file`
        part += ' ';
        continue;
      }
      endPart();
      if (next === '&') i++;
      continue;
    }
    if (c === '>') {
      // `2>file`: the descriptor number belongs to the redirection, not to the command's words.
      part = part.replace(/(^|\s)[0-9]$/, '$1');
      i = redirection(text, i, analysis) - 1;
      part += ' ';
      continue;
    }
    if (c === '<' && next === '<' && text[i + 2] !== '<') {
      // A here-document: its delimiter is a shell word, quotes removed (`<<"E"OF` ends at `EOF`).
      const strip = text[i + 2] === '-';
      let at = i + (strip ? 3 : 2);
      while (text[at] === ' ' || text[at] === '\t') at++;
      const word = shellWord(text, at);
      if (word.length > 0) {
        heredocs.push({ delimiter: unquote(word), strip });
        part += ` <<${word} `;
        i = at + word.length - 1;
        continue;
      }
    }
    if (c === '<' && next !== '<' && next !== '(') {
      // An input redirection before the command (`<in rm x`) is no word of it.
      part = part.replace(/(^|\s)[0-9]$/, '$1');
      let at = i + 1;
      if (text[at] === '&' || text[at] === '>') at++;
      while (text[at] === ' ' || text[at] === '\t') at++;
      const word = shellWord(text, at);
      if (/[`$]/.test(word)) markUnsafe(analysis, 'command substitution');
      part += ' ';
      i = at + word.length - 1;
      continue;
    }
    part += c;
  }
  endPart();
}

/** A pending here-document: its delimiter (quotes removed) and whether `<<-` strips leading tabs. */
interface Heredoc {
  delimiter: string;
  strip: boolean;
}

/** The shell word starting at `at` (quotes kept as written): up to unquoted whitespace or an operator. */
function shellWord(text: string, at: number): string {
  let i = at;
  let quote = '';
  for (; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === '\\' && quote !== "'") i++;
      else if (c === quote || (quote === '$' && c === "'")) quote = '';
      continue;
    }
    if (c === '\\') i++;
    else if (c === '$' && text[i + 1] === "'") {
      quote = '$';
      i++;
    } else if (c === "'" || c === '"') quote = c;
    else if (/[\s;&|()<>]/.test(c)) break;
  }
  return text.slice(at, Math.min(i, text.length));
}

/**
 * Reads a `>` redirection starting at `at` (the `>`); returns the index after its target.
 * Writing to a file makes the line unsafe; duplicating a descriptor or `/dev/null` does not.
 */
function redirection(text: string, at: number, analysis: CommandAnalysis): number {
  let i = at + 1;
  if (text[i] === '>' || text[i] === '|') i++;
  if (text[i] === '&') {
    if (/^[0-9-]/.test(text[i + 1] ?? '')) return i + 2; // `>&2`, `2>&1`, `>&-`: a descriptor, no file
    i++; // `>& file` writes the file
  }
  while (text[i] === ' ' || text[i] === '\t') i++;
  const target = /^[^\s;&|()<>]*/.exec(text.slice(i))?.[0] ?? '';
  if (!HARMLESS_TARGETS.has(unquote(target))) markUnsafe(analysis, 'redirection to a file');
  return i + target.length;
}

/**
 * Consumes the bodies of pending here-documents from `from`; their lines are commands deny
 * rules see. A body ends at a line that is exactly its delimiter (after leading tabs, for
 * `<<-`), as the shell reads it; without one it runs to the end of the text.
 */
function skipHeredocs(text: string, from: number, heredocs: Heredoc[], analysis: CommandAnalysis, depth: number): number {
  let i = from;
  for (const { delimiter, strip } of heredocs) {
    const body: string[] = [];
    while (i < text.length) {
      const end = text.indexOf('\n', i);
      const line = text.slice(i, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end + 1;
      if ((strip ? line.replace(/^\t+/, '') : line) === delimiter) break;
      body.push(line);
    }
    nested(body.join('\n'), analysis, depth);
  }
  return i;
}
