/**
 * `rein submit "<task>"`: hands a run to the workers (`rein worker`) instead of running it
 * here. The agent is built as `rein run` builds it (its flags, `--agent`), so the run
 * records what a worker must rebuild; the run's `run_started` and its job are stored in one
 * transaction on a Postgres store.
 */
import { ReinError } from '../../errors.js';
import type { RunStore } from '../../store/types.js';
import { EXIT, type CliIO, type Command } from '../io.js';
import { AGENT_FLAGS, agentFlagsHelp, storeFromFlags, type AgentFlagValues } from '../agent-flags.js';
import { DEFAULT_AGENT, resolveNamedAgent } from '../named-agent.js';
import { openCliAgent } from '../cli-agent.js';
import { parseCommandLine } from '../flags.js';
import { reportSetupError } from './run.js';

const usage = `rein submit [options] "<task>"

Queues one task for the workers (rein worker) and exits: prints {"runId":"…"} on stdout.
The store must be Postgres (--store postgres://… or REIN_DATABASE_URL), which every worker
reaches. The run records its agent (--agent, default: default) and the hash of its file: a
worker whose .rein/agents/<name>.md differs, or has none, refuses the run (rein show says
why). A call that needs approval pauses the run; rein approve decides it and puts the run
back in the queue. rein show <run> follows it.

${agentFlagsHelp('run')}`;

/**
 * The agent `rein submit` builds from its flags, ready to submit tasks: one workbench for
 * any number of runs (what a script queueing many tasks needs). `close()` stops the
 * workbench and the store.
 */
export async function openSubmitter(
  values: AgentFlagValues,
  io: CliIO,
): Promise<{ submit(task: string): Promise<string>; close(): Promise<void> }> {
  let store: RunStore | undefined;
  try {
    if (values['no-store'])
      throw new ReinError('config', 'fatal', '--no-store cannot submit: a queued run lives in the store (give --store postgres://…)');
    const named = await resolveNamedAgent(values.agent ?? DEFAULT_AGENT, values, io.env, io);
    store = await storeFromFlags(values, io);
    if (!store?.queue) {
      throw new ReinError(
        'config',
        'fatal',
        'rein submit needs a store every worker reaches, and a SQLite file is local to one machine: give --store postgres://… (or set REIN_DATABASE_URL); rein run runs the task here instead',
      );
    }
    const { definitionHash } = await import('../worker-agents.js');
    const metadata = { ...named.metadata, agent: { ...named.metadata.agent, definitionHash: definitionHash(named.definition) } };
    // Nobody answers at this terminal: a call that needs approval pauses the run on its worker.
    const session = await openCliAgent(named.values, named.options, io, { store, people: {}, metadata });
    const opened = store;
    return {
      submit: async (task) => (await session.agent.submit(task, { agent: named.name })).runId,
      close: async () => {
        await session.bench.close();
        await opened.close();
      },
    };
  } catch (error) {
    await store?.close();
    throw error;
  }
}

export const command: Command = {
  description: 'queue a task for the workers (rein worker)',
  usage,
  async run(argv, io) {
    let submitter: Awaited<ReturnType<typeof openSubmitter>> | undefined;
    try {
      const parsed = parseCommandLine(argv, io, usage, AGENT_FLAGS);
      if (!parsed) return EXIT.ok;
      const { values, positionals } = parsed;
      const task = positionals.join(' ').trim();
      if (!task) throw new ReinError('config', 'fatal', 'no task given: rein submit "<task>" (see --help)');
      submitter = await openSubmitter(values, io);
      const runId = await submitter.submit(task);
      io.stdout.write(`${JSON.stringify({ runId })}\n`);
      return EXIT.ok;
    } catch (error) {
      return reportSetupError(error, io, false);
    } finally {
      await submitter?.close();
    }
  },
};
