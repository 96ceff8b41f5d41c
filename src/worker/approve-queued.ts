/**
 * Approving a paused run of the queue: the decision and the run's new job in ONE
 * transaction (docs/workers.md). Nothing runs here: a worker takes the run and continues
 * it, so the process that approves needs no agent, tools or model. The rules of a decision
 * are the library's (`Agent.approve`): it must match a call that waits, and it is checked
 * again after the lease is taken.
 */
import { ReinError } from '../errors.js';
import { answeredEvent, checkedAnswer, chooseQuestion, type ElicitationAnswer } from '../loop/elicitation-answer.js';
import { decisionUnderLease } from '../loop/durable-run.js';
import { defaultRedactor } from '../security/redact.js';
import { redactingStore } from '../security/redacting-store.js';
import type { RunRecord, RunStore } from '../store/types.js';

/** A decision on the calls a paused run waits for (all of them without `toolCallId`). */
export interface QueuedDecision {
  approved: boolean;
  reason?: string;
  toolCallId?: string;
  argumentsHash?: string;
}

/** Whether `record` is a run of the queue (submitted, not run in a process of its own). */
export function isQueuedRun(record: RunRecord): boolean {
  const metadata = (record.config as { metadata?: { queued?: unknown } } | null)?.metadata;
  return metadata?.queued !== undefined && metadata.queued !== null;
}

/**
 * Decides the calls `runId` waits for and puts the run back in the queue. Returns the ids
 * of the calls decided. Throws a `conflict` ReinError when the run is not paused or the
 * decision matches no waiting call, writing nothing.
 */
export async function approveQueued(store: RunStore, runId: string, decision: QueuedDecision): Promise<string[]> {
  await pausedRecord(store, runId);
  const { epoch, chosen, decided } = await decisionUnderLease(store, runId, decision);
  // A reason typed by a person may carry a secret: redacted as an agent's store redacts.
  await redactingStore(store, defaultRedactor()).queue!.requeue(runId, epoch, decided);
  return chosen.map(([id]) => id);
}

/**
 * Answers the MCP server's question (or sampling request) a paused run of the queue waits
 * on and puts the run back in the queue, in one transaction: a worker makes the call again
 * and the server, asking again, gets the answer. The answer is checked (against the form,
 * against the calls that wait) before the lease is taken and again after, writing nothing
 * when it does not fit. Returns the id of the call answered. A question of a sub-agent's
 * run is refused: answer it where its tree runs.
 */
export async function answerQueued(store: RunStore, runId: string, answer: ElicitationAnswer): Promise<string> {
  await pausedRecord(store, runId);
  const checked = await checkedAnswer(chooseQuestion(runId, await store.loadEvents(runId), answer), answer);
  const epoch = await store.acquireLease(runId);
  const events = await store.loadEvents(runId);
  const answered = answeredEvent(runId, events, answer, checked);
  // A form's values typed by a person may carry a secret: redacted as an agent's store redacts.
  await redactingStore(store, defaultRedactor()).queue!.requeue(runId, epoch, [answered]);
  return (answered as { toolCallId: string }).toolCallId;
}

async function pausedRecord(store: RunStore, runId: string): Promise<RunRecord> {
  if (!store.queue) throw new ReinError('config', 'fatal', 'approving a queued run needs its Postgres store');
  const record = await store.getRun(runId);
  if (!record) throw new ReinError('not_found', 'fatal', `there is no run ${runId} in the store`);
  if (record.status !== 'paused')
    throw new ReinError(
      'conflict',
      'fatal',
      `run ${runId} is not waiting for approval (it is ${record.status}): there is nothing to decide`,
    );
  return record;
}
