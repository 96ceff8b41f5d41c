/** An agent built in a project folder: {@link openProject}'s pieces around your options. */
import { Agent } from '../loop/agent.js';
import type { AgentOptions } from '../loop/options.js';
import { openProject, type Project, type ProjectOptions } from './open.js';

/** What {@link agentFromProject} gives: the agent, its project, and `close()` for when you are done. */
export interface ProjectAgent {
  agent: Agent;
  project: Project;
  /** Closes the project (MCP servers, the memory database); call it once the agent's runs are over. */
  close(): Promise<void>;
}

/**
 * Builds an agent in the project at `project.root` as `rein run` does there: `options.tools`
 * join the workspace and MCP tools, the project's rules are added to `options.context`,
 * and the policy of the settings files decides every call. What `options` sets itself
 * (`approvalPolicy`, `skills`, `memory`, `allowedTools`, `toolSelection`,
 * `toolOutputPaging`, `context.rules`) wins over the project's. The project's notices are
 * in `project.notices`.
 *
 * @example
 * const { agent, project, close } = await agentFromProject({ model: 'openai/gpt-4o-mini' }, { root: '.' });
 * for (const notice of project.notices) console.warn(notice);
 * try { console.log((await agent.run('Which tests cover the parser?')).text); } finally { await close(); }
 */
export async function agentFromProject(
  options: AgentOptions,
  project: Omit<ProjectOptions, 'tools'> & { tools?: false } = {},
): Promise<ProjectAgent> {
  const opened = await openProject({ ...project, tools: project.tools === false ? false : (options.tools ?? []) });
  try {
    const agent = new Agent(withProject(options, opened));
    return { agent, project: opened, close: () => opened.close() };
  } catch (error) {
    // The caller never gets the project: what it started stops here.
    await opened.close();
    throw error;
  }
}

/** `options` with the project's pieces: lists joined, the options' own choices kept. */
function withProject(options: AgentOptions, project: Project): AgentOptions {
  const { tools, toolSources, context, ...rest } = project.options;
  const sources = [...(options.toolSources ?? []), ...(toolSources ?? [])];
  const rules = context && typeof context === 'object' ? context.rules : undefined;
  const merged: AgentOptions = { ...rest, ...options, tools: tools ?? [] };
  if (sources.length > 0) merged.toolSources = sources;
  if (rules !== undefined && options.context !== false) merged.context = { rules, ...options.context };
  return merged;
}
