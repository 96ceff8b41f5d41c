/**
 * One simple command of a line, as permission rules see it: its words, and the forms a
 * deny rule must also catch (without `VAR=` prefixes, after wrappers such as `sudo`,
 * unquoted, the program without its directory, `sh -c` strings and `eval`).
 */
import { markOpaque, type CommandAnalysis } from './command-analysis.js';

/** Collapses runs of whitespace to one space and trims: how commands and patterns compare. */
export function normalizeCommand(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Commands that run the command given after their options. */
const WRAPPERS = new Set([
  'sudo',
  'doas',
  'env',
  'command',
  'builtin',
  'exec',
  'nohup',
  'time',
  'nice',
  'ionice',
  'timeout',
  'stdbuf',
  'xargs',
  'watch',
  'chroot',
  'setsid',
  'unbuffer',
  'busybox',
  'coproc',
  'flock',
  'strace',
  'ltrace',
  'sg',
  'su',
  'runuser',
  'systemd-run',
  'unshare',
  'nsenter',
  'firejail',
  'proot',
  'taskset',
  'chrt',
  'caffeinate',
  'torsocks',
]);
/** Shells whose `-c` argument is a command line. */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'fish', 'ash', 'csh', 'tcsh', 'rbash', 'yash', 'busybox']);
/** Words that start a part without being its command. */
const LEADING_WORDS = new Set(['then', 'do', 'else', 'elif', 'if', 'while', 'until', '!', '{', 'time', 'coproc']);
/**
 * Builtins whose words are code, not a command rein can read: what they run is decided
 * when the shell gets there (`eval "$x"`, `source file`, `alias l=rm`, `trap 'rm x' EXIT`).
 */
const CODE_BUILTINS = new Set([
  'eval',
  'exec',
  'source',
  '.',
  'coproc',
  'alias',
  'function',
  'trap',
  'enable',
  'fc',
  'bind',
  'complete',
  'compgen',
]);
/** Builtins that run code or rename commands only with some options (see {@link definesCode}). */
const OPTION_BUILTINS = new Set(['declare', 'typeset', 'export', 'readonly', 'local', 'shopt', 'hash', 'mapfile', 'readarray']);
/** Interpreters and the flags that give them code inline (`python -c`, `node -e`); none of them reading from a file is opaque too (they read code from stdin). */
const INTERPRETERS: Record<string, RegExp> = {
  python: /^-[a-zA-Z]*c/,
  python2: /^-[a-zA-Z]*c/,
  python3: /^-[a-zA-Z]*c/,
  pypy: /^-[a-zA-Z]*c/,
  pypy3: /^-[a-zA-Z]*c/,
  node: /^(-[a-zA-Z]*[ep]|--eval|--print)/,
  nodejs: /^(-[a-zA-Z]*[ep]|--eval|--print)/,
  bun: /^(-e|--eval|-p|--print)$/,
  deno: /^(eval|-e)$/,
  perl: /^-[a-zA-Z]*[eE]/,
  ruby: /^-[a-zA-Z]*e/,
  php: /^-[a-zA-Z]*r/,
  lua: /^-e/,
  luajit: /^-e/,
  Rscript: /^-e/,
  R: /^-e/,
  osascript: /^-e/,
  tclsh: /^-/,
  wish: /^-/,
  jshell: /^-/,
  irb: /^-/,
  ghci: /^-e/,
  julia: /^-[a-zA-Z]*e/,
};
/** Programs whose first argument is a program in their own language: awk's can call `system()`. */
const CODE_ARGUMENT = new Set(['awk', 'gawk', 'mawk', 'nawk', 'busybox-awk', 'jq-unsafe']);
/** Parts made only of a closing word are no command at all. */
const CLOSING_WORDS = new Set(['fi', 'done', 'esac', '}', 'then', 'do', 'else']);

/**
 * Finishes one simple command: normalizes it into `analysis.parts` and records the forms
 * deny rules also see in `analysis.hidden`; `nested` reads a command line found inside it.
 */
export function addPart(raw: string, analysis: CommandAnalysis, nested: (body: string) => void): void {
  let words = splitWords(raw);
  if (words[0] === 'coproc') markOpaque(analysis, '`coproc`');
  if (words[0] === 'function') {
    // `function f { rm x; }`: the definition is opaque, and its body is still a command deny rules see.
    markOpaque(analysis, 'a function definition');
    words = words.slice(2);
    if (words[0] === '()') words = words.slice(1);
  }
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
  // `command -v node` looks a name up; it runs nothing.
  const lookup = program === 'command' && /^-[vV]$/.test(plain[start + 1] ?? '');
  if (WRAPPERS.has(program) && !lookup) {
    // `sudo -u root rm -rf x`: which words are the wrapper's own options is unknowable
    // without knowing each wrapper, so every tail is a candidate command.
    for (let k = start + 1; k < plain.length && k < start + 64; k++) starts.push(k);
  } else if (program === 'find') {
    plain.forEach((w, k) => {
      if (/^-(exec|execdir|ok|okdir)$/.test(w)) starts.push(k + 1);
    });
  }
  for (const k of starts.slice(1)) commandAt(k);
  if (words.some((w) => /\$\{?IFS\b/.test(unquotedText(w)))) markOpaque(analysis, 'a word split by `$IFS`');
  for (const k of starts) {
    const why = opaqueCommand(words[k] as string | undefined, plain, k, start);
    if (why) markOpaque(analysis, why);
  }
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

/**
 * Why the command whose program is word `k` cannot be read as a literal command, if it
 * cannot: a program name that is not a literal word (an expansion, a substitution, a glob
 * or brace expansion), a builtin that runs code, a shell, an interpreter given code inline.
 */
function opaqueCommand(raw: string | undefined, plain: string[], k: number, start: number): string | undefined {
  if (raw === undefined) return undefined;
  const bare = unquotedText(raw);
  if (/[$`]/.test(raw.replace(/'[^']*'/g, ''))) return 'a command name that is an expansion';
  if (/[*?[]/.test(bare) || /\{[^}]*(,|\.\.)[^}]*\}/.test(bare)) return 'a command name that is a pattern';
  const name = basename(plain[k] as string);
  if (CODE_BUILTINS.has(name)) return `\`${name}\``;
  if (OPTION_BUILTINS.has(name)) return definesCode(name, plain.slice(k + 1));
  if (SHELLS.has(name)) return `a shell (\`${name}\`) runs code rein cannot read`;
  const args = plain.slice(k + 1);
  const interpreter = INTERPRETERS[name.replace(/[0-9.]+$/, '')] ?? INTERPRETERS[name];
  if (interpreter) {
    if (args.some((a) => interpreter.test(a))) return `\`${name}\` given code inline`;
    if (!args.some((a) => !a.startsWith('-')) || args.includes('-')) return `\`${name}\` reading code from its input`;
  }
  if (CODE_ARGUMENT.has(name)) return `\`${name}\` runs a program given inline`;
  if (
    name === 'git' &&
    args.some((a, i) => (a === '-c' || a.startsWith('--config-env') || a.startsWith('-c')) && i < firstSubcommand(args))
  )
    return '`git -c` can set a command for git to run';
  return undefined;
}

/** The index of git's subcommand: options before it are git's own. */
function firstSubcommand(args: string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-c' || a === '-C' || a === '--git-dir' || a === '--work-tree' || a === '--namespace') i++;
    else if (!a.startsWith('-')) return i;
  }
  return args.length;
}

/** Builtins that define functions, turn on aliases, rename commands or run callbacks with some options. */
function definesCode(name: string, args: string[]): string | undefined {
  if (name === 'shopt') return args.includes('expand_aliases') ? '`shopt -s expand_aliases`' : undefined;
  if (name === 'hash') return args.some((a) => /^-[a-zA-Z]*p/.test(a)) ? '`hash -p` renames a command' : undefined;
  if (name === 'mapfile' || name === 'readarray')
    return args.some((a) => /^-[a-zA-Z]*C/.test(a)) ? `\`${name} -C\` runs a callback` : undefined;
  return args.some((a) => /^-[a-zA-Z]*f/.test(a)) ? `\`${name} -f\` defines functions` : undefined;
}

/** A word's text outside single quotes and double quotes (what the shell expands or splits). */
function unquotedText(word: string): string {
  let out = '';
  let quote = '';
  for (let i = 0; i < word.length; i++) {
    const c = word[i] as string;
    if (quote) {
      if (c === '\\' && quote !== "'") i++;
      else if (c === quote || (quote === '$' && c === "'")) quote = '';
    } else if (c === '\\') i++;
    else if (c === '$' && word[i + 1] === "'") {
      quote = '$';
      i++;
    } else if (c === "'" || c === '"') quote = c;
    else out += c;
  }
  return out;
}

function basename(word: string): string {
  return word.replace(/^.*\//, '');
}

/** Splits on unquoted whitespace, keeping each word's quotes as written (`$'…'` included). */
function splitWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === '\\' && (quote === '"' || quote === '$')) {
        word += c + (text[++i] ?? '');
        continue;
      }
      if (c === quote || (quote === '$' && c === "'")) quote = '';
    } else if (c === '\\') {
      word += c + (text[++i] ?? '');
      continue;
    } else if (c === '$' && text[i + 1] === "'") {
      quote = '$';
      word += "$'";
      i++;
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

/** A word as the shell would pass it: quotes removed, escapes resolved, ANSI-C strings (`$'\x72m'`) decoded. */
export function unquote(word: string): string {
  if (!/['"\\]/.test(word)) return word;
  let out = '';
  let quote = '';
  for (let i = 0; i < word.length; i++) {
    const c = word[i] as string;
    if (quote === "'") {
      if (c === "'") quote = '';
      else out += c;
    } else if (quote === '$') {
      if (c === "'") quote = '';
      else if (c === '\\') {
        const [text, used] = ansiEscape(word, i + 1);
        out += text;
        i += used;
      } else out += c;
    } else if (c === '\\') out += word[++i] ?? '';
    else if (quote === '"' && c === '"') quote = '';
    else if (!quote && c === '$' && word[i + 1] === "'") {
      quote = '$';
      i++;
    } else if (!quote && (c === "'" || c === '"')) quote = c;
    else out += c;
  }
  return out;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** One escape of an ANSI-C string after its backslash, as bash reads it: the text and how many characters it used. */
function ansiEscape(word: string, at: number): [string, number] {
  const c = word[at] ?? '';
  const simple = SIMPLE_ESCAPES[c];
  if (simple !== undefined) return [simple, 1];
  const hex = (max: number, from: number): [string, number] => {
    const digits = /^[0-9a-fA-F]+/.exec(word.slice(from, from + max))?.[0] ?? '';
    return digits ? [String.fromCodePoint(parseInt(digits, 16)), digits.length + 1] : ['\\' + c, 1];
  };
  if (c === 'x') return hex(2, at + 1);
  if (c === 'u') return hex(4, at + 1);
  if (c === 'U') return hex(8, at + 1);
  if (/[0-7]/.test(c)) {
    const digits = /^[0-7]{1,3}/.exec(word.slice(at))?.[0] as string;
    return [String.fromCharCode(parseInt(digits, 8) & 0xff), digits.length];
  }
  if (c === 'c' && at + 1 < word.length) return [String.fromCharCode(word.charCodeAt(at + 1) & 0x1f), 2];
  return ['\\' + c, 1];
}
