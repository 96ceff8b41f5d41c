/**
 * The agent of a CLI session (`rein run`, `rein chat`, and a run `rein resume` or
 * `rein approve` continues): the options from the flags, inside the workbench the flags
 * describe, with the flags recorded so the run can be rebuilt later.
 */
import { Agent } from '../loop/agent.js';
import { nameMatcher } from '../loop/agent-tools.js';
import type { AgentOptions } from '../loop/options.js';
import type { RunStore } from '../store/types.js';
import { closestName } from '../tools/suggest.js';
import { outputLimitWarning, type AgentFlagValues } from './agent-flags.js';
import type { CliIO } from './io.js';
import { openWorkbench, type Workbench, type WorkbenchPeople } from './workbench.js';
import { terminalLine } from './terminal-text.js';
import { openCliTelemetry, type CliTelemetry } from './telemetry.js';
import type { AgentRunMetadata } from './named-agent.js';
import type { Tool } from '../tools/types.js';
import { openSubAgents, withSubAgentTools } from './sub-agents.js';

/** How `rein run` / `rein chat` record the flags that shaped an agent, for resume and approve. */
export type CliRunMetadata = {
  cli: { flags: AgentFlagValues };
};

/**
 * The flags of `values` that decide an agent's tools, policy, limits and model server (what
 * a resume must rebuild: a run paused under --max-cost must not continue without it).
 */
export function cliMetadata(values: AgentFlagValues, root: string): CliRunMetadata {
  const keep: Array<keyof AgentFlagValues> = [
    'no-tools',
    'tools',
    'allow',
    'ask',
    'deny',
    'mode',
    // A resumed or approved run keeps the confinement it was started with.
    'sandbox',
    'sandbox-network',
    'no-mcp',
    'no-skills',
    'memory',
    'max-steps',
    'timeout',
    'max-cost',
    'max-output-tokens',
    'thinking',
    'base-url',
  ];
  const flags: AgentFlagValues = { root };
  for (const key of keep) if (values[key] !== undefined) (flags as Record<string, unknown>)[key] = values[key];
  return { cli: { flags } };
}

/** Prints what the workbench found wrong while loading, and the yolo banner. */
export function announce(bench: Workbench, io: CliIO): void {
  for (const notice of bench.notices) io.stderr.write(`rein: ${terminalLine(notice)}\n`);
  if (bench.policy.isYolo) io.stderr.write(`rein: ⚠ ${bench.policy.describe()}\n`);
}

/**
 * Warns about `--tools` entries that match none of the agent's tools: a typo would
 * otherwise leave the model without the tool it was meant to have, silently.
 */
export function warnUnmatchedTools(agent: Agent, bench: Workbench, io: CliIO): void {
  const selection = bench.options.allowedTools;
  if (!selection) return;
  const offered = agent.tools.map((t) => t.name);
  const known = [...(bench.options.tools ?? []), ...(bench.mcp?.tools() ?? [])].map((t) => t.name);
  for (const entry of selection) {
    if (offered.some(nameMatcher([entry]))) continue;
    const guess = closestName(entry, known);
    io.stderr.write(
      `rein: --tools ${entry} matches no tool${guess ? ` (did you mean ${guess}?)` : ''}; rein mcp tools lists the MCP servers' tools\n`,
    );
  }
}

/**
 * Opens the workbench of `values` around `options` (from `agentOptionsFromFlags`) and
 * builds the agent, logging to `store`, with the telemetry the flags and environment ask
 * for (`runOptions` go to each run). The caller closes `bench` when done, which also ends
 * the telemetry (alerts in flight, exporters flushed); if the agent cannot be built, it is
 * closed here, since the caller never gets it.
 */
export async function openCliAgent(
  values: AgentFlagValues,
  options: AgentOptions,
  io: CliIO,
  extra: { store?: RunStore; people?: WorkbenchPeople; metadata?: Record<string, unknown>; path?: string[] } = {},
): Promise<{ agent: Agent; bench: Workbench; runOptions: CliTelemetry['runOptions'] }> {
  // A named agent with sub-agents (`agents:` in its file, recorded for a resume): each is a tool, and the agent is named in its runs.
  const named = (extra.metadata as Partial<AgentRunMetadata> | undefined)?.agent;
  let subAgents: { tools: Tool[]; close(): Promise<void> } | undefined;
  if (named?.agents?.length) {
    const people = extra.people ?? {};
    subAgents = await openSubAgents(
      named.agents,
      values,
      options.model,
      io,
      { ...(extra.store ? { store: extra.store } : {}), people },
      extra.path ?? [named.name],
      openCliAgent,
    );
    options = { ...options, name: named.name, tools: [...(options.tools ?? []), ...subAgents.tools] };
    values = withSubAgentTools(values, named.agents);
  } else if (named && extra.path && extra.path.length > 1) {
    // A sub-agent: named, so its runs and the tree say who it is.
    options = { ...options, name: named.name };
  }
  const telemetry = await openCliTelemetry(values, io);
  let opened: Workbench;
  try {
    opened = await openWorkbench(values, io, options.tools ?? [], extra.people ?? {});
  } catch (error) {
    await telemetry.close();
    await subAgents?.close();
    throw error;
  }
  // The session's runs end before the telemetry that reports them.
  const bench: Workbench = {
    ...opened,
    close: () =>
      opened
        .close()
        .finally(() => Promise.allSettled([telemetry.close(), subAgents?.close()]))
        .then(() => undefined),
  };
  try {
    announce(bench, io);
    const agent = new Agent({
      ...options,
      ...bench.options,
      ...telemetry.options,
      ...(extra.store ? { store: extra.store } : {}),
      metadata: { ...extra.metadata, ...cliMetadata(values, bench.root) },
    });
    // MCP servers' sampling requests are answered by the run's model.
    bench.sampleWith?.(agent.model);
    warnUnmatchedTools(agent, bench, io);
    const outputWarning = outputLimitWarning(agent.model, options.modelOptions?.maxTokens);
    if (outputWarning) io.stderr.write(`rein: ${outputWarning}\n`);
    return { agent, bench, runOptions: telemetry.runOptions };
  } catch (error) {
    await bench.close();
    throw error;
  }
}
