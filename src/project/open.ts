/**
 * What rein puts around a model in a project folder, as `rein run` does: the workspace tools
 * (the shell in a sandbox), the MCP servers of `.mcp.json`, the permission policy of the
 * settings files, skills, project rules (AGENTS.md …) and memory. Every loader reports its
 * problems as notices and the rest still starts: one broken SKILL.md or MCP entry never
 * stops the agent.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { ReinError } from '../errors.js';
import type { AgentOptions } from '../loop/options.js';
import type { McpHost, McpHostOptions } from '../mcp/host.js';
import type { MemoryStore } from '../memory/types.js';
import type { PermissionOptions, PermissionPolicy } from '../permissions/policy.js';
import type { Skill } from '../skills/types.js';
import type { Tool } from '../tools/types.js';
import type { SandboxLevel } from '../workspace/sandbox.js';
import { isReadTool, readToolsOf } from './read-tools.js';

/** Options of {@link openProject}. */
export interface ProjectOptions {
  /** The project folder: the workspace root, where settings, skills, rules and `.mcp.json` are looked up (default `process.cwd()`). */
  root?: string;
  /** The home folder of the user's own settings, skills, rules and MCP servers (default `$HOME`, else `os.homedir()`). */
  home?: string;
  /** The environment MCP servers are started with and their `${VAR}`s read from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /**
   * Tools of your own, offered beside the project's. `false`: no tool at all, not even the
   * workspace, skill, memory, MCP or paging tools (`rein run --no-tools`).
   */
  tools?: Tool[] | false;
  /** The workspace tools (`read_file` … `bash`), confined to `root` (default true). */
  workspaceTools?: boolean;
  /** Where the `bash` tool runs its commands: `workspace-write` (default), `read-only` or `off`; `network` lets them reach it (default false). */
  sandbox?: { level?: SandboxLevel; network?: boolean };
  /** The skills of `.rein/skills/` and `~/.rein/skills/` (default true). */
  skills?: boolean;
  /** The MCP servers of `.mcp.json` and `~/.rein/mcp.json` (default true). */
  mcp?: boolean;
  /** Keep notes in `.rein/memory.db` (`remember` / `recall`; writing a note does not ask). Default false. */
  memory?: boolean;
  /** The rules of the permission policy, over those of the settings files (flags are this layer in the CLI). */
  permissions?: PermissionOptions;
  /** Least privilege: the only tools, by name or `*` glob, the agent offers and runs. */
  allowedTools?: string[];
  /**
   * Answers MCP servers' elicitations (a person at a terminal). Without it, a server's
   * question during a run's tool call pauses the run (with a store; `agent.answerElicitation`
   * or `rein approve --accept` answers it), and elsewhere is answered `cancel`.
   */
  elicit?: McpHostOptions['elicit'];
  /** Answers MCP servers' sampling requests (`modelSampler`); without it servers cannot ask. */
  sample?: McpHostOptions['sample'];
}

/** A project opened for agents; `close()` stops what was started (MCP servers, the memory database). */
export interface Project {
  /** The project folder (absolute). */
  root: string;
  /** Options to spread into an agent's: tools, tool sources, the policy, rules, skills, memory. */
  options: Partial<AgentOptions>;
  /** The permission policy the agent's `approvalPolicy` asks (settings files, then `permissions`). */
  policy: PermissionPolicy;
  /** The MCP host, when MCP servers are on. */
  mcp?: McpHost;
  skills: Skill[];
  memory?: MemoryStore & { close(): void };
  /** Problems found while loading (a broken skill, a bad MCP entry, a bad rule file, no sandbox). */
  notices: string[];
  close(): Promise<void>;
}

/**
 * Opens the project at `options.root` as `rein run` does in that folder.
 *
 * @example
 * const project = await openProject({ root: '/path/to/repo' });
 * for (const notice of project.notices) console.warn(notice);
 * const agent = new Agent({ model: 'openai/gpt-4o-mini', ...project.options });
 * try { console.log((await agent.run('What does this repository do?')).text); } finally { await project.close(); }
 */
export async function openProject(options: ProjectOptions = {}): Promise<Project> {
  const cwd = resolve(options.root ?? process.cwd());
  const env = options.env ?? process.env;
  const home = options.home ?? env.HOME ?? homedir();
  const notices: string[] = [];
  const noTools = options.tools === false;
  const level = options.sandbox?.level ?? 'workspace-write';
  const network = options.sandbox?.network === true;
  if (network && level === 'off')
    throw new ReinError('config', 'fatal', 'sandbox.network needs a sandbox: with sandbox.level "off" commands reach the network anyway');
  const [{ createPermissionPolicy }, { loadPermissionsConfig, mergePermissionOptions }] = await Promise.all([
    import('../permissions/policy.js'),
    import('../permissions/config.js'),
  ]);

  const loaded = await loadPermissionsConfig({ cwd, home });
  for (const d of loaded.diagnostics) notices.push(`${d.file}${d.key ? ` (${d.key})` : ''}: ${d.message}`);
  // Notes were asked for: the agent's own memory is not a change to the project, so
  // writing a note does not ask (a deny rule still refuses it).
  const memoryRules = options.memory ? { allow: ['remember'] } : {};
  const policy = createPermissionPolicy(mergePermissionOptions(options.permissions ?? {}, loaded.options, memoryRules));

  const tools: Tool[] = options.tools === false ? [] : [...(options.tools ?? [])];
  if (!noTools && options.workspaceTools !== false) {
    const [{ createWorkspaceTools }, { sandboxUnavailable }] = await Promise.all([
      import('../workspace/index.js'),
      import('../workspace/sandbox.js'),
    ]);
    tools.push(...createWorkspaceTools({ root: cwd, bash: { sandbox: { level, network, home } } }));
    if (level !== 'off') {
      // Said once, here; each command is then refused with the same reason.
      const why = await sandboxUnavailable();
      if (why !== undefined)
        notices.push(
          `shell commands run in a sandbox, and ${why}: the bash tool refuses every command (install bubblewrap, or pass --sandbox off to run them unconfined)`,
        );
    }
  }

  let skills: Skill[] = [];
  if (!noTools && options.skills !== false) {
    const { loadSkills } = await import('../skills/load.js');
    const found = await loadSkills({ cwd, home });
    skills = found.skills;
    for (const d of found.diagnostics) notices.push(`skill ${d.file}: ${d.reason}`);
  }

  const { loadProjectRules } = await import('../context/rules.js');
  const rules = await loadProjectRules({ cwd, home });
  for (const d of rules.diagnostics) notices.push(`rules ${d.file}: ${d.reason}`);

  let memory: Project['memory'];
  if (options.memory && !noTools) {
    const { openMemory } = await import('../memory/sqlite-memory.js');
    memory = await openMemory({ cwd });
  }

  let mcp: McpHost | undefined;
  if (!noTools && options.mcp !== false) {
    try {
      const { startMcp } = await import('../mcp/host.js');
      mcp = await startMcp({
        cwd,
        home,
        env,
        ...(options.elicit ? { elicit: options.elicit } : { pauseElicitations: true }),
        ...(options.sample ? { sample: options.sample } : {}),
      });
    } catch (error) {
      // Nothing opened so far may outlive a failed start: the memory database is closed.
      memory?.close();
      throw error;
    }
    for (const d of mcp.diagnostics) notices.push(`mcp ${d.file ? `${d.file} ` : ''}${d.key ? `(${d.key}) ` : ''}${d.message}`);
    for (const s of mcp.status()) {
      // A broken entry (transport unknown) was just reported as a diagnostic. A server whose
      // first attempt failed is `reconnecting` here, since the host keeps retrying it.
      if (s.transport === 'unknown' || (s.state !== 'failed' && s.state !== 'reconnecting')) continue;
      const retrying = s.state === 'reconnecting' ? ' (retrying in the background)' : '';
      notices.push(`mcp server "${s.name}" did not start: ${s.lastError ?? 'no reason given'}${retrying}`);
    }
  }

  // Plan mode runs only read tools: the model is offered only those (a write it cannot make is a wasted step).
  const planOnly = policy.mode === 'plan';
  const offered = planOnly ? tools.filter(isReadTool) : tools;
  const source = mcp && planOnly ? readToolsOf(mcp) : mcp;
  const agentOptions: Partial<AgentOptions> = {
    tools: offered,
    ...(source ? { toolSources: [source] } : {}),
    ...(options.allowedTools ? { allowedTools: options.allowedTools } : {}),
    approvalPolicy: (call, tool) => policy.decide(call, tool),
    ...(rules.text ? { context: { rules: rules.text } } : {}),
    ...(skills.length > 0 ? { skills } : {}),
    ...(memory ? { memory } : {}),
    ...(noTools ? {} : { toolOutputPaging: true }),
    // MCP servers can bring dozens of tools: past 40, send a relevant subset and search_tools.
    ...(mcp && mcp.status().length > 0 ? { toolSelection: { maxTools: 40 } } : {}),
  };
  return {
    root: cwd,
    options: agentOptions,
    policy,
    ...(mcp ? { mcp } : {}),
    skills,
    ...(memory ? { memory } : {}),
    notices,
    close: async () => {
      await mcp?.close();
      memory?.close();
    },
  };
}
