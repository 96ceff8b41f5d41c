/**
 * Refusing a run a worker must not drive (its agent is unknown here, or changed since the
 * run was submitted): the run ends `failed` in its own log with the reason, so `rein show`
 * says why; it is never run with other tools. `rein resume` (where the agent is right) or a
 * new submit continues from there.
 */
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import { emptyUsage } from '../model/types.js';
import type { RunStore } from '../store/types.js';

/** Ends `runId` as failed with `reason` (code `conflict`), taking its lease first. */
export async function refuseRun(store: RunStore, runId: string, reason: string): Promise<void> {
  const epoch = await store.acquireLease(runId);
  const events = await store.loadEvents(runId);
  const first = events[0];
  const traceId = first?.type === 'run_started' ? first.traceId : '';
  const error = new ReinError('conflict', 'fatal', reason).toJSON();
  const totals = { steps: 0, toolCalls: 0, usage: emptyUsage(), durationMs: 0 };
  const finished: RunEvent = {
    type: 'run_finished',
    runId,
    seq: events.length,
    at: Date.now(),
    status: 'failed',
    reason: 'fatal_error',
    result: { runId, traceId, status: 'failed', reason: 'fatal_error', text: '', totals, error },
  };
  await store.append(runId, epoch, [finished]);
  await store.updateRun(runId, epoch, { status: 'failed', reason: 'fatal_error' });
}
