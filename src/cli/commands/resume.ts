/**
 * `rein resume <run>`: continues a stored run in this process, with the agent it was
 * started with (its model and system prompt are read from the run; the tools are the
 * CLI's). Completed tool calls never run again.
 */
import { parseArgs } from 'node:util';
import { ReinError } from '../../errors.js';
import { Agent } from '../../loop/agent.js';
import { seedTools } from '../../tools/builtin/index.js';
import { EXIT, type CliIO, type Command } from '../io.js';
import { announce, exitCodeOf, renderRun, reportSetupError } from './run.js';
import { limitsFromFlags, type AgentFlagValues } from '../agent-flags.js';
import { openWorkbench } from '../workbench.js';
import { findRun, openStoreFor } from './store-command.js';
import type { RunRecord, RunStore } from '../../store/types.js';

/** How `rein run` / `rein chat` record the flags that shaped an agent, for resume and approve. */
export interface CliRunMetadata {
  cli: { flags: AgentFlagValues };
}

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
    'no-mcp',
    'no-skills',
    'memory',
    'max-steps',
    'timeout',
    'max-cost',
    'thinking',
    'base-url',
  ];
  const flags: AgentFlagValues = { root };
  for (const key of keep) if (values[key] !== undefined) (flags as Record<string, unknown>)[key] = values[key];
  return { cli: { flags } };
}

/**
 * The agent a stored run was started with, as far as the CLI can rebuild it: the run's
 * model and system prompt, and — for a run the CLI started — the same tools, MCP servers
 * and permission policy, from the flags it recorded. Nobody is asked anything: a call that
 * needs approval pauses the run again.
 */
export async function agentForStoredRun(record: RunRecord, store: RunStore, baseUrl: string | undefined, io: CliIO): Promise<{ agent: Agent; close(): Promise<void> }> {
  const config = record.config as { model?: string; system?: string | null; tools?: Array<{ name: string }>; metadata?: Partial<CliRunMetadata> };
  const flags = config.metadata?.cli?.flags;
  // A --base-url given now wins; else the one the run was started with.
  const url = baseUrl ?? flags?.['base-url'];
  const base = {
    model: config.model ?? record.model,
    ...(url ? { modelConfig: { baseUrl: url } } : {}),
    ...(config.system ? { system: config.system } : {}),
    // The run's flags were checked when it started.
    ...(flags ? limitsFromFlags(flags) : {}),
    store,
  };
  if (flags) {
    const bench = await openWorkbench(flags, io, flags['no-tools'] ? [] : seedTools());
    announce(bench, io);
    return { agent: new Agent({ ...base, ...bench.options }), close: () => bench.close() };
  }
  const wanted = new Set((config.tools ?? []).map((t) => t.name));
  const available = seedTools().map((t) => t.name);
  const missing = [...wanted].filter((name) => !available.includes(name));
  if (missing.length > 0) {
    // Resuming without them would answer their pending calls with "unknown tool".
    throw new ReinError(
      'config',
      'fatal',
      `run ${record.id} used tools the rein command does not have (${missing.join(', ')}): continue it from the program that defines them, with agent.resume() or agent.approve()`,
    );
  }
  const agent = new Agent({ ...base, tools: seedTools().filter((t) => wanted.has(t.name)) });
  return { agent, close: () => Promise.resolve() };
}

/**
 * Opens the store, finds run `runId`, rebuilds its agent and hands both to `use`; closes
 * everything afterwards. Shared by `rein resume` and `rein approve`.
 */
export async function withStoredRun<T>(
  runId: string,
  options: { store: string | undefined; baseUrl: string | undefined },
  io: CliIO,
  use: (agent: Agent, store: RunStore) => Promise<T>,
): Promise<T> {
  const store = await openStoreFor(options.store, io);
  try {
    const record = await findRun(store, runId);
    const { agent, close } = await agentForStoredRun(record, store, options.baseUrl, io);
    try {
      return await use(agent, store);
    } finally {
      await close();
    }
  } finally {
    await store.close();
  }
}

const usage = `rein resume <run> [--force] [--json] [--store <path|url>] [--base-url URL]

Continues a run that crashed, failed, was aborted or is paused, from the end of its log.
The model and system prompt are the run's own; for a run of rein run or rein chat, so are
its tools, MCP servers, permission rules, limits and --base-url (a --base-url given here
wins). --force resumes even if the agent's tools, prompt or model changed since the run
started.`;

export const command: Command = {
  description: 'continue a stored run from its log',
  usage,
  async run(argv, io) {
    let json = argv.includes('--json');
    try {
      const { values, positionals } = parseArgs({
        args: argv,
        options: {
          force: { type: 'boolean' },
          json: { type: 'boolean' },
          store: { type: 'string' },
          'base-url': { type: 'string' },
          help: { type: 'boolean', short: 'h' },
        },
        allowPositionals: true,
        strict: true,
      });
      json = Boolean(values.json);
      if (values.help) {
        io.stdout.write(`${usage}\n`);
        return EXIT.ok;
      }
      const runId = positionals[0];
      if (!runId) throw new ReinError('config', 'fatal', 'no run given: rein resume <run> (rein runs lists them)');
      return await withStoredRun(runId, { store: values.store, baseUrl: values['base-url'] }, io, async (agent, store) => {
        const handle = agent.resume(runId, { signal: io.signal, ...(values.force ? { force: true } : {}) });
        return exitCodeOf(await renderRun(handle, io, json, {}, () => store.loadEvents(runId)));
      });
    } catch (error) {
      return reportSetupError(error instanceof TypeError ? new ReinError('config', 'fatal', `${error.message}. See --help.`) : error, io, json);
    }
  },
};
