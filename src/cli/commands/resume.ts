/**
 * `rein resume <run>`: continues a stored run in this process, with the agent it was
 * started with (its model and system prompt are read from the run; the tools are the
 * CLI's). Completed tool calls never run again.
 */
import { ReinError } from '../../errors.js';
import { eventsOfTree } from '../../loop/tree-log.js';
import { Agent } from '../../loop/agent.js';
import { EXIT, type CliIO, type Command } from '../io.js';
import { childrenViewOf } from '../render.js';
import { childAgentNames, exitCodeOf, renderRun, reportSetupError } from './run.js';
import { agentOptionsFromFlags, type AgentFlagValues } from '../agent-flags.js';
import { openCliAgent, type CliRunMetadata } from '../cli-agent.js';
import type { AgentRunMetadata } from '../named-agent.js';
import { parseCommandLine, runIdOf } from '../flags.js';
import { findRun, openStoreFor } from './store-command.js';
import type { RunRecord, RunStore } from '../../store/types.js';

/** What the CLI reads of a run's recorded agent configuration. */
interface StoredConfig {
  model?: string;
  system?: string | null;
  tools?: Array<{ name: string }>;
  metadata?: Partial<CliRunMetadata & AgentRunMetadata>;
}

/**
 * The agent a stored run was started with, as far as the CLI can rebuild it: the run's
 * model and system prompt, and — for a run the CLI started — the same tools, MCP servers
 * and permission policy, from the flags it recorded. Nobody is asked anything: a call that
 * needs approval pauses the run again.
 */
export async function agentForStoredRun(
  record: RunRecord,
  store: RunStore,
  baseUrl: string | undefined,
  io: CliIO,
  headers?: string[],
): Promise<{ agent: Agent; close(): Promise<void> }> {
  if (typeof record.config !== 'object' || record.config === null) {
    // Written by a program through the store API: there is nothing to rebuild its agent from.
    throw new ReinError(
      'config',
      'fatal',
      `run ${record.id} has no recorded agent configuration (no CLI flags, no tool list): continue it from the program that started it, with agent.resume() or agent.approve()`,
    );
  }
  const config = record.config as StoredConfig;
  // A resumed run is not recorded again: that would empty the recording of its start.
  const { record: _record, ...kept }: AgentFlagValues = config.metadata?.cli?.flags ?? {};
  const flags: AgentFlagValues | undefined = config.metadata?.cli?.flags === undefined ? undefined : kept;
  // A --base-url given now wins; else the one the run was started with.
  const url = baseUrl ?? flags?.['base-url'];
  // The run's own model and system prompt, whatever REIN_MODEL says now; its flags were
  // checked when it started, but the model's key is looked up in this environment.
  const options = agentOptionsFromFlags(
    {
      ...flags,
      model: config.model ?? record.model,
      ...(typeof config.system === 'string' ? { system: config.system } : {}),
      ...(url ? { 'base-url': url } : {}),
      // Headers are never stored (they often carry a key): given again on each resume.
      ...(headers ? { header: headers } : {}),
    },
    io.env,
  );
  // A run of a named agent: its limits and output schema, which no flag holds.
  const named = config.metadata?.agent;
  if (named) {
    const limits = { ...named.limits, ...options.limits };
    if (Object.keys(limits).length > 0) options.limits = limits;
    if (named.outputSchema !== undefined) options.outputSchema = named.outputSchema;
  }
  if (flags) {
    const { agent, bench } = await openCliAgent(flags, options, io, { store, ...(named ? { metadata: { agent: named } } : {}) });
    return { agent, close: () => bench.close() };
  }
  const wanted = new Set((config.tools ?? []).map((t) => t.name));
  const available = (options.tools ?? []).map((t) => t.name);
  const missing = [...wanted].filter((name) => !available.includes(name));
  if (missing.length > 0) {
    // Resuming without them would answer their pending calls with "unknown tool".
    throw new ReinError(
      'config',
      'fatal',
      `run ${record.id} used tools the rein command does not have (${missing.join(', ')}): continue it from the program that defines them, with agent.resume() or agent.approve()`,
    );
  }
  const agent = new Agent({ ...options, tools: (options.tools ?? []).filter((t) => wanted.has(t.name)), store });
  return { agent, close: () => Promise.resolve() };
}

/**
 * Opens the store, finds run `runId`, checks it with `options.check` (which throws when the
 * command cannot continue it), rebuilds its agent and hands both to `use`; closes
 * everything afterwards. Shared by `rein resume` and `rein approve`.
 */
export async function withStoredRun<T>(
  runId: string,
  options: { store: string | undefined; baseUrl: string | undefined; headers?: string[] | undefined; check?: (record: RunRecord) => void },
  io: CliIO,
  use: (agent: Agent, store: RunStore) => Promise<T>,
): Promise<T> {
  const store = await openStoreFor(options.store, io);
  try {
    const record = await findRun(store, runId);
    // Before the agent is built: a run there is nothing to continue starts no MCP server.
    options.check?.(record);
    const { agent, close } = await agentForStoredRun(record, store, options.baseUrl, io, options.headers);
    try {
      return await use(agent, store);
    } finally {
      await close();
    }
  } finally {
    await store.close();
  }
}

/**
 * Refuses, as a usage error, a run that has ended (done or stopped by a limit): there is
 * nothing to resume, and the run is left as it is.
 */
export function checkResumable(record: RunRecord): void {
  if (record.status !== 'done' && record.status !== 'stopped') return;
  throw new ReinError(
    'config',
    'fatal',
    `run ${record.id} is ${record.status} (${record.reason ?? 'no reason'}): there is nothing to resume. ` +
      `rein resume continues a run that crashed, failed, was aborted or is paused; rein show ${record.id} shows this one`,
  );
}

const usage = `rein resume <run> [--force] [--json] [--store <path|url>] [--base-url URL] [--header 'name: value'] [--children summary|full|none]

Continues a run that crashed, failed, was aborted or is paused, from the end of its log.
The model and system prompt are the run's own; for a run of rein run or rein chat, so are
its tools, MCP servers, permission rules, limits and --base-url (a --base-url given here
wins). --header is not stored (it often carries a key): give a run started with --header
the same again. --force resumes even if the agent's tools, prompt or model changed since
the run started.`;

export const command: Command = {
  description: 'continue a stored run from its log',
  usage,
  async run(argv, io) {
    let json = argv.includes('--json');
    try {
      const parsed = parseCommandLine(argv, io, usage, {
        force: { type: 'boolean' },
        json: { type: 'boolean' },
        store: { type: 'string' },
        'base-url': { type: 'string' },
        header: { type: 'string', multiple: true },
        children: { type: 'string' },
      });
      if (!parsed) return EXIT.ok;
      const { values, positionals } = parsed;
      const children = childrenViewOf(values.children);
      json = Boolean(values.json);
      const runId = runIdOf(positionals, 'resume');
      return await withStoredRun(
        runId,
        { store: values.store, baseUrl: values['base-url'], headers: values.header, check: checkResumable },
        io,
        async (agent, store) => {
          // Read before the tree continues: a child continued here is named by its agent.
          const childNames = await childAgentNames(store, runId);
          const handle = agent.resume(runId, { signal: io.signal, ...(values.force ? { force: true } : {}) });
          return exitCodeOf(
            await renderRun(handle, io, json, { provider: agent.model.provider, children, childNames }, () => eventsOfTree(store, runId)),
          );
        },
      );
    } catch (error) {
      return reportSetupError(error, io, json);
    }
  },
};
