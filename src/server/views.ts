/**
 * What the API shows of a run: a line of the run list, and the whole picture of one run
 * (record, totals, cost, result, the calls that wait for a person), all derived from the
 * record and the log.
 */
import type { RunEvent, RunTotals } from '../events.js';
import { resumeStateFrom } from '../loop/resume-state.js';
import type { WaitingQuestion } from '../loop/elicitation-answer.js';
import { childRunsOf } from '../loop/tree-approval.js';
import type { RunRecord, RunStore } from '../store/types.js';
import { ApiError } from './api-error.js';
import { servedMetadata } from './types.js';

/** A run as a line of the run list. */
export interface RunSummary {
  id: string;
  status: RunRecord['status'];
  reason?: string;
  agent: string | null;
  task: string | null;
  model: string;
  steps: number;
  tokens: number;
  cost: number | null;
  durationMs: number;
  createdAt: number;
  updatedAt: number;
  live: boolean;
  /** The run whose tool call started this one (a sub-agent's run). */
  parentRunId?: string;
}

/** A sub-agent run of a run, as its parent's detail lists it: its line, and the parent's call it answers. */
export interface ChildRun extends RunSummary {
  parentToolCallId: string | null;
  depth: number;
}

/** A call of a paused run that waits for a person. */
export interface PendingApproval {
  toolCallId: string;
  name: string;
  arguments: Record<string, unknown>;
  argumentsHash: string;
  rule?: string;
  /** The step of the root's own call (absent for a sub-agent's). */
  step?: number;
  /** A call of a sub-agent's run (decided on the root, like the root's own): that run. */
  runId?: string;
  depth?: number;
}

/** The tasks of runs, read once from their first event (it never changes). */
export class TaskCache {
  private readonly tasks = new Map<string, string | null>();

  constructor(private readonly store: RunStore) {}

  async taskOf(record: RunRecord): Promise<string | null> {
    const known = servedMetadata(record).task;
    if (known !== null) return known;
    if (this.tasks.has(record.id)) return this.tasks.get(record.id) ?? null;
    if (record.eventCount === 0) return null;
    const events = await this.store.loadEvents(record.id, 0);
    const task = taskFromEvents(events);
    this.tasks.set(record.id, task);
    return task;
  }
}

/** The start of a run's input, from its `run_started`. */
export function taskFromEvents(events: readonly RunEvent[]): string | null {
  const first = events[0];
  if (first?.type !== 'run_started') return null;
  const content = first.input.content;
  const text = typeof content === 'string' ? content : content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
  return text.slice(0, 200);
}

/** A run's line of the list. `totals` may come from its log (a live run's record has none yet). */
export function summaryOf(record: RunRecord, task: string | null, live: boolean, totals?: RunTotals): RunSummary {
  const t = totals ?? record.totals;
  const { agent } = servedMetadata(record);
  return {
    id: record.id,
    status: record.status,
    ...(record.reason ? { reason: record.reason } : {}),
    agent,
    task,
    model: record.model,
    steps: t?.steps ?? 0,
    tokens: t?.usage.total ?? 0,
    cost: t?.usage.cost?.total ?? null,
    durationMs: t?.durationMs ?? Math.max(0, record.updatedAt - record.createdAt),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    live,
    ...(record.parentRunId ? { parentRunId: record.parentRunId } : {}),
  };
}

/** The sub-agent runs `runId` started (its children, not theirs), oldest first: each with the call it answers. */
export async function childrenOf(store: RunStore, runId: string, isLive: (runId: string) => boolean): Promise<ChildRun[]> {
  const records = await childRunsOf(store, runId);
  return Promise.all(
    records.map(async (record) => {
      const events = record.eventCount > 0 ? await store.loadEvents(record.id, 0) : [];
      const first = events[0];
      const started = first?.type === 'run_started' ? first : undefined;
      const totals = events.length > 0 && started ? resumeStateFrom(events).totals : undefined;
      return {
        ...summaryOf(record, taskFromEvents(events), record.status === 'running' && isLive(record.id), totals),
        ...(started?.agent && !servedMetadata(record).agent ? { agent: started.agent } : {}),
        parentToolCallId: started?.parentToolCallId ?? null,
        depth: started?.depth ?? 1,
      };
    }),
  );
}

/** The whole picture of one run, from its record and its log. */
export function detailOf(
  record: RunRecord,
  events: readonly RunEvent[],
  live: boolean,
  recoveryError?: string,
  children: ChildRun[] = [],
  /** The paused root's descendants' waiting calls (waitingInTree). */
  treePending: PendingApproval[] = [],
) {
  const state = events[0]?.type === 'run_started' ? resumeStateFrom(events) : undefined;
  const totals = state?.totals ??
    record.totals ?? {
      steps: 0,
      toolCalls: 0,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 },
      durationMs: 0,
    };
  // The log's totals leave out time: the records of each process's part are summed by the runs' ends.
  let durationMs = 0;
  let result: Extract<RunEvent, { type: 'run_finished' }>['result'] | null = null;
  for (const event of events) {
    if (event.type === 'run_finished') {
      durationMs += event.result.totals.durationMs;
      result = event.result;
    } else if (event.type === 'run_resumed') result = null;
  }
  totals.durationMs = durationMs || (record.status === 'running' ? Math.max(0, Date.now() - record.createdAt) : 0);
  if (live || record.status === 'running') result = null;
  return {
    record: summaryOf(record, taskFromEvents(events), live, totals),
    totals,
    cost: totals.usage.cost?.total ?? null,
    result,
    // A sub-agent's calls are decided on its root: they are listed there, not here.
    pendingApprovals: record.status === 'paused' && !live && !record.parentRunId ? [...pendingOf(events, state), ...treePending] : [],
    children,
    ...(recoveryError ? { recoveryError } : {}),
  };
}

function pendingOf(events: readonly RunEvent[], state: ReturnType<typeof resumeStateFrom> | undefined): PendingApproval[] {
  const pending = state?.pending;
  if (!pending) return [];
  const rules = new Map<string, string>();
  const args = new Map<string, Record<string, unknown>>();
  for (const event of events) {
    if (event.type === 'permission_decided' && event.rule) rules.set(event.toolCallId, event.rule);
    if (event.type === 'approval_requested') args.set(event.toolCallId, event.arguments);
  }
  const out: PendingApproval[] = [];
  for (const [toolCallId, argumentsHash] of pending.approvalsRequested) {
    if (pending.approvalsDecided.has(toolCallId)) continue;
    const call = pending.calls.find((c) => c.id === toolCallId);
    const rule = rules.get(toolCallId);
    out.push({
      toolCallId,
      name: call?.name ?? '',
      arguments: args.get(toolCallId) ?? call?.arguments ?? {},
      argumentsHash,
      ...(rule ? { rule } : {}),
      step: pending.step,
    });
  }
  return out;
}

/** A page of the run list: `cursor` continues after the last run of the previous page. */
export async function listRuns(
  store: RunStore,
  tasks: TaskCache,
  isLive: (runId: string) => boolean,
  query: { status?: RunRecord['status']; agent?: string; limit?: number; cursor?: string },
): Promise<{ runs: RunSummary[]; nextCursor: string | null }> {
  const limit = query.limit ?? 50;
  let after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const picked: RunRecord[] = [];
  let more = false;
  // Pages of the store until enough match (the agent is filtered here: it is in the record's metadata).
  for (let round = 0; round < 50 && picked.length <= limit; round++) {
    const batch = Math.max(limit + 1, 100);
    const rows = await store.listRuns({
      limit: batch,
      ...(query.status ? { status: query.status } : {}),
      ...(after ? { before: after.t + 1 } : {}),
    });
    const fresh = after ? rows.filter((r) => r.createdAt < after!.t || (r.createdAt === after!.t && r.id < after!.id)) : rows;
    for (const record of fresh) if (query.agent === undefined || servedMetadata(record).agent === query.agent) picked.push(record);
    const last = rows.at(-1);
    if (rows.length < batch || !last) break;
    after = { t: last.createdAt, id: last.id };
    if (fresh.length === 0 && rows.every((r) => r.createdAt === last.createdAt)) {
      // A page of one millisecond only: step past it by time.
      after = { t: last.createdAt, id: '' };
    }
  }
  if (picked.length > limit) {
    more = true;
    picked.length = limit;
  }
  const runs = await Promise.all(picked.map(async (r) => summaryOf(r, await tasks.taskOf(r), isLive(r.id))));
  const lastPicked = picked.at(-1);
  return { runs, nextCursor: more && lastPicked ? encodeCursor({ t: lastPicked.createdAt, id: lastPicked.id }) : null };
}

function encodeCursor(cursor: { t: number; id: string }): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): { t: number; id: string } {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { t?: unknown; id?: unknown };
    if (typeof value.t === 'number' && typeof value.id === 'string') return { t: value.t, id: value.id };
  } catch {
    // not one of ours
  }
  throw new ApiError(
    400,
    'invalid_request',
    'cursor is not a cursor this server gave: pass the nextCursor of the previous page as it was',
    'cursor',
  );
}

/** A question a paused run's call waits on, as `GET /v1/runs/:id` lists it (`PendingQuestionSchema`). */
export function pendingQuestionOf(q: WaitingQuestion) {
  return {
    toolCallId: q.toolCallId,
    name: q.name,
    runId: q.runId,
    step: q.step,
    server: q.server,
    mode: q.mode,
    message: q.message,
    requestHash: q.requestHash,
    ...(q.requestedSchema === undefined ? {} : { requestedSchema: q.requestedSchema }),
    ...(q.url === undefined ? {} : { url: q.url }),
  };
}
