/**
 * What `rein run` and `rein chat` put around the model: the project of the folder
 * (`openProject`: workspace tools, MCP servers, the permission policy, skills, rules, memory)
 * as the flags choose it, and approvals at the terminal. Every loader reports problems as
 * notices and the rest still starts; only a bad flag is an error.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { ReinError } from '../errors.js';
import { openProject, type Project } from '../project/open.js';
import type { Tool } from '../tools/types.js';
import { approvalPrompt } from './approval-prompt.js';
import { sandboxFromFlags, type AgentFlagValues } from './agent-flags.js';
import type { CliIO } from './io.js';

/** The pieces around one CLI session's agent: the project as the flags open it; `close()` stops what was started. */
export type Workbench = Project;

/** How the workbench may reach a person. */
export interface WorkbenchPeople {
  /** Asks one question and resolves with the line typed; absent when nobody can answer. */
  question?: (text: string) => Promise<string>;
}

/**
 * Builds the workbench from the flags. `baseTools` are the seed tools (or none with
 * `--no-tools`); workspace tools and MCP join them unless `--no-tools`.
 */
export async function openWorkbench(
  values: AgentFlagValues,
  io: CliIO,
  baseTools: Tool[],
  people: WorkbenchPeople = {},
): Promise<Workbench> {
  const cwd = resolve(values.root ?? process.cwd());
  const home = io.env.HOME ?? homedir();
  const noTools = values['no-tools'] === true;
  const { permissionsFromFlags } = await import('../permissions/config.js');

  // Flags are checked first: a bad rule is a usage error before anything starts.
  const fromFlags = permissionsFromFlags({
    ...(values.allow ? { allow: values.allow } : {}),
    ...(values.ask ? { ask: values.ask } : {}),
    ...(values.deny ? { deny: values.deny } : {}),
    ...(values.mode === undefined ? {} : { mode: values.mode }),
  });
  const allowedTools = values.tools === undefined ? undefined : splitList(values.tools);
  if (allowedTools && allowedTools.length === 0)
    throw new ReinError('config', 'fatal', '--tools needs at least one tool name (or use --no-tools)');

  const project = await openProject({
    root: cwd,
    home,
    env: io.env,
    // --no-tools sends no tool at all: not even the skill, memory or paging tools.
    tools: noTools ? false : baseTools,
    ...(noTools ? {} : { sandbox: sandboxFromFlags(values) }),
    skills: !values['no-skills'],
    mcp: !values['no-mcp'],
    memory: values.memory === true,
    permissions: fromFlags,
    ...(allowedTools ? { allowedTools } : {}),
  });
  const { policy } = project;
  const options = { ...project.options };
  if (people.question) {
    const { suggestSessionRules } = await import('../permissions/suggest.js');
    options.hooks = {
      onConfirm: approvalPrompt({
        io,
        question: people.question,
        always: (call, tool) => {
          const suggested = suggestSessionRules(call, tool);
          // Some calls no narrow rule can cover (a command with `$(…)` or a redirection):
          // allowing the whole tool would be far more than was asked, so only this call runs.
          if (suggested.length === 0) return 'nothing more than this call (no rule can cover calls like it safely)';
          for (const rule of suggested) policy.allowForSession(rule);
          return suggested.join(', ');
        },
      }),
    };
  }
  return { ...project, options };
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
