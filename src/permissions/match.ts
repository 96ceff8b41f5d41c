/**
 * Matching the rules of one tool against one call: what the call's subject is (a path,
 * a command line, nothing) and which rules it meets. Kept apart from the policy so the
 * precedence in `policy.ts` reads as a list.
 */
import type { Tool } from '../tools/types.js';
import { analyzeCommand, type CommandAnalysis } from './command.js';
import { normalizeCommand } from './command-part.js';
import { normalizeSubjectPath, type PermissionRule } from './rule.js';

/** A rule in a policy: its effect, where it came from, and how a verdict names it. */
export interface PolicyEntry {
  effect: 'allow' | 'ask' | 'deny';
  rule: PermissionRule;
  /** As verdicts show it: `deny bash(rm *)`, `session: allow bash(git push)`. */
  label: string;
  session: boolean;
}

/** What argument patterns of one call are matched against. */
export type CallSubject =
  | { kind: 'none'; text: undefined }
  | {
      kind: 'path';
      text: string;
      path: string;
      outside: boolean /** The path with leading `/` and `../` dropped: what deny and ask rules also try. */;
      inner: string;
    }
  | {
      kind: 'command';
      text: string;
      analysis: CommandAnalysis /** Whole line, parts and hidden forms: what deny and ask rules try. */;
      candidates: string[];
    };

/** The text a tool names as a call's subject; undefined when it has none or cannot read it. */
export function subjectText(tool: Tool, args: Record<string, unknown>): string | undefined {
  let text: unknown;
  try {
    text = tool.permissionSubject?.(args);
  } catch {
    return undefined;
  }
  return typeof text === 'string' && text.trim() !== '' ? text : undefined;
}

/** Reads the subject of a call; a subject that cannot be read is `none`. */
export function subjectOf(tool: Tool, args: Record<string, unknown>): CallSubject {
  const text = subjectText(tool, args);
  if (text === undefined) return { kind: 'none', text: undefined };
  if (tool.risk === 'execute') {
    const analysis = analyzeCommand(text);
    return { kind: 'command', text, analysis, candidates: [normalizeCommand(text), ...analysis.parts, ...analysis.hidden] };
  }
  const { path, outside } = normalizeSubjectPath(text);
  return { kind: 'path', text, path, outside, inner: path.replace(/^(\/+|\.\.\/)+/, '') };
}

/** True when a deny or ask rule meets the call: by name alone, or by any form of its subject. */
export function restricts(entry: PolicyEntry, subject: CallSubject): boolean {
  const rule = entry.rule;
  if (rule.argument === undefined) return true;
  if (subject.kind === 'path') return rule.matchesPath(subject.path) || rule.matchesPath(subject.inner);
  if (subject.kind === 'command') return subject.candidates.some((c) => rule.matchesCommand(c));
  return false;
}

/** True when an allow rule meets this one simple command (or this path). */
function allowsOne(entry: PolicyEntry, subject: CallSubject, part: string): boolean {
  const rule = entry.rule;
  if (rule.argument === undefined) return true;
  if (subject.kind === 'path') return !subject.outside && rule.matchesPath(subject.path);
  return rule.matchesCommand(part);
}

/**
 * The allow entries that together allow the call, or undefined. A rule without an argument
 * pattern allows every call; otherwise a command line needs every part allowed and nothing
 * unsafe in it, and a path must be inside the workspace.
 */
export function coverage(entries: readonly PolicyEntry[], subject: CallSubject): PolicyEntry[] | undefined {
  if (entries.length === 0) return undefined;
  const whole = entries.find((e) => e.rule.argument === undefined);
  if (whole) return [whole];
  if (subject.kind === 'none') return undefined;
  if (subject.kind === 'path') {
    const found = entries.find((e) => allowsOne(e, subject, subject.path));
    return found ? [found] : undefined;
  }
  const { parts, unsafe } = subject.analysis;
  if (unsafe || parts.length === 0) return undefined;
  return coverEvery(entries, subject, parts);
}

/**
 * Whether session allow rules outrank the ask rules that met the call: a session rule
 * without pattern does; otherwise every part an ask rule met (all parts, when the ask rule
 * has no pattern) must be allowed by a session rule, and the whole call by allow rules.
 */
export function sessionOverride(
  session: readonly PolicyEntry[],
  all: readonly PolicyEntry[],
  asks: readonly PolicyEntry[],
  subject: CallSubject,
): PolicyEntry[] | undefined {
  if (session.length === 0) return undefined;
  const whole = session.find((e) => e.rule.argument === undefined);
  if (whole) return [whole];
  if (subject.kind === 'path') return coverage(session, subject);
  if (subject.kind !== 'command' || !coverage(all, subject)) return undefined;
  const wholeAsk = asks.some((e) => e.rule.argument === undefined);
  const parts = subject.analysis.parts.filter((p) => wholeAsk || asks.some((e) => e.rule.matchesCommand(p)));
  if (parts.length === 0) return undefined;
  return coverEvery(session, subject, parts);
}

/** The entries that allow every one of `parts` (each entry once), or undefined when one part is not allowed. */
function coverEvery(entries: readonly PolicyEntry[], subject: CallSubject, parts: readonly string[]): PolicyEntry[] | undefined {
  const used: PolicyEntry[] = [];
  for (const part of parts) {
    const found = entries.find((e) => allowsOne(e, subject, part));
    if (!found) return undefined;
    if (!used.includes(found)) used.push(found);
  }
  return used;
}

/**
 * Why allow rules with patterns did not allow a call, for the reason a person reads:
 * `command substitution is never allowed by a pattern rule`, `"rm x" matches no allow rule`.
 */
export function whyNotCovered(entries: readonly PolicyEntry[], subject: CallSubject): string | undefined {
  if (entries.length === 0 || subject.kind === 'none') return undefined;
  if (subject.kind === 'path') {
    return subject.outside ? `${quote(subject.path)} is outside the workspace, and no path rule allows that` : undefined;
  }
  if (subject.analysis.unsafe) return `${subject.analysis.unsafe} is never allowed by a pattern rule`;
  const missing = subject.analysis.parts.find((p) => !entries.some((e) => allowsOne(e, subject, p)));
  return missing === undefined ? undefined : `${quote(missing)} matches no allow rule`;
}

/** A subject as reasons quote it: JSON-quoted, cut at 120 characters. */
export function quote(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 117)}...` : text);
}
