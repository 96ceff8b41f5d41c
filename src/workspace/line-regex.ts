/**
 * The regular expressions a model gives `grep` run on RE2 (the re2js port): matching
 * takes time linear in the line, so no pattern — `^(a+)+$` over a line of `a`s is the
 * classic — can pin the process. V8's backtracking engine cannot be interrupted from
 * JavaScript, so a timeout or SIGTERM would never get a turn (see DECISIONS.md, "Patterns
 * from the model"). RE2 has no lookaround and no backreferences; those are refused with
 * an error that says so.
 */
import type { RE2JS } from 're2js';
import { ReinError } from '../errors.js';

/** A compiled search pattern: where it first matches in a line, or -1. */
export interface LinePattern {
  search(line: string): number;
}

let engine: Promise<typeof RE2JS> | undefined;

/**
 * Compiles a JavaScript-style pattern (named groups, `\uXXXX`, `\p{L}` work) for
 * {@link LinePattern} search. The engine (260 KB) is imported on the first search, not
 * when rein is.
 */
export async function compileLinePattern(pattern: string, ignoreCase: boolean): Promise<LinePattern> {
  const RE2JS = await (engine ??= import('re2js').then((module) => module.RE2JS));
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(RE2JS.translateRegExp(pattern), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    throw new ReinError('invalid_arguments', 'correctable', describe(pattern, error), { cause: error });
  }
  return {
    search(line) {
      // test() runs the DFA alone; the position is asked only of lines that match.
      if (!regex.test(line)) return -1;
      const matcher = regex.matcher(line);
      return matcher.find() ? matcher.start() : -1;
    },
  };
}

function describe(pattern: string, error: unknown): string {
  const why = String((error as Error)?.message ?? error).replace(/^error parsing regexp: /, '');
  const unsupported = /\(\?<?[=!]/.test(pattern)
    ? ' Lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported: match the surrounding text instead.'
    : /\\[1-9]/.test(pattern)
      ? ' Backreferences (\\1) are not supported.'
      : '';
  return (
    `invalid regular expression ${JSON.stringify(pattern)}: ${why}.${unsupported} ` +
    'Patterns use RE2 syntax (JavaScript syntax without lookaround or backreferences; repeat counts up to 1000): ' +
    'escape special characters such as ( [ { . * + ? with a backslash to match them literally.'
  );
}
