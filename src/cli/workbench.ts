/**
 * What `rein run` and `rein chat` put around the model: the project of the folder
 * (`openProject`: workspace tools, MCP servers, the permission policy, skills, rules, memory)
 * as the flags choose it, and approvals at the terminal. Every loader reports problems as
 * notices and the rest still starts; only a bad flag is an error.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { ReinError } from '../errors.js';
import type { McpSamplingRequest } from '../mcp/types.js';
import type { ModelRef } from '../model/types.js';
import type { PermissionPolicy } from '../permissions/policy.js';
import { openProject, type Project, type ProjectOptions } from '../project/open.js';
import type { Tool } from '../tools/types.js';
import { approvalPrompt } from './approval-prompt.js';
import { sandboxFromFlags, type AgentFlagValues } from './agent-flags.js';
import type { CliIO } from './io.js';

/** The pieces around one CLI session's agent: the project as the flags open it; `close()` stops what was started. */
export type Workbench = Project & {
  /** Sets the model that answers MCP servers' sampling requests: the agent's, once it is built. */
  sampleWith?: (model: ModelRef) => void;
};

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

  // MCP servers' questions and sampling requests: a person at a terminal answers (with
  // none, a question, and a sampling request the policy asks about, pause the run).
  const mcpPeople = await mcpAnswerers(io, people);
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
    ...mcpPeople.options,
  });
  const { policy } = project;
  mcpPeople.decideWith(policy);
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
  return { ...project, options, sampleWith: mcpPeople.sampleWith };
}

/**
 * The `elicit` and `sample` hooks of the project's MCP host: at a terminal the person
 * answers a server's question; each sampling request is decided by the permission policy
 * (`mcp_sampling` rules; `ask` by default), the person allows or refuses what it asks about
 * (with no terminal the run pauses for `rein approve`), and the agent's model answers (its
 * usage counted in the run).
 */
async function mcpAnswerers(
  io: CliIO,
  people: WorkbenchPeople,
): Promise<{
  options: Pick<ProjectOptions, 'elicit' | 'sample'>;
  sampleWith: (model: ModelRef) => void;
  decideWith: (policy: PermissionPolicy) => void;
}> {
  let model: ModelRef | undefined;
  let policy: PermissionPolicy | undefined;
  const question = people.question;
  const options: Pick<ProjectOptions, 'elicit' | 'sample'> = {
    sample: async (request) => {
      if (!model) throw new ReinError('permission_denied', 'fatal', 'no model answers sampling requests here');
      const [{ modelSampler }, { decideSampling }] = await Promise.all([
        import('../mcp/model-sampler.js'),
        import('../permissions/sampling.js'),
      ]);
      const decision = policy ? (r: McpSamplingRequest) => decideSampling(policy as PermissionPolicy, r.server) : 'ask';
      return modelSampler({ model, decision, ...(question ? { ask: askSampling(io, question) } : { pause: true }) })(request);
    },
  };
  if (question) {
    const { terminalElicit } = await import('./mcp-elicit.js');
    options.elicit = terminalElicit(io, question);
  }
  return { options, sampleWith: (m) => (model = m), decideWith: (p) => (policy = p) };
}

/** Shows a sampling request (its size and last message) and asks whether the model may answer it. */
function askSampling(io: CliIO, question: (text: string) => Promise<string>): (request: McpSamplingRequest) => Promise<boolean> {
  return async (request) => {
    const { messages, maxTokens } = request.params;
    const last = messages.at(-1)?.content as { type?: string; text?: string } | undefined;
    const text = last?.type === 'text' && typeof last.text === 'string' ? last.text : '';
    io.stderr.write(
      `\nMCP server "${request.server}" asks the model for an answer (${messages.length} message${messages.length === 1 ? '' : 's'}, up to ${maxTokens} tokens)${text ? `:\n  ${text.length > 200 ? `${text.slice(0, 197)}...` : text}` : ''}\n`,
    );
    const answer = (await question('allow? [y]es, [n]o: ')).trim().toLowerCase();
    return answer.startsWith('y');
  };
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
