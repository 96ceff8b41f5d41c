/** What reading a shell command finds: its parts, what hides in them, and why no rule may allow it. */

/** What a command line is made of, for matching permission rules against it. */
export interface CommandAnalysis {
  /**
   * The simple commands of the line in order, whitespace collapsed, with leading reserved
   * words (`then`, `do`, `!`, `{` …) removed: what an allow rule must cover, every one.
   */
  parts: string[];
  /**
   * Further forms deny and ask rules also see: each part without leading `VAR=value`
   * assignments, after wrapper commands (`sudo`, `env`, `timeout` …), unquoted, with the
   * program's directory removed; and the commands inside `$(…)`, backticks, `<(…)`,
   * `sh -c '…'`, `eval` and here-documents.
   */
  hidden: string[];
  /** Why no pattern rule may allow this line, when something in it forbids it. */
  unsafe?: string;
  /**
   * Why the line cannot be read as literal commands at all, so that no rule can be checked
   * against it: a `$`-expansion, substitution or glob in command position, `eval`, `exec`,
   * `source`, `coproc`, `alias`, a function definition, a shell or an interpreter given
   * code, commands nested too deeply. Such a line asks, and in `yolo` a deny rule of the
   * tool refuses it.
   */
  opaque?: string;
}

/** Something in the line forbids any pattern rule from allowing it on its own. */
export function markUnsafe(analysis: CommandAnalysis, why: string): void {
  analysis.unsafe ??= why;
}

/** What cannot be read is never allowed by a pattern either. */
export function markOpaque(analysis: CommandAnalysis, why: string): void {
  analysis.opaque ??= why;
  markUnsafe(analysis, why);
}
