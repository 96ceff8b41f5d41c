/**
 * Approvals in a tree of runs (issue 23): a sub-agent that needs a person pauses its run
 * and, with it, every ancestor up to the root. What waits is shown, and decided, from the
 * root: the decision is logged in the child's own log, bound to the child's call and the
 * hash of its arguments, and resuming the root then resumes the child, which runs (or
 * refuses) the call.
 */
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import type { RunRecord, RunStore } from '../store/types.js';
import { resumeStateFrom } from './resume-state.js';

/** A call a run of the tree waits on a person for. */
export interface WaitingCall {
  /** The run that waits (the root or one of its descendants). */
  runId: string;
  /** Its depth in the tree (the root is 0). */
  depth: number;
  /** The parent run and call that started it; absent for the root. */
  parentRunId?: string;
  toolCallId: string;
  name: string;
  arguments: Record<string, unknown>;
  /** What a decision must match (see `approval_requested`). */
  argumentsHash: string;
}

/** The runs of the tree under `rootRunId` (itself first), each with its depth. */
export async function runsOfTree(store: RunStore, rootRunId: string): Promise<Array<{ record: RunRecord; depth: number }>> {
  const root = await store.getRun(rootRunId);
  if (!root) return [];
  const out: Array<{ record: RunRecord; depth: number }> = [];
  const seen = new Set<string>();
  const visit = async (record: RunRecord, depth: number): Promise<void> => {
    if (seen.has(record.id)) return;
    seen.add(record.id);
    out.push({ record, depth });
    for (const child of await childRunsOf(store, record.id)) await visit(child, depth + 1);
  };
  await visit(root, 0);
  return out;
}

/**
 * The runs `runId` started (its children, not theirs), oldest first: the order the calls
 * were made. Through the store's index by parent; the filter is applied again here, so a
 * store of the caller's own that ignores it still gives a right answer.
 */
export async function childRunsOf(store: RunStore, runId: string): Promise<RunRecord[]> {
  const children = (await store.listRuns({ parentRunId: runId })).filter((r) => r.parentRunId === runId);
  return children.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
}

/** The calls waiting for a person in a run's log (requested, not decided, not finished). */
export function waitingCallsOf(events: readonly RunEvent[], runId: string, depth: number, parentRunId?: string): WaitingCall[] {
  if (events.length === 0) return [];
  const pending = resumeStateFrom(events).pending;
  if (!pending) return [];
  const requests = new Map<string, Extract<RunEvent, { type: 'approval_requested' }>>();
  for (const event of events)
    if (event.type === 'approval_requested' && event.argumentsHash !== undefined) requests.set(event.toolCallId, event);
  const out: WaitingCall[] = [];
  for (const [toolCallId, argumentsHash] of pending.approvalsRequested) {
    if (pending.approvalsDecided.has(toolCallId) || pending.finished.has(toolCallId)) continue;
    const request = requests.get(toolCallId);
    out.push({
      runId,
      depth,
      ...(parentRunId === undefined ? {} : { parentRunId }),
      toolCallId,
      name: request?.name ?? '',
      arguments: request?.arguments ?? {},
      argumentsHash,
    });
  }
  return out;
}

/** Every call the tree under `rootRunId` waits on a person for, root first, then each child depth-first. */
export async function waitingInTree(store: RunStore, rootRunId: string): Promise<WaitingCall[]> {
  const out: WaitingCall[] = [];
  for (const { record, depth } of await runsOfTree(store, rootRunId)) {
    if (record.status !== 'paused' && depth > 0) continue;
    out.push(...waitingCallsOf(await store.loadEvents(record.id), record.id, depth, record.parentRunId));
  }
  return out;
}

/**
 * Logs a person's decision on the waiting calls of the root's descendants that match
 * `decision` (all of them without `toolCallId`; `runId` narrows it to one run), each in its
 * own run's log, under that run's lease. Refused as stale (a `conflict` listing what waits)
 * when it matches none. Returns the calls decided.
 */
export async function decideInTree(
  store: RunStore,
  rootRunId: string,
  decision: { approved?: boolean; reason?: string; toolCallId?: string; argumentsHash?: string; runId?: string },
): Promise<WaitingCall[]> {
  const waiting = (await waitingInTree(store, rootRunId)).filter((w) => w.depth > 0);
  const chosen = waiting.filter(
    (w) =>
      (decision.toolCallId === undefined || w.toolCallId === decision.toolCallId) &&
      (decision.argumentsHash === undefined || w.argumentsHash === decision.argumentsHash) &&
      (decision.runId === undefined || w.runId === decision.runId),
  );
  if (chosen.length === 0) {
    const list = waiting.map((w) => `${w.toolCallId} of run ${w.runId} (arguments ${w.argumentsHash})`).join(', ') || 'none';
    throw new ReinError(
      'conflict',
      'fatal',
      `stale or mismatched decision for run ${rootRunId}: it matches no call waiting for approval in its tree of runs (waiting: ${list})`,
    );
  }
  const approved = decision.approved !== false;
  const byRun = new Map<string, WaitingCall[]>();
  for (const call of chosen) byRun.set(call.runId, [...(byRun.get(call.runId) ?? []), call]);
  for (const [runId, calls] of byRun) {
    const epoch = await store.acquireLease(runId);
    // Read again under the lease: nothing else can append now.
    const events = await store.loadEvents(runId);
    const still = new Set(waitingCallsOf(events, runId, 0).map((w) => w.toolCallId));
    const step = resumeStateFrom(events).pending?.step ?? 0;
    const at = Date.now();
    const decided: RunEvent[] = calls
      .filter((c) => still.has(c.toolCallId))
      .map((c, i) => ({
        type: 'approval_decided',
        runId,
        seq: events.length + i,
        at,
        step,
        toolCallId: c.toolCallId,
        approved,
        argumentsHash: c.argumentsHash,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      }));
    await store.append(runId, epoch, decided);
    await store.updateRun(runId, epoch, { status: 'running' });
  }
  return chosen;
}
