/**
 * The rules a person's "always, for this session" answer should add, so the same kind of
 * call is not asked about again — and nothing broader.
 */
import type { Tool } from '../tools/types.js';
import { analyzeCommand } from './command.js';
import { subjectText } from './match.js';
import { normalizeSubjectPath } from './rule.js';

/**
 * Rules that would allow calls like this one, for {@link PermissionPolicy.allowForSession}:
 * - a command: one rule per simple command, naming its program and, when the second word
 *   looks like a subcommand, that too (`git push origin main` → `bash(git push)`, which
 *   also allows further arguments); empty when the line holds something no pattern rule
 *   ever allows (command substitution, writing to a file, a `VAR=value` prefix);
 * - a path: the exact path (`write_file(src/a.ts)`); empty outside the workspace;
 * - otherwise the tool's name.
 *
 * @example
 * suggestSessionRules({ name: 'bash', arguments: { command: 'git add -A && git commit -m x' } }, bash);
 * // ['bash(git add)', 'bash(git commit)']
 */
export function suggestSessionRules(call: { name: string; arguments: Record<string, unknown> }, tool: Tool): string[] {
  const subject = subjectText(tool, call.arguments);
  if (subject === undefined) return [call.name];
  if (tool.risk !== 'execute') {
    const { path, outside } = normalizeSubjectPath(subject);
    return outside || path === '' ? [] : [`${call.name}(${path})`];
  }
  const analysis = analyzeCommand(subject);
  if (analysis.unsafe) return [];
  const rules: string[] = [];
  for (const part of analysis.parts) {
    const words = part.split(' ');
    const program = words[0] as string;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(program) || /[()*]/.test(program)) return [];
    const sub = words[1];
    const prefix = sub !== undefined && /^[a-z][a-z0-9:_-]*$/.test(sub) ? `${program} ${sub}` : program;
    const rule = `${call.name}(${prefix})`;
    if (!rules.includes(rule)) rules.push(rule);
  }
  return rules;
}
