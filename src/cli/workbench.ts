/**
 * What `rein run` and `rein chat` put around the model: the seed and workspace tools, the
 * MCP servers of `.mcp.json`, the permission policy (config files and flags), approvals at
 * the terminal, skills, project rules, memory. Every loader reports problems as notices
 * and the rest still starts; only a bad flag is an error.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { ReinError } from '../errors.js';
import type { AgentOptions } from '../loop/options.js';
import type { McpHost } from '../mcp/host.js';
import type { MemoryStore } from '../memory/types.js';
import type { PermissionPolicy } from '../permissions/policy.js';
import type { Skill } from '../skills/types.js';
import type { Tool, ToolSource } from '../tools/types.js';
import { approvalPrompt } from './approval-prompt.js';
import { sandboxFromFlags, type AgentFlagValues } from './agent-flags.js';
import type { CliIO } from './io.js';

/** The pieces around one CLI session's agent; `close()` stops what was started. */
export interface Workbench {
  /** The workspace root (absolute). */
  root: string;
  /** Options to spread into the agent's (beside the model options from the flags). */
  options: Partial<AgentOptions>;
  policy: PermissionPolicy;
  mcp?: McpHost;
  skills: Skill[];
  memory?: MemoryStore & { close(): void };
  /** Problems found while loading (a broken skill, a bad MCP entry, a bad rule file). */
  notices: string[];
  close(): Promise<void>;
}

/** How the workbench may reach a person. */
export interface WorkbenchPeople {
  /** Asks one question and resolves with the line typed; absent when nobody can answer. */
  question?: (text: string) => Promise<string>;
}

/**
 * Builds the workbench from the flags. `baseTools` are the seed tools (or none with
 * `--no-tools`); workspace tools and MCP join them unless `--no-tools`.
 */
export async function openWorkbench(values: AgentFlagValues, io: CliIO, baseTools: Tool[], people: WorkbenchPeople = {}): Promise<Workbench> {
  const cwd = resolve(values.root ?? process.cwd());
  const home = io.env.HOME ?? homedir();
  const notices: string[] = [];
  const noTools = values['no-tools'] === true;
  const [{ createPermissionPolicy }, { loadPermissionsConfig, mergePermissionOptions, permissionsFromFlags }] = await Promise.all([
    import('../permissions/policy.js'),
    import('../permissions/config.js'),
  ]);

  // Flags are checked first: a bad rule is a usage error before anything starts.
  const fromFlags = permissionsFromFlags({
    ...(values.allow ? { allow: values.allow } : {}),
    ...(values.ask ? { ask: values.ask } : {}),
    ...(values.deny ? { deny: values.deny } : {}),
    ...(values.mode === undefined ? {} : { mode: values.mode }),
  });
  const allowedTools = values.tools === undefined ? undefined : splitList(values.tools);
  if (allowedTools && allowedTools.length === 0) throw new ReinError('config', 'fatal', '--tools needs at least one tool name (or use --no-tools)');

  const loaded = await loadPermissionsConfig({ cwd, home });
  for (const d of loaded.diagnostics) notices.push(`${d.file}${d.key ? ` (${d.key})` : ''}: ${d.message}`);
  // --memory asked for notes to be kept: the agent's own memory is not a change to the
  // project, so writing a note does not ask (a deny rule still refuses it).
  const memoryRules = values.memory ? { allow: ['remember'] } : {};
  const policy = createPermissionPolicy(mergePermissionOptions(fromFlags, loaded.options, memoryRules));

  const tools: Tool[] = [...baseTools];
  if (!noTools) {
    const [{ createWorkspaceTools }, { sandboxUnavailable }] = await Promise.all([import('../workspace/index.js'), import('../workspace/sandbox.js')]);
    const { level, network } = sandboxFromFlags(values);
    tools.push(...createWorkspaceTools({ root: cwd, bash: { sandbox: { level, network, home } } }));
    if (level !== 'off') {
      // Said once, here; each command is then refused with the same reason.
      const why = await sandboxUnavailable();
      if (why !== undefined) notices.push(`shell commands run in a sandbox, and ${why}: the bash tool refuses every command (install bubblewrap, or pass --sandbox off to run them unconfined)`);
    }
  }

  let skills: Skill[] = [];
  // --no-tools sends no tool at all: not even the skill, memory or paging tools.
  if (!noTools && !values['no-skills']) {
    const { loadSkills } = await import('../skills/load.js');
    const found = await loadSkills({ cwd, home });
    skills = found.skills;
    for (const d of found.diagnostics) notices.push(`skill ${d.file}: ${d.reason}`);
  }

  const { loadProjectRules } = await import('../context/rules.js');
  const rules = await loadProjectRules({ cwd, home });
  for (const d of rules.diagnostics) notices.push(`rules ${d.file}: ${d.reason}`);

  let memory: Workbench['memory'];
  if (values.memory && !noTools) {
    const { openMemory } = await import('../memory/sqlite-memory.js');
    memory = await openMemory({ cwd });
  }

  let mcp: McpHost | undefined;
  if (!noTools && !values['no-mcp']) {
    try {
      const { startMcp } = await import('../mcp/host.js');
      mcp = await startMcp({ cwd, home, env: io.env });
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
  const options: Partial<AgentOptions> = {
    tools: offered,
    ...(source ? { toolSources: [source] } : {}),
    ...(allowedTools ? { allowedTools } : {}),
    approvalPolicy: (call, tool) => policy.decide(call, tool),
    ...(rules.text ? { context: { rules: rules.text } } : {}),
    ...(skills.length > 0 ? { skills } : {}),
    ...(memory ? { memory } : {}),
    ...(noTools ? {} : { toolOutputPaging: true }),
    // MCP servers can bring dozens of tools: past 40, send a relevant subset and search_tools.
    ...(mcp && mcp.status().length > 0 ? { toolSelection: { maxTools: 40 } } : {}),
  };
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
  return {
    root: cwd,
    options,
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

function isReadTool(tool: Tool): boolean {
  return tool.risk === 'read';
}

/** A tool source offering only its read tools (cached per answer of the source). */
function readToolsOf(source: ToolSource): ToolSource {
  let from: readonly Tool[] | undefined;
  let read: readonly Tool[] = [];
  return {
    id: source.id,
    tools: () => {
      const all = source.tools();
      if (all !== from) {
        from = all;
        read = all.filter(isReadTool);
      }
      return read;
    },
    ...(source.onChange ? { onChange: (listener: () => void) => (source.onChange as NonNullable<ToolSource['onChange']>)(listener) } : {}),
  };
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
