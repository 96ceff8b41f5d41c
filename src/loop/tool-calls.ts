/**
 * One turn's tool calls, step by step: each call's arguments checked before anything is
 * recorded or decided, `tool_started` before its dispatch, `tool_finished` after, with the
 * idempotency key of its position in the turn. With a durable log the write points of
 * DESIGN.md hold: the assistant message and every `tool_started` are durable before a tool
 * runs (on disk, not just in the OS cache, before an `unsafe` one), and each
 * `tool_finished` is durable before the run goes on. The batch (tool-batch.ts), the gated
 * batch (approvals.ts) and the resume of a batch (resume-batch.ts) are built of these.
 */
import type { RunEventBody } from '../events.js';
import type { ToolCall } from '../model/types.js';
import type { CheckedCall, DispatchOutcome } from '../tools/types.js';
import type { Confirm, LoopDeps } from './deps.js';
import { crashPoint } from './crash-points.js';
import { takeChildPaused, takeChildUsage } from './run-tree.js';
import { handoffEventOf } from './handoff-tool.js';
import { answerOrWait, logCallEvents, WAITS_FOR_ANSWER } from './call-questions.js';

/** The idempotency key of call `index` of the turn whose assistant message has `assistantSeq`. */
export function idempotencyKey(runId: string, assistantSeq: number, index: number): string {
  return `${runId}:${assistantSeq}:${index}`;
}

/** Emits the `tool_finished` of an outcome; `kind` marks one a resume did not run (see `resume-batch.ts`). */
export function emitFinished(
  deps: LoopDeps,
  step: number,
  call: ToolCall,
  outcome: DispatchOutcome,
  kind?: 'unknown' | 'reconciled',
): void {
  const event: Extract<RunEventBody, { type: 'tool_finished' }> = {
    type: 'tool_finished',
    step,
    toolCallId: call.id,
    name: call.name,
    result: outcome.result,
    durationMs: outcome.durationMs,
  };
  // What the call's tool noted while it ran (an MCP server's sampling, say) comes first.
  logCallEvents(deps, step, call);
  // Optional fields in a fixed order, present only when set (the log stays as compact as before).
  if (outcome.errorCode !== undefined) event.errorCode = outcome.errorCode;
  if (outcome.terminate) event.terminate = true;
  if (kind !== undefined) event.outcome = kind;
  // A sub-agent call carries what its child spent: the fold of this log counts it too.
  const usage = outcome.usage ?? takeChildUsage(deps.runId, call.id);
  if (usage !== undefined) event.usage = outcome.usage = usage;
  deps.emit(event);
  // A handoff tool's call: the switch is logged with its end (see handoff-tool.ts).
  const handoff = handoffEventOf(deps.runId, call.id, step, deps.agentName, !outcome.result.isError);
  if (handoff !== undefined) deps.emit(handoff);
}

/** A call whose sub-agent paused for a person: it has no end yet, and its batch pauses (issue 23). */
export const CHILD_PAUSED = Symbol('child paused');

/** Returned instead of outcomes when the batch waits for a person's approval. */
export const PAUSED = Symbol('paused');

/** What the dispatcher answered about each checked call (see {@link checkCalls}). */
const CHECKED = new WeakMap<ToolCall, { answer: CheckedCall; differs: boolean }>();

/**
 * The calls as their tools will receive them: each one's arguments repaired, coerced and
 * completed with defaults by the dispatcher, before anything is recorded or decided, so
 * that `tool_started`, the trace, the policy, a person and replays all see what runs. A
 * call whose arguments the dispatcher refuses keeps the model's (its dispatch answers with
 * the reason). Synchronous once every schema is compiled.
 */
export function checkCalls(deps: LoopDeps, calls: ToolCall[]): ToolCall[] | Promise<ToolCall[]> {
  let waiting = false;
  const answers = calls.map((call) => {
    const answer = deps.check(call);
    if (answer instanceof Promise) waiting = true;
    return answer;
  });
  const build = (done: CheckedCall[]): ToolCall[] => calls.map((call, i) => withChecked(call, done[i] as CheckedCall));
  return waiting ? Promise.all(answers).then(build) : build(answers as CheckedCall[]);
}

/** One call, checked (for a resume, which takes its calls one at a time). */
export async function checkCall(deps: LoopDeps, call: ToolCall): Promise<ToolCall> {
  return withChecked(call, await deps.check(call));
}

function withChecked(call: ToolCall, answer: CheckedCall): ToolCall {
  if (CHECKED.has(call)) return call;
  const checked = answer.ok ? { ...call, arguments: answer.arguments } : call;
  // The model's text stays beside the arguments when they are not simply what it says.
  const differs = answer.ok
    ? answer.repaired || JSON.stringify(answer.arguments) !== JSON.stringify(call.arguments)
    : JSON.stringify(call.arguments) !== call.rawArguments;
  CHECKED.set(checked, { answer, differs });
  return checked;
}

/** Whether the dispatcher refused a checked call's arguments: it never reaches the policy or a person. */
export function failedCheck(call: ToolCall): boolean {
  return CHECKED.get(call)?.answer.ok === false;
}

/** A call's `tool_started`: its checked arguments, and the model's text when that differs. */
export function startedEvent(step: number, call: ToolCall, key: string): Extract<RunEventBody, { type: 'tool_started' }> {
  const event: Extract<RunEventBody, { type: 'tool_started' }> = {
    type: 'tool_started',
    step,
    toolCallId: call.id,
    name: call.name,
    arguments: call.arguments,
    idempotencyKey: key,
  };
  const checked = CHECKED.get(call);
  if (checked?.differs && typeof call.rawArguments === 'string') event.rawArguments = call.rawArguments;
  if (checked?.answer.ok && checked.answer.repairs) {
    event.repairs = checked.answer.repairs;
    if (checked.answer.repairedArguments !== undefined) event.repairedArguments = checked.answer.repairedArguments;
  }
  return event;
}

/** The dispatch context of a call: with its checked arguments, so they are the ones that run. */
export function contextOf(call: ToolCall, ctx: { signal: AbortSignal; runId: string; idempotencyKey: string; step: number }): DispatchCtx {
  const checked = CHECKED.get(call)?.answer;
  return checked?.ok ? { ...ctx, checkedArguments: checked.arguments } : ctx;
}

type DispatchCtx = Parameters<LoopDeps['dispatch']>[1];

/** The check of a gated call whose arguments failed before the policy saw them: should its dispatch get this far, it is refused. */
export const UNCHECKED: Confirm = () => ({ allow: false, reason: 'its arguments could not be checked before the permission decision' });

/**
 * Validates a call and runs `beforeToolCall` without executing it: the arguments a person
 * must approve before a pause. A call that fails on the way (invalid arguments, blocked
 * by the hook, refused) needs no one: its outcome is the answer.
 */
export async function prepare(
  deps: LoopDeps,
  call: ToolCall,
  ctx: { signal: AbortSignal; runId: string; idempotencyKey: string; step: number },
): Promise<{ ok: true; args: Record<string, unknown> } | { ok: false; outcome: DispatchOutcome }> {
  let prepared: Record<string, unknown> | undefined;
  const outcome = await deps.dispatch(call, contextOf(call, ctx), (args) => {
    prepared = args;
    return { allow: false, reason: 'it waits for a person' };
  });
  return prepared ? { ok: true, args: prepared } : { ok: false, outcome };
}

/** The person's checks of a batch's gated calls, and what tells the next question it may go. */
export interface Gate {
  checks: ReadonlyMap<string, Confirm>;
  /** A call's dispatch is over (asked or not: it may have failed validation first). */
  settled(id: string): void;
}

/** Stands in for the log of a run that has no store: every write point is already reached. */
const NO_LOG = { flush: (): Promise<void> => Promise.resolve() };

export async function runToolsDurably(
  deps: LoopDeps,
  allCalls: ToolCall[],
  step: number,
  assistantSeq: number,
  skip?: ReadonlySet<string>,
  gate?: Gate,
): Promise<DispatchOutcome[] | typeof PAUSED> {
  // Keys come from each call's position among all the turn's calls, skipped ones included.
  const calls = skip ? allCalls.filter((c) => !skip.has(c.id)) : allCalls;
  const positions = new Map(allCalls.map((c, i) => [c.id, i]));
  const log = deps.log ?? NO_LOG;
  const signal = deps.controls.abortController.signal;
  const start = (call: ToolCall): string => {
    const key = idempotencyKey(deps.runId, assistantSeq, positions.get(call.id) as number);
    deps.emit(startedEvent(step, call, key));
    return key;
  };
  const durability = (batch: ToolCall[]) => (batch.some((c) => (deps.toolOf(c.name)?.effect ?? 'unsafe') === 'unsafe') ? 'full' : 'normal');
  const finish = async (call: ToolCall, key: string): Promise<DispatchOutcome | typeof CHILD_PAUSED> => {
    crashPoint('before-tool-execute');
    const confirm = gate?.checks.get(call.id) ?? (deps.approvalPolicy && failedCheck(call) ? UNCHECKED : undefined);
    const dispatched = await deps.dispatch(call, contextOf(call, { signal, runId: deps.runId, idempotencyKey: key, step }), confirm);
    gate?.settled(call.id);
    if (takeChildPaused(deps.runId, call.id)) return CHILD_PAUSED;
    // Its tool was asked something only a person can answer: the call waits like a paused child.
    const outcome = answerOrWait(deps, step, call, dispatched);
    if (outcome === WAITS_FOR_ANSWER) return CHILD_PAUSED;
    emitFinished(deps, step, call, outcome);
    await log.flush();
    crashPoint('after-tool-finished');
    return outcome;
  };
  if (deps.toolExecution === 'sequential') {
    const outcomes: DispatchOutcome[] = [];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i] as ToolCall;
      const key = start(call);
      await log.flush(durability([call]));
      const outcome = await finish(call, key);
      // The calls after one whose sub-agent waits for a person wait too (unstarted: a resume runs them).
      if (outcome === CHILD_PAUSED) return PAUSED;
      outcomes.push(outcome);
    }
    return outcomes;
  }
  const keys = calls.map((call) => start(call));
  await log.flush(durability(calls));
  const outcomes = await Promise.all(calls.map((call, i) => finish(call, keys[i] as string)));
  // The other calls of the batch are finished and logged; the paused one is finished by a resume.
  if (outcomes.includes(CHILD_PAUSED)) return PAUSED;
  return outcomes as DispatchOutcome[];
}
