/**
 * The sub-agents of an agent file (`agents: [reviewer, researcher]`, issue 23): each named
 * agent is built from its own file — model, prompt, tools, mode, limits — in a workbench of
 * its own under the same root and store, and offered to the parent as a tool named after
 * it, taking `{ task: string }` unless its file declares an `inputSchema`. Recursively: a
 * sub-agent's own `agents` become its tools. A child on the parent's provider reaches the
 * parent's model server (`--base-url`, `--header`) unless its file names its own, and one
 * on the parent's model takes its `--thinking`, `--tool-calling` and `--max-output-tokens`.
 * A cycle is refused (the depth limit would
 * stop it at run time, but an agent tree that names itself is a mistake in the files).
 */
import { ReinError } from '../errors.js';
import type { Agent } from '../loop/agent.js';
import { agentTool } from '../loop/agent-tool.js';
import type { AgentOptions } from '../loop/options.js';
import type { RunStore } from '../store/types.js';
import type { Tool } from '../tools/types.js';
import type { AgentFlagValues } from './agent-flags.js';
import type { CliIO } from './io.js';
import { resolveNamedAgent } from './named-agent.js';
import type { WorkbenchPeople } from './workbench.js';

/** How a CLI agent is built (cli-agent.ts's `openCliAgent`, passed in: it builds sub-agents with this module). */
export type BuildAgent = (
  values: AgentFlagValues,
  options: AgentOptions,
  io: CliIO,
  extra: { store?: RunStore; people?: WorkbenchPeople; metadata?: Record<string, unknown>; path?: string[] },
) => Promise<{ agent: Agent; bench: { close(): Promise<void> } }>;

/** The flags a sub-agent shares with its parent: where it works, and how its shell is confined. */
const SHARED: Array<keyof AgentFlagValues> = ['root', 'sandbox', 'sandbox-network', 'no-mcp', 'no-skills'];
/**
 * How the parent reaches its model server: passed to a child of the same provider whose
 * file names no server of its own (never to another server: a header often holds a key).
 */
const SERVER: Array<keyof AgentFlagValues> = ['base-url', 'header'];
/** How the parent talks to its model: passed to a child that runs the same model. */
const MODEL: Array<keyof AgentFlagValues> = ['thinking', 'tool-calling', 'max-output-tokens'];

/** Provider and model id of a model option. */
function modelOf(model: AgentOptions['model']): { provider: string; id: string } {
  if (typeof model !== 'string') return { provider: model.provider, id: model.id };
  const slash = model.indexOf('/');
  return slash === -1 ? { provider: 'openai', id: model } : { provider: model.slice(0, slash), id: model.slice(slash + 1) };
}

/** The parent's model flags a child takes (see {@link SERVER} and {@link MODEL}). */
function inheritedFlags(
  parentFlags: AgentFlagValues,
  parentModel: AgentOptions['model'],
  childModel: AgentOptions['model'],
  childHasServer: boolean,
): AgentFlagValues {
  const parent = modelOf(parentModel);
  const child = modelOf(childModel);
  const keys = [
    ...(parent.provider === child.provider && !childHasServer ? SERVER : []),
    ...(parent.provider === child.provider && parent.id === child.id ? MODEL : []),
  ];
  const out: AgentFlagValues = {};
  for (const key of keys) if (parentFlags[key] !== undefined) (out as Record<string, unknown>)[key] = parentFlags[key];
  return out;
}

/** Builds the tools of sub-agents `names` of the agent at `path` (its ancestors, itself last). */
export async function openSubAgents(
  names: readonly string[],
  parentFlags: AgentFlagValues,
  parentModel: AgentOptions['model'],
  io: CliIO,
  extra: { store?: RunStore; people?: WorkbenchPeople },
  path: readonly string[],
  build: BuildAgent,
): Promise<{ tools: Tool[]; close(): Promise<void> }> {
  const tools: Tool[] = [];
  const benches: Array<{ close(): Promise<void> }> = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(benches.map((b) => b.close()));
  };
  try {
    for (const name of names) {
      if (path.includes(name)) {
        throw new ReinError(
          'config',
          'fatal',
          `agent "${path.at(-1)}" lists sub-agent "${name}", which is already its ancestor (${[...path, name].join(' → ')}): an agent tree cannot loop; remove "${name}" from its agents`,
        );
      }
      const shared: AgentFlagValues = {};
      for (const key of SHARED) if (parentFlags[key] !== undefined) (shared as Record<string, unknown>)[key] = parentFlags[key];
      // A parent in plan mode makes no change through its children either.
      if (parentFlags.mode === 'plan') shared.mode = 'plan';
      const child = await resolveNamedAgent(name, shared, io.env, io, (file) =>
        file ? inheritedFlags(parentFlags, parentModel, file.model, file.baseUrl !== undefined) : {},
      );
      const definition = child.definition;
      if (!definition) throw new ReinError('config', 'fatal', `sub-agent "${name}" has no agent file: add .rein/agents/${name}.md`);
      const { agent, bench } = await build(child.values, child.options, io, {
        ...extra,
        metadata: { ...child.metadata },
        path: [...path, name],
      });
      benches.push(bench);
      tools.push(
        agentTool(agent, {
          name,
          description: definition.description,
          ...(definition.inputSchema ? { input: definition.inputSchema } : {}),
        }),
      );
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { tools, close };
}

/** `--tools` with the sub-agents' tools added (a tool list would otherwise leave them out). */
export function withSubAgentTools(values: AgentFlagValues, names: readonly string[]): AgentFlagValues {
  if (values.tools === undefined || names.length === 0) return values;
  const listed = values.tools.split(',').map((t) => t.trim());
  const missing = names.filter((n) => !listed.includes(n));
  return missing.length === 0 ? values : { ...values, tools: [values.tools, ...missing].join(',') };
}
