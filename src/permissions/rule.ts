/**
 * One permission rule: a tool-name glob with an optional argument pattern,
 * `name` | `glob` | `name(pattern)`. Parsed once; its matchers are compiled on first use
 * and kept, because a policy runs for every tool call.
 */
import { posix } from 'node:path';
import { ReinError } from '../errors.js';
import { loadPicomatch } from '../workspace/patterns.js';
import { normalizeCommand } from './command-part.js';

type Matcher = (subject: string) => boolean;

const EXAMPLES =
  'write a tool name or glob such as "read_file" or "github__*", optionally with an argument pattern: "bash(git status*)", "write_file(src/**)"';
/** Tool names are letters, digits, `_` and `-`; a name glob adds `* ? [ ] { } ,`. */
const NAME_GLOB = /^[A-Za-z0-9_\-*?[\]{},]+$/;
const GLOB_CHARS = /[*?[\]{}]/;

/**
 * A parsed permission rule. `matchesTool` compares names case-insensitively (`Bash`
 * matches the tool `bash`); the argument matchers are for {@link createPermissionPolicy}.
 */
export class PermissionRule {
  /** The rule, normalized: `bash(git status*)`. */
  readonly text: string;
  /** The tool-name glob: `bash`, `github__*`, `*`. */
  readonly tool: string;
  /** The argument pattern between the parentheses, if any. */
  readonly argument: string | undefined;
  private nameMatcher: Matcher | undefined;
  private pathMatcher: Matcher | undefined;
  private commandMatcher: RegExp | undefined;

  constructor(tool: string, argument: string | undefined) {
    this.tool = tool;
    this.argument = argument;
    this.text = argument === undefined ? tool : `${tool}(${argument})`;
  }

  /** True when the rule's name glob matches the tool name. */
  matchesTool(name: string): boolean {
    this.nameMatcher ??= GLOB_CHARS.test(this.tool)
      ? loadPicomatch()(this.tool, { nocase: true, dot: true })
      : (
          (lower) => (n: string) =>
            n.toLowerCase() === lower
        )(this.tool.toLowerCase());
    return this.nameMatcher(name);
  }

  /**
   * True when the argument pattern, read as a path glob, matches a workspace-relative path
   * (already normalized by {@link normalizeSubjectPath}). False for a rule without one.
   */
  matchesPath(path: string): boolean {
    if (this.argument === undefined) return false;
    this.pathMatcher ??= loadPicomatch()(pathGlob(this.argument), { dot: true });
    return this.pathMatcher(path);
  }

  /**
   * True when the argument pattern, read as a command pattern, matches one simple command
   * (whitespace collapsed). False for a rule without one.
   */
  matchesCommand(command: string): boolean {
    if (this.argument === undefined) return false;
    this.commandMatcher ??= commandRegex(this.argument);
    return this.commandMatcher.test(command);
  }
}

/**
 * Parses `name`, `glob` or `name(pattern)`, tolerating whitespace around the parts.
 * Throws a `config` {@link ReinError} saying what is wrong and showing a valid rule.
 *
 * @example
 * parsePermissionRule('bash( git status* )').text; // 'bash(git status*)'
 * parsePermissionRule('github__*').tool;           // 'github__*'
 */
export function parsePermissionRule(text: string): PermissionRule {
  const fail = (problem: string): never => {
    throw new ReinError('config', 'fatal', `bad permission rule ${JSON.stringify(text)}: ${problem}; ${EXAMPLES}`);
  };
  if (typeof text !== 'string') return fail('a rule must be a string');
  const rule = text.trim();
  if (rule === '') return fail('it is empty');
  const open = rule.indexOf('(');
  const name = (open === -1 ? rule : rule.slice(0, open)).trim();
  if (name === '') return fail('the tool name before "(" is missing');
  if (!NAME_GLOB.test(name)) {
    return fail(`the tool name ${JSON.stringify(name)} may only hold letters, digits, "_", "-" and the glob characters * ? [ ] { } ,`);
  }
  if (open === -1) return new PermissionRule(name, undefined);
  if (!rule.endsWith(')')) return fail('the argument pattern is not closed: end the rule with ")"');
  const argument = rule.slice(open + 1, -1).trim();
  if (argument === '') return fail('the argument pattern is empty: drop the parentheses to match every call of the tool');
  if (!balanced(argument)) return fail('the parentheses in the argument pattern are unbalanced');
  return new PermissionRule(name, argument);
}

/** True when `(` and `)` outside quotes pair up. */
function balanced(text: string): boolean {
  let depth = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '\\') i++;
    else if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

/**
 * A path pattern as a picomatch glob, with gitignore's reading: a pattern without `/`
 * matches at any depth (`*.pem`, `.env`); one with `/` is anchored at the workspace root
 * (a leading `/` only anchors); and a pattern naming a folder covers everything in it.
 */
function pathGlob(pattern: string): string {
  let p = pattern.replace(/\\/g, '/');
  while (p.startsWith('./')) p = p.slice(2);
  const anchored = p.startsWith('/');
  p = p.replace(/^\/+/, '').replace(/\/+$/, '');
  if (p === '') p = '**';
  if (!anchored && !p.includes('/')) p = `**/${p}`;
  return p.endsWith('/**') || p === '**' ? p : `${p}/**`;
}

/**
 * A command pattern as a regular expression: `*` matches any characters, the match starts
 * at the command's start, and a pattern not ending in `*` must end where a word does
 * (`git status` matches `git status -s`, never `git statusx`). The `cmd:*` prefix form
 * of other harnesses is read as `cmd`.
 */
function commandRegex(pattern: string): RegExp {
  let p = normalizeCommand(pattern);
  if (p.endsWith(':*')) p = p.slice(0, -2).trimEnd();
  const body = p
    .split('*')
    .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${body}${p.endsWith('*') ? '' : '(?=\\s|$)'}`);
}

/**
 * A tool's path subject as path rules compare it: `/` separators, `.` and `..` resolved,
 * no leading `./`. `outside` is true when it leaves the workspace (absolute, or `../…`).
 */
export function normalizeSubjectPath(subject: string): { path: string; outside: boolean } {
  const path = posix.normalize(subject.replace(/\\/g, '/')).replace(/^\.\//, '');
  const outside = path.startsWith('/') || path === '..' || path.startsWith('../') || /^[A-Za-z]:\//.test(path);
  return { path: path === '.' ? '' : path, outside };
}
