/**
 * The permission decision on an MCP server's sampling request (`sampling/createMessage`:
 * the server asks rein's model for an answer, which costs tokens and money on the run's
 * budget). Rules name it `mcp_sampling`, with an optional glob on the server's name:
 * `mcp_sampling` (every server), `mcp_sampling(docs)`, `mcp_sampling(git*)`. A sampling
 * request is not a tool call, so tool-name globs (`*`, `docs__*`) do not cover it: only
 * rules that name `mcp_sampling` do. Precedence as for tools: deny rules → yolo mode →
 * session allow rules → ask rules → allow rules → the default, which is `ask`.
 */
import { loadPicomatch } from '../workspace/patterns.js';
import type { PermissionPolicy, PermissionVerdict } from './policy.js';
import { parsePermissionRule } from './rule.js';

/** The rule name of a sampling request. */
export const SAMPLING_RULE = 'mcp_sampling';

/**
 * Decides whether `server` may have the model answer its sampling request.
 *
 * @example
 * const policy = createPermissionPolicy({ allow: ['mcp_sampling(docs)'] });
 * decideSampling(policy, 'docs').decision; // 'allow'
 * decideSampling(policy, 'web').decision;  // 'ask'
 */
export function decideSampling(policy: PermissionPolicy, server: string): PermissionVerdict {
  const rules = policy.toJSON();
  const about = `MCP server "${server}"'s sampling requests`;
  const find = (texts: readonly string[]): string | undefined => texts.find((text) => meets(text, server));
  const denied = find([...rules.deny, ...rules.sessionDeny]);
  if (denied !== undefined) {
    const session = rules.deny.includes(denied) ? '' : 'session: ';
    return { decision: 'deny', rule: `${session}deny ${denied}`, reason: `the rule "${session}deny ${denied}" refuses ${about}` };
  }
  if (policy.isYolo) return { decision: 'allow', rule: 'mode yolo: allow all', reason: 'yolo mode allows what no deny rule refuses' };
  const session = find(rules.sessionAllow);
  if (session !== undefined)
    return { decision: 'allow', rule: `session: allow ${session}`, reason: `allowed by the rule "session: allow ${session}"` };
  const asked = find(rules.ask);
  if (asked !== undefined) return { decision: 'ask', rule: `ask ${asked}`, reason: `the rule "ask ${asked}" needs a person's approval` };
  const allowed = find(rules.allow);
  if (allowed !== undefined) return { decision: 'allow', rule: `allow ${allowed}`, reason: `allowed by the rule "allow ${allowed}"` };
  return {
    decision: 'ask',
    rule: 'default: sampling asks',
    reason: `${about} need a person's approval unless a rule says otherwise`,
  };
}

/** Whether a rule's text names sampling and, with a pattern, the server. */
function meets(text: string, server: string): boolean {
  const rule = parsePermissionRule(text);
  if (rule.tool.toLowerCase() !== SAMPLING_RULE) return false;
  if (rule.argument === undefined) return true;
  return loadPicomatch()(rule.argument, { nocase: true })(server);
}
