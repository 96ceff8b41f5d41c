/**
 * The agents `rein serve` runs: the files of `.rein/agents/` (and `default`, what `rein run`
 * builds in the folder), each built inside the workbench `rein run` puts around a model
 * (tools, MCP servers, skills, rules, memory, the permission policy). Nobody can be asked
 * at a terminal: a call that needs approval pauses the run, and the API decides it. This
 * file is the server's one use of the workbench.
 */
import { DEFAULT_LIMITS } from '../loop/options.js';
import { openSubAgents, withSubAgentTools } from './sub-agents.js';
import { Agent } from '../loop/agent.js';
import type { AgentDefinition } from '../agents/types.js';
import type { RunRecord, RunStore } from '../store/types.js';
import type { AgentCatalog, ServedAgent } from '../server/types.js';
import { agentOptionsFromFlags, defaultModelSpec, type AgentFlagValues } from './agent-flags.js';
import { announce, cliMetadata, type CliRunMetadata } from './cli-agent.js';
import type { CliIO } from './io.js';
import { DEFAULT_AGENT, agentDiagnosticLine, fromDefinition, loadAgentFiles, type AgentRunMetadata } from './named-agent.js';
import { openWorkbench, type Workbench } from './workbench.js';
import { terminalLine } from './terminal-text.js';
import type { CliTelemetry } from './telemetry.js';

/** Options of {@link openServedAgents}. */
export interface ServedAgentsOptions {
  /** The folder served: its `.rein/agents/`, and the workspace root of its agents. */
  root: string;
  /** The model server for agents whose file names none (`rein serve --base-url`). */
  baseUrl?: string;
  io: CliIO;
  /** What every agent's runs are observed with (OTLP export from the `OTEL_*` variables, the log file, alerts: telemetry.ts). */
  telemetry?: CliTelemetry['options'];
}

/** What a stored run's config holds of how it was built. */
interface StoredConfig {
  model?: string;
  system?: string | null;
  metadata?: Partial<CliRunMetadata & AgentRunMetadata>;
}

/** The agents of `root` for a server. {@link AgentCatalog.close} closes every workbench opened. */
export function openServedAgents(options: ServedAgentsOptions): AgentCatalog {
  const { root, io } = options;
  const benches = new Map<string, Promise<Workbench>>();
  let reported = '';

  /** The workbench of these flags, opened once and shared by every run that uses the same. */
  const benchFor = (values: AgentFlagValues, tools: NonNullable<ReturnType<typeof agentOptionsFromFlags>['tools']>): Promise<Workbench> => {
    // The tools given (a parent's sub-agent tools) are part of what is opened: a parent and
    // the child it lists, with the same flags, each need their own workbench.
    const key = JSON.stringify([cliMetadata(values, root).cli.flags, tools.map((t) => t.name)]);
    let bench = benches.get(key);
    if (!bench) {
      bench = openWorkbench({ ...values, root }, io, tools).then((opened) => {
        announce(opened, io);
        return opened;
      });
      benches.set(key, bench);
      // A workbench that failed to open is tried again by the next run.
      bench.catch(() => benches.delete(key));
    }
    return bench;
  };

  const definitions = async (): Promise<AgentDefinition[]> => {
    const { items, diagnostics } = await loadAgentFiles(root, io.env);
    // Said once per change, not on every request.
    const lines = diagnostics
      .map((d) => `rein serve: ${d.severity === 'error' ? 'skipped ' : ''}agent ${terminalLine(agentDiagnosticLine(d))}`)
      .join('\n');
    if (lines !== reported) {
      reported = lines;
      if (lines) io.stderr.write(`${lines}\n`);
    }
    return items;
  };

  const flagsFor = (definition: AgentDefinition | undefined): AgentFlagValues => ({
    root,
    // The server's --base-url is for agents that name no server of their own.
    ...(options.baseUrl !== undefined && definition?.baseUrl === undefined ? { 'base-url': options.baseUrl } : {}),
  });

  const build = async (
    values: AgentFlagValues,
    agentOptions: ReturnType<typeof agentOptionsFromFlags>,
    store: RunStore,
    metadata: Record<string, unknown>,
    path?: string[],
  ): Promise<Agent> => {
    // Sub-agents of the agent's file (`agents:`), each built the same way (their workbenches are the server's, closed with it).
    const named = (metadata as Partial<AgentRunMetadata>).agent;
    if (named?.agents?.length) {
      const subAgents = await openSubAgents(
        named.agents,
        values,
        agentOptions.model,
        io,
        { store },
        path ?? [named.name],
        async (v, o, _io, extra) => ({
          agent: await build(v, o, store, extra.metadata ?? {}, extra.path),
          bench: { close: () => Promise.resolve() },
        }),
      );
      agentOptions = { ...agentOptions, name: named.name, tools: [...(agentOptions.tools ?? []), ...subAgents.tools] };
      values = withSubAgentTools(values, named.agents);
    } else if (named && path && path.length > 1) agentOptions = { ...agentOptions, name: named.name };
    const bench = await benchFor(values, agentOptions.tools ?? []);
    return new Agent({
      ...agentOptions,
      ...bench.options,
      ...options.telemetry,
      store,
      metadata: { ...metadata, ...cliMetadata(values, bench.root) },
    });
  };

  return {
    async list(): Promise<ServedAgent[]> {
      const items = await definitions();
      const served: ServedAgent[] = items.map((a) => ({
        name: a.name,
        description: a.description,
        model: a.model,
        limits: { ...DEFAULT_LIMITS, ...a.limits },
      }));
      if (!items.some((a) => a.name === DEFAULT_AGENT)) {
        served.unshift({
          name: DEFAULT_AGENT,
          description: 'what rein run builds in this folder',
          model: defaultModelSpec(io.env),
          limits: { ...DEFAULT_LIMITS },
        });
      }
      return served;
    },

    async forNewRun({ name, limits, task, store }) {
      const definition = (await definitions()).find((a) => a.name === name);
      const resolved = fromDefinition(name, definition, flagsFor(definition), io.env);
      const merged = { ...resolved.options.limits, ...limits };
      if (Object.keys(merged).length > 0) resolved.options.limits = merged;
      const metadata = {
        agent: { ...resolved.metadata.agent, ...(Object.keys(merged).length > 0 ? { limits: merged } : {}) },
        server: { task },
      };
      return build(resolved.values, resolved.options, store, metadata);
    },

    async forStoredRun(record: RunRecord, store: RunStore) {
      const config = (record.config ?? {}) as StoredConfig;
      const flags = config.metadata?.cli?.flags;
      const named = config.metadata?.agent;
      if (!flags || !named)
        throw new Error(`run ${record.id} was not started by name (rein serve, or rein run --agent): continue it where it was started`);
      const values: AgentFlagValues = {
        ...flags,
        root,
        model: config.model ?? record.model,
        ...(typeof config.system === 'string' ? { system: config.system } : {}),
      };
      const agentOptions = agentOptionsFromFlags(values, io.env);
      const limits = { ...named.limits, ...agentOptions.limits };
      if (Object.keys(limits).length > 0) agentOptions.limits = limits;
      if (named.outputSchema !== undefined) agentOptions.outputSchema = named.outputSchema;
      const { cli: _cli, ...metadata } = (config.metadata ?? {}) as Record<string, unknown>;
      return build(values, agentOptions, store, metadata);
    },

    async close() {
      const opened = await Promise.allSettled([...benches.values()]);
      benches.clear();
      await Promise.all(opened.map((o) => (o.status === 'fulfilled' ? o.value.close() : undefined)));
    },
  };
}
