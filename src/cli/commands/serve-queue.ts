/**
 * `rein serve` on a Postgres store: with `--no-execute` it only queues runs (and approvals)
 * for the workers; without, it also runs a worker inside it, which takes queued runs like
 * any `rein worker` (docs/workers.md).
 */
import type { QueueMode } from '../../server/types.js';
import type { RunStore } from '../../store/types.js';
import type { CliIO } from '../io.js';
import { cliMeter, type CliTelemetry } from '../telemetry.js';
import { asMissing } from '../../optional.js';

/** How a `--no-execute` server hands runs and decisions to the workers. */
export async function queueModeOfStore(store: RunStore): Promise<QueueMode> {
  const { approveQueued, isQueuedRun } = await import('../../worker/approve-queued.js');
  return { isQueued: isQueuedRun, approve: (runId, decision) => approveQueued(store, runId, decision) };
}

/** Synchronous wrapper: the approve module is loaded on the first decision. */
export function queueModeOf(store: RunStore): QueueMode {
  let mode: Promise<QueueMode> | undefined;
  const get = () => (mode ??= queueModeOfStore(store));
  return {
    isQueued: (record) => {
      const metadata = (record.config as { metadata?: { queued?: unknown } } | null)?.metadata;
      return metadata?.queued !== undefined && metadata.queued !== null;
    },
    approve: async (runId, decision) => (await get()).approve(runId, decision),
  };
}

/** A worker inside the server, on the agents of `root`; `stop()` drains it and closes its agents. */
export async function workerInside(
  store: RunStore,
  root: string,
  io: CliIO,
  telemetry?: CliTelemetry['options'],
): Promise<{ stop(): Promise<void> }> {
  const [{ createWorker }, { openWorkerAgents }] = await Promise.all([
    import('../../worker/worker.js').catch((error: unknown) => {
      throw asMissing(error, ['pg-boss'], 'rein serve on a Postgres store');
    }),
    import('../worker-agents.js'),
  ]);
  const agents = openWorkerAgents(root, store, io, telemetry);
  const meter = cliMeter(telemetry);
  const worker = await createWorker({
    store,
    agents: agents.resolve,
    ...(meter ? { meter } : {}),
    onEvent: (e) => e.type === 'refused' && io.stderr.write(`rein serve: worker refused run ${e.runId}: ${e.why}\n`),
  });
  io.stderr.write(`rein serve: a worker (${worker.id}) inside this server takes queued runs\n`);
  let stopped: Promise<void> | undefined;
  return {
    stop: () => (stopped ??= worker.stop({ drain: true }).finally(() => agents.close())),
  };
}
