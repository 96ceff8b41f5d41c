/**
 * A run's life in a store, apart from the loop: its record and first lease when it starts,
 * the lease taken and the log read when it is resumed, a person's decision logged on a
 * paused run (or on a child of its tree), the checks that refuse continuing a run that is
 * over or whose agent changed, and the record updated when it ends. `Agent` calls these;
 * the queue's approve (src/worker/approve-queued.ts) uses {@link decisionUnderLease} to
 * decide without running.
 */
import type { RunEvent, RunLimits, RunResult } from '../events.js';
import { newRunId, newTraceId } from '../ids.js';
import type { Message, ModelRef, UserMessage } from '../model/types.js';
import { ReinError, toReinError } from '../errors.js';
import type { RunStore } from '../store/types.js';
import { canonicalJson } from '../util/canonical-json.js';
import type { LoopStart } from './deps.js';
import { messagesFromEvents } from './fold.js';
import { resumeStateFrom } from './resume-state.js';
import { RunLog } from './run-log.js';
import { decideInTree, waitingCallsOf } from './tree-approval.js';

/** What a run starts from, once its store (if any) has been set up. */
export interface Prepared {
  traceId: string;
  /** The seq of the first event this process emits. */
  seq: number;
  log?: RunLog;
  start: LoopStart;
  /** A resumed run's log, for the extras to restore their state from. */
  events?: RunEvent[];
  /** Set when the log shows the run already ended: its result, and nothing is run. */
  finished?: RunResult;
}

/** Creates a new run's record and takes its first lease: the log its events go to. */
export async function startStored(
  store: RunStore,
  record: { id: string; model: string; config: unknown; configHash: string; parentRunId?: string },
): Promise<RunLog> {
  await store.createRun(record);
  return new RunLog(store, record.id, await store.acquireLease(record.id));
}

/**
 * Stores a run's `run_started` and enqueues it for the workers in one transaction, on a
 * store with a queue (see `Agent.submit`). A store without one is refused, saying what to use.
 */
export async function submitStored(
  store: RunStore | undefined,
  run: {
    input: UserMessage;
    history: Message[];
    runId?: string;
    agent: string;
    model: ModelRef;
    system: string | undefined;
    tools: string[];
    limits: RunLimits;
    config: unknown;
    configHash: string;
  },
): Promise<{ runId: string }> {
  if (!store)
    throw new ReinError(
      'config',
      'fatal',
      'submitting a run needs a store every worker reaches: new Agent({ store: await openStore("postgres://…"), … })',
    );
  if (!store.queue) {
    throw new ReinError(
      'config',
      'fatal',
      'this store cannot queue runs: workers on other processes or machines must all reach the store, which a SQLite file does not; use Postgres (--store postgres://… or REIN_DATABASE_URL), or run it here (rein run / agent.run)',
    );
  }
  const name = run.agent;
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(name))
    throw new ReinError(
      'config',
      'fatal',
      `submit: the agent name ${JSON.stringify(name)} must be lowercase letters, digits and hyphens (as .rein/agents/<name>.md)`,
    );
  const runId = run.runId ?? newRunId();
  // The record names the agent a worker must drive it with (its hash is the record's configHash).
  const config = { ...(run.config as Record<string, unknown>) };
  config.metadata = { ...((config.metadata as Record<string, unknown> | undefined) ?? {}), queued: { agent: name } };
  const model = run.model;
  // The same run_started the loop emits for a new run (the loop's own is in run-loop.ts `announce`).
  const started: RunEvent = {
    type: 'run_started',
    runId,
    seq: 0,
    at: Date.now(),
    traceId: newTraceId(),
    input: run.input,
    history: run.history,
    model: { provider: model.provider, id: model.id, api: model.api, baseUrl: model.baseUrl },
    ...(run.system === undefined ? {} : { system: run.system }),
    tools: run.tools,
    limits: run.limits,
  };
  await store.queue.submit({ id: runId, model: `${model.provider}/${model.id}`, config, configHash: run.configHash }, [started]);
  return { runId };
}

/** Takes a stored run's lease and reads where it stopped (shared by resume and a tree's approve). */
export async function prepareResume(store: RunStore, runId: string): Promise<Prepared> {
  const epoch = await store.acquireLease(runId);
  // Read the log after taking the lease: nothing can be appended to it any more.
  const events = await store.loadEvents(runId);
  if (events.length === 0) {
    // Created, but its first event never reached the store: nothing ran, nothing to continue.
    await store.updateRun(runId, epoch, { status: 'failed', reason: 'fatal_error' });
    throw new ReinError('conflict', 'fatal', `run ${runId} never started (its first event was not stored): start it again`);
  }
  const state = resumeStateFrom(events);
  const last = events[events.length - 1];
  if (last?.type === 'run_finished' && (last.status === 'done' || last.status === 'stopped')) {
    // The process died after the run's end was logged but before its record said so:
    // the run is over; finish the record from the log and run nothing.
    await store.updateRun(runId, epoch, { status: last.status, reason: last.reason, totals: last.result.totals });
    return {
      traceId: state.traceId,
      seq: events.length,
      finished: { ...last.result, messages: messagesFromEvents(events) } as RunResult,
      start: { kind: 'resume', state, epoch },
    };
  }
  // No longer paused or failed while this process drives it: an approve or a reader of
  // the record now sees it running (an approve then refuses before taking it over).
  if (runRecordStatus(last) !== 'running') await store.updateRun(runId, epoch, { status: 'running' });
  return {
    traceId: state.traceId,
    seq: events.length,
    log: new RunLog(store, runId, epoch),
    start: { kind: 'resume', state, epoch },
    events,
  };
}

/** What a decision says, and which waiting call (of the run or of a run of its tree) it is for. */
export interface ApprovalDecision {
  approved?: boolean;
  reason?: string;
  toolCallId?: string;
  argumentsHash?: string;
  runId?: string;
}

/**
 * Logs a person's decision on a paused run (or on a sub-agent of its tree) under the run's
 * lease, and reads where the run continues from. Checked before the lease is taken: a
 * decision that matches no waiting call is refused as stale, without taking the run from a
 * process that drives it.
 */
export async function approveStored(store: RunStore, runId: string, decision: ApprovalDecision): Promise<Prepared> {
  if (decision.runId !== undefined && decision.runId !== runId) {
    await decideInTree(store, runId, decision);
    return prepareResume(store, runId);
  }
  const before = await store.loadEvents(runId);
  if (waitingCallsOf(before, runId, 0).length === 0) {
    // Nothing of its own waits: a sub-agent of its tree does.
    await decideInTree(store, runId, decision);
    return prepareResume(store, runId);
  }
  const { epoch, events, state, pending, chosen, approved, decided } = await decisionUnderLease(store, runId, decision, before);
  await store.append(runId, epoch, decided);
  // Running from here on: a second approve is refused by the record before it takes the lease.
  await store.updateRun(runId, epoch, { status: 'running' });
  // The state folded above, with the decisions just logged (one fold of the log, not two).
  for (const [toolCallId] of chosen)
    pending.approvalsDecided.set(toolCallId, { approved, ...(decision.reason === undefined ? {} : { reason: decision.reason }) });
  const all = [...events, ...decided];
  return {
    traceId: state.traceId,
    seq: all.length,
    log: new RunLog(store, runId, epoch),
    start: { kind: 'resume', state, epoch },
    events: all,
  };
}

/**
 * A decision on a stored run's waiting calls, under the run's lease: checked against the
 * log read before the lease is taken (a decision that matches nothing must not take the run
 * from a process that drives it) and again against the log read after it (nothing can be
 * appended then). Throws a `conflict` ReinError, writing nothing, when it matches no call.
 * The caller stores `decided` under `epoch` (the run's own append, or the queue's requeue).
 */
export async function decisionUnderLease(
  store: RunStore,
  runId: string,
  decision: { approved?: boolean; reason?: string; toolCallId?: string; argumentsHash?: string },
  before?: RunEvent[],
) {
  choose(runId, resumeStateFrom(before ?? (await store.loadEvents(runId))), decision);
  const epoch = await store.acquireLease(runId);
  const events = await store.loadEvents(runId);
  const state = resumeStateFrom(events);
  const { pending, chosen } = choose(runId, state, decision);
  const approved = decision.approved !== false;
  const decided = decisionEvents(runId, events.length, pending.step, chosen, {
    approved,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  });
  return { epoch, events, state, pending, chosen, approved, decided };
}

/**
 * The `approval_decided` events of a decision on the `chosen` waiting calls of a stored run,
 * numbered on from `seq`.
 */
function decisionEvents(
  runId: string,
  seq: number,
  step: number,
  chosen: ReadonlyArray<[string, string]>,
  decision: { approved: boolean; reason?: string },
): RunEvent[] {
  const at = Date.now();
  return chosen.map(([toolCallId, argumentsHash], i) => ({
    type: 'approval_decided',
    runId,
    seq: seq + i,
    at,
    step,
    toolCallId,
    approved: decision.approved,
    argumentsHash,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  }));
}

/**
 * Checks that a stored run may be continued by an agent whose configuration hashes to
 * `configHash` (shared by resume and approve; `approving` also requires it to be paused).
 * Throws a ReinError that says why not.
 */
export async function checkResumable(
  store: RunStore,
  runId: string,
  agent: { force: boolean; approving: boolean; configHash: string; config: unknown },
): Promise<void> {
  const { force, approving } = agent;
  const record = await store.getRun(runId);
  if (!record) throw new ReinError('not_found', 'fatal', `there is no run ${runId} in the store`);
  if (approving && record.status !== 'paused') {
    throw new ReinError(
      'conflict',
      'fatal',
      `run ${runId} is not waiting for approval (it is ${record.status}): there is nothing to decide`,
    );
  }
  if (record.status === 'done' || record.status === 'stopped') {
    throw new ReinError(
      'conflict',
      'fatal',
      `run ${runId} is ${record.status} (${record.reason ?? 'no reason'}): only a run that crashed, failed, was aborted or is paused can be continued`,
    );
  }
  if (record.configHash !== agent.configHash && !force) {
    const changed = configChanges(record.config, agent.config);
    throw new ReinError(
      'conflict',
      'fatal',
      `the agent changed since run ${runId} started (${changed}): continue it with force (rein resume --force) to go on anyway`,
    );
  }
}

/** Makes the run's end durable and records its status; a failed write fails the run. */
export async function closeLog(store: RunStore, log: RunLog, result: RunResult): Promise<RunResult> {
  try {
    await log.flush();
    await store.updateRun(result.runId, log.epoch, { status: result.status, reason: result.reason, totals: result.totals });
    return result;
  } catch (error) {
    return { ...result, status: 'failed', reason: 'fatal_error', error: toReinError(error, 'store').toJSON() };
  }
}

/**
 * The calls a decision applies to: the waiting calls it matches (all of them without
 * `toolCallId`). Throws a `conflict` ReinError, listing what waits, when it matches none.
 */
function choose(
  runId: string,
  state: ReturnType<typeof resumeStateFrom>,
  decision: { toolCallId?: string; argumentsHash?: string },
): { pending: NonNullable<ReturnType<typeof resumeStateFrom>['pending']>; chosen: Array<[string, string]> } {
  const pending = state.pending;
  const waiting = pending ? [...pending.approvalsRequested].filter(([id]) => !pending.approvalsDecided.has(id)) : [];
  const chosen = waiting.filter(
    ([id, hash]) =>
      (decision.toolCallId === undefined || id === decision.toolCallId) &&
      (decision.argumentsHash === undefined || hash === decision.argumentsHash),
  );
  if (!pending || chosen.length === 0) {
    const list = waiting.map(([id, hash]) => `${id} (arguments ${hash})`).join(', ') || 'none';
    throw new ReinError(
      'conflict',
      'fatal',
      `stale or mismatched decision for run ${runId}: it matches no call waiting for approval (waiting: ${list})`,
    );
  }
  return { pending, chosen };
}

/** The status a run's record should have given its last logged event: `running` unless the log ended it. */
function runRecordStatus(last: RunEvent | undefined): string {
  return last?.type === 'run_finished' ? last.status : 'running';
}

/** What differs between a run's recorded configuration and the agent's, in words: the model, the system prompt, which tools. */
export function configChanges(recorded: unknown, current: unknown): string {
  const record = (value: unknown) => (value !== null && typeof value === 'object' ? value : {}) as Record<string, unknown>;
  const before = record(recorded);
  const now = record(current);
  const out: string[] = [];
  if (before.model !== now.model) out.push(`the model: ${String(before.model)} then, ${String(now.model)} now`);
  if (canonicalJson(before.system ?? null) !== canonicalJson(now.system ?? null)) out.push('the system prompt');
  const tools = (value: unknown) =>
    new Map((Array.isArray(value) ? value : []).map((t: { name?: unknown }) => [String(t?.name), canonicalJson(t)]));
  const a = tools(before.tools);
  const b = tools(now.tools);
  const added = [...b.keys()].filter((n) => !a.has(n));
  const removed = [...a.keys()].filter((n) => !b.has(n));
  const altered = [...b.keys()].filter((n) => a.has(n) && a.get(n) !== b.get(n));
  if (added.length > 0) out.push(`tools added: ${added.join(', ')}`);
  if (removed.length > 0) out.push(`tools removed: ${removed.join(', ')}`);
  if (altered.length > 0) out.push(`tools changed (description, parameters or effect): ${altered.join(', ')}`);
  if (canonicalJson(before.toolSources ?? null) !== canonicalJson(now.toolSources ?? null)) out.push('the tool sources');
  if (canonicalJson(before.allowedTools ?? null) !== canonicalJson(now.allowedTools ?? null)) out.push('the allowed tools');
  return out.length > 0 ? out.join('; ') : 'its configuration';
}
