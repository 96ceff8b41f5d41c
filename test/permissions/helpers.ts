/**
 * Shared set-up of the permission tests: stand-ins for the workspace and MCP tools (declared
 * as the real ones are: name, risk, permission subject) and a case-table runner.
 */
import { expect, it } from 'vitest';
import { createPermissionPolicy, type PermissionDecision, type PermissionOptions } from '../../src/permissions/policy.js';
import { defineTool } from '../../src/tools/define.js';
import type { Tool, ToolRisk } from '../../src/tools/types.js';

function tool(name: string, risk: ToolRisk | undefined, subject?: (args: Record<string, unknown>) => string | undefined): Tool {
  return defineTool({
    name,
    description: `The ${name} stand-in.`,
    parameters: { type: 'object', properties: {}, additionalProperties: true },
    ...(risk ? { risk } : {}),
    ...(subject ? { permissionSubject: subject } : {}),
    execute: () => 'ok',
  });
}

const path = (args: Record<string, unknown>) => (typeof args.path === 'string' ? args.path : undefined);
const command = (args: Record<string, unknown>) => (typeof args.command === 'string' ? args.command : undefined);

export const readFile = tool('read_file', 'read', path);
export const writeFile = tool('write_file', 'write', path);
export const editFile = tool('edit_file', 'write', path);
export const grep = tool('grep', 'read', path);
export const bash = tool('bash', 'execute', command);
export const issue = tool('github__create_issue', undefined);
export const search = tool('github__search', 'read');
export const memory = tool('memory__write', 'write');
export const deploy = tool('deploy', 'execute');

export const all: Record<string, Tool> = Object.fromEntries(
  [readFile, writeFile, editFile, grep, bash, issue, search, memory, deploy].map((t) => [t.name, t]),
);

/** [what, options, tool, arguments, decision, the rule the verdict names] */
export type Case = [string, PermissionOptions, string, Record<string, unknown>, PermissionDecision, string];

/** One decision of a fresh policy. */
export function decide(options: PermissionOptions, name: string, args: Record<string, unknown>) {
  return createPermissionPolicy(options).decide({ name, arguments: args }, all[name]);
}

/** One test per case: the decision and the rule named. */
export function table(cases: Case[]) {
  it.each(cases)('%s', (_what, options, name, args, decision, rule) => {
    expect(decide(options, name, args)).toMatchObject({ decision, rule });
  });
}

export const cmd = (command: string) => ({ command });
export const at = (path: string) => ({ path });
