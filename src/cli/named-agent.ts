/**
 * An agent by name (`--agent`, `rein serve`): its file's fields as the flags `rein run`
 * takes, so the agent is built by the same workbench, with the command line's own flags
 * on top. `default` is what `rein run` builds in the folder (or `.rein/agents/default.md`
 * when the project defines it).
 */
import { resolve } from 'node:path';
import { homedir } from 'node:os';
import { ReinError } from '../errors.js';
import type { RunLimits } from '../events.js';
import type { AgentOptions } from '../loop/options.js';
import type { AgentDefinition, AgentDiagnostic } from '../agents/types.js';
import { agentOptionsFromFlags, DEFAULT_RUN_TIMEOUT_MS, type AgentFlagValues } from './agent-flags.js';
import type { CliIO } from './io.js';

/** The name of the agent `rein run` builds when no `--agent` is given. */
export const DEFAULT_AGENT = 'default';

/** What a run records of the named agent it was built from, so a resume rebuilds the same one. */
export interface AgentRunMetadata {
  agent: { name: string; limits?: Partial<RunLimits>; outputSchema?: Record<string, unknown>; agents?: string[] };
}

/** A named agent resolved against the command line: the flags and options to build it with. */
export interface ResolvedAgent {
  name: string;
  /** The flags to build it with: the file's fields, under the command line's own flags. */
  values: AgentFlagValues;
  /** The agent's options (model resolved, limits merged: the file's, then the flags'). */
  options: AgentOptions;
  /** What the run records to be rebuilt (see {@link AgentRunMetadata}). */
  metadata: AgentRunMetadata;
  /** Its file; absent for the built-in `default`. */
  definition?: AgentDefinition;
}

/** Loads the agent files of `root` (and the home folder), lazily importing the loader and yaml. */
export async function loadAgentFiles(root: string, env: NodeJS.ProcessEnv) {
  const { loadAgents } = await import('../agents/load.js');
  return loadAgents({ root, home: env.HOME ?? homedir() });
}

/** One diagnostic as a line: `file (field): message`. */
export function agentDiagnosticLine(d: AgentDiagnostic): string {
  return `${d.file}${d.field ? ` (${d.field})` : ''}: ${d.message}`;
}

/**
 * The agent `name` of the project at `flags.root` (default: the working directory), with
 * `flags` — what the command line gave — over its file's fields. A missing agent, or one
 * whose file has errors, is a `config` error that says what to fix.
 */
export async function resolveNamedAgent(
  name: string,
  flags: AgentFlagValues,
  env: NodeJS.ProcessEnv,
  io?: CliIO,
  /** Flags that depend on the agent's file (a sub-agent's share of its parent's), under `flags`. */
  fromFile?: (definition: AgentDefinition | undefined) => AgentFlagValues,
): Promise<ResolvedAgent> {
  const root = resolve(flags.root ?? process.cwd());
  const { items, diagnostics } = await loadAgentFiles(root, env);
  const definition = items.find((a) => a.name === name);
  for (const d of diagnostics)
    if (d.severity === 'warning' && d.file === definition?.file) io?.stderr.write(`rein: agent ${agentDiagnosticLine(d)}\n`);
  if (!definition && name !== DEFAULT_AGENT) {
    const broken = diagnostics.filter((d) => d.severity === 'error' && d.file.endsWith(`/${name}.md`));
    if (broken.length > 0) {
      throw new ReinError('config', 'fatal', `agent "${name}" cannot be used: ${broken.map(agentDiagnosticLine).join('; ')}`);
    }
    const known = [DEFAULT_AGENT, ...items.map((a) => a.name)];
    throw new ReinError(
      'config',
      'fatal',
      `there is no agent "${name}": agents are .rein/agents/<name>.md files (in ${root} or ~/.rein/agents); known here: ${known.join(', ')} (rein agents lists them)`,
    );
  }
  return fromDefinition(name, definition, fromFile ? { ...fromFile(definition), ...flags } : flags, env);
}

/**
 * Builds the flags and options of an agent from its definition (none: the built-in
 * `default`) under the command line's `flags`. Also what a resume uses, from the
 * metadata a run recorded.
 */
export function fromDefinition(
  name: string,
  definition: AgentDefinition | undefined,
  flags: AgentFlagValues,
  env: NodeJS.ProcessEnv,
): ResolvedAgent {
  const given = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) as AgentFlagValues;
  const fromFile: AgentFlagValues = {};
  if (definition) {
    fromFile.model = definition.model;
    if (definition.baseUrl !== undefined) fromFile['base-url'] = definition.baseUrl;
    if (definition.system !== '') fromFile.system = definition.system;
    if (definition.mode !== undefined) fromFile.mode = definition.mode;
    // The command line's choice of tools replaces the file's, whichever way it goes.
    if (definition.tools !== undefined && given.tools === undefined && given['no-tools'] === undefined) {
      if (definition.tools.length === 0) fromFile['no-tools'] = true;
      else fromFile.tools = definition.tools.join(',');
    }
  }
  const values: AgentFlagValues = { ...fromFile, ...given };
  const options = agentOptionsFromFlags(values, env);
  // The file's limits, then those the flags set (--max-steps over limits.maxSteps).
  const limits = { ...definition?.limits, ...options.limits };
  if (limits.timeoutMs === undefined && values.timeout !== 'none') limits.timeoutMs = DEFAULT_RUN_TIMEOUT_MS;
  if (Object.keys(limits).length > 0) options.limits = limits;
  if (definition?.outputSchema !== undefined) options.outputSchema = definition.outputSchema;
  const metadata: AgentRunMetadata = {
    agent: {
      name,
      ...(definition?.limits ? { limits: definition.limits } : {}),
      ...(definition?.outputSchema ? { outputSchema: definition.outputSchema } : {}),
      ...(definition?.agents?.length ? { agents: definition.agents } : {}),
    },
  };
  return { name, values, options, metadata, ...(definition ? { definition } : {}) };
}
