/**
 * Running a turn's tool calls: `tool_started` before each dispatch, `tool_finished` after,
 * outcomes in call order. With a durable log the write points of DESIGN.md hold: the
 * assistant message and every `tool_started` are durable before a tool runs (on disk, not
 * just in the OS cache, before an `unsafe` one), and each `tool_finished` is durable before
 * the run goes on. Without a log nothing waits, and synchronous tools cost no promise.
 */
import { createHash } from 'node:crypto';
import type { RunEventBody } from '../events.js';
import type { ToolCall } from '../model/types.js';
import { canonicalJson } from './stop-rules.js';
import type { DispatchOutcome, Tool } from '../tools/types.js';
import type { LoopDeps } from './run-loop.js';
import { crashPoint } from './crash-points.js';

/** The idempotency key of call `index` of the turn whose assistant message has `assistantSeq`. */
export function idempotencyKey(runId: string, assistantSeq: number, index: number): string {
  return `${runId}:${assistantSeq}:${index}`;
}

/** Emits the `tool_finished` of an outcome; `kind` marks one a resume did not run (see `resume-batch.ts`). */
export function emitFinished(deps: LoopDeps, step: number, call: ToolCall, outcome: DispatchOutcome, kind?: 'unknown' | 'reconciled'): void {
  const event: Extract<RunEventBody, { type: 'tool_finished' }> = {
    type: 'tool_finished',
    step,
    toolCallId: call.id,
    name: call.name,
    result: outcome.result,
    durationMs: outcome.durationMs,
  };
  // Optional fields in a fixed order, present only when set (the log stays as compact as before).
  if (outcome.errorCode !== undefined) event.errorCode = outcome.errorCode;
  if (outcome.terminate) event.terminate = true;
  if (kind !== undefined) event.outcome = kind;
  deps.emit(event);
}

/** Returned instead of outcomes when the batch waits for a person's approval. */
export const PAUSED = Symbol('paused');

/** The hash a decision must match: the call's arguments, canonically. */
export function argumentsHash(call: ToolCall): string {
  return createHash('sha256').update(canonicalJson(call.arguments)).digest('hex').slice(0, 32);
}

/** A refusal the model reads, for a call the policy or a person denied. */
export function deniedOutcome(call: ToolCall, reason: string): DispatchOutcome {
  return {
    result: { role: 'tool', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: `permission denied for tool "${call.name}": ${reason}` }], isError: true },
    terminate: false,
    errorCode: 'tool_denied',
    arguments: call.arguments,
    durationMs: 0,
  };
}

/** A policy's decision on a call, with the rule that made it. */
export interface Verdict {
  decision: 'allow' | 'ask' | 'deny';
  rule?: string;
  reason?: string;
}

/** What an approval policy answers: a decision, or a verdict naming the rule that made it. */
export type PolicyAnswer = Verdict['decision'] | Verdict;

/** A policy's answer as a verdict; `allow` without a policy, and for unknown tools (the dispatcher answers those). */
export function verdictOf(deps: LoopDeps, call: ToolCall): Verdict {
  const tool = deps.toolOf(call.name);
  if (!deps.approvalPolicy || !tool) return { decision: 'allow' };
  const answer = deps.approvalPolicy(call, tool);
  return typeof answer === 'string' ? { decision: answer } : answer;
}

/** Why the policy denied a call, as the model reads it (in a batch and on resume alike). */
export function policyRefusal(verdict: Verdict): string {
  return verdict.reason ?? `the permission policy does not allow it${verdict.rule ? ` (rule: ${verdict.rule})` : ''}`;
}

/** Why a call that needs a person was refused: there is no one to ask and nowhere to wait. */
export const NO_ONE_TO_ASK = "it needs a person's approval, and this run has no store to pause in and no onConfirm hook to ask";

/**
 * The policy's verdict on a call, recorded as `permission_decided` with the rule that made
 * it (in a batch and on resume alike; unknown tools are left to the dispatcher).
 */
export function decide(deps: LoopDeps, step: number, call: ToolCall): Verdict {
  const verdict = verdictOf(deps, call);
  if (deps.toolOf(call.name)) {
    deps.emit({
      type: 'permission_decided',
      step,
      toolCallId: call.id,
      name: call.name,
      decision: verdict.decision,
      ...(verdict.rule === undefined ? {} : { rule: verdict.rule }),
      ...(verdict.reason === undefined ? {} : { reason: verdict.reason }),
    });
  }
  return verdict;
}

/** Why a person's "no" refused a call, as the model reads it. */
export function declined(reason: string | undefined): string {
  return reason ? `a person declined it: ${reason}` : 'a person declined it';
}

/** Records that a call waits for a person's decision (the run pauses once the log has it). */
export function requestApproval(deps: LoopDeps, step: number, call: ToolCall, hash: string = argumentsHash(call)): void {
  deps.emit({ type: 'approval_requested', step, toolCallId: call.id, name: call.name, arguments: call.arguments, argumentsHash: hash });
}

/**
 * Asks `hooks.onConfirm` about one call, recording the question and the answer; true when
 * the person allowed it. A throwing hook denies.
 */
export async function askPerson(deps: LoopDeps, step: number, call: ToolCall): Promise<{ allow: boolean; reason?: string }> {
  const onConfirm = deps.hooks.onConfirm as NonNullable<LoopDeps['hooks']['onConfirm']>;
  const hash = argumentsHash(call);
  requestApproval(deps, step, call, hash);
  let decision: { allow: boolean; reason?: string };
  try {
    const answer = await onConfirm(call, call.arguments, deps.toolOf(call.name) as Tool);
    decision = typeof answer === 'boolean' ? { allow: answer } : answer;
  } catch (error) {
    decision = { allow: false, reason: `the approval check failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  deps.emit({
    type: 'approval_decided',
    step,
    toolCallId: call.id,
    approved: decision.allow,
    argumentsHash: hash,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  });
  return decision;
}

/**
 * Runs a turn's calls; see the module comment for what is durable when. A call the policy
 * denies is answered with a refusal; a call it wants a person to see, with no `onConfirm`
 * to ask, pauses the whole batch before anything runs (durably: `approval_requested`).
 */
export function runTools(deps: LoopDeps, calls: ToolCall[], step: number, assistantSeq: number): DispatchOutcome[] | Promise<DispatchOutcome[] | typeof PAUSED> {
  if (deps.approvalPolicy) return runGated(deps, calls, step, assistantSeq);
  if (deps.log) return runToolsDurably(deps, calls, step, assistantSeq);
  const sequential = deps.toolExecution === 'sequential';
  const outcomes: Array<DispatchOutcome | Promise<DispatchOutcome>> = [];
  let waiting = false;
  for (let i = 0; i < calls.length; i++) {
    if (sequential && waiting) return inSequence(deps, calls, step, assistantSeq, outcomes);
    const outcome = startCall(deps, calls[i] as ToolCall, i, step, assistantSeq);
    if (outcome instanceof Promise) waiting = true;
    outcomes.push(outcome);
  }
  return waiting ? Promise.all(outcomes) : (outcomes as DispatchOutcome[]);
}

/** `tool_started`, the dispatch, and `tool_finished` once it is done (at once for a synchronous tool). */
function startCall(deps: LoopDeps, call: ToolCall, index: number, step: number, assistantSeq: number): DispatchOutcome | Promise<DispatchOutcome> {
  const key = idempotencyKey(deps.runId, assistantSeq, index);
  deps.emit({ type: 'tool_started', step, toolCallId: call.id, name: call.name, arguments: call.arguments, idempotencyKey: key });
  const outcome = deps.dispatch(call, { signal: deps.controls.abortController.signal, runId: deps.runId, idempotencyKey: key, step });
  if (outcome instanceof Promise) {
    return outcome.then((o) => {
      emitFinished(deps, step, call, o);
      return o;
    });
  }
  emitFinished(deps, step, call, outcome);
  return outcome;
}

/** Sequential execution once a call had to wait: each call starts after the one before it finished. */
async function inSequence(
  deps: LoopDeps,
  calls: ToolCall[],
  step: number,
  assistantSeq: number,
  started: Array<DispatchOutcome | Promise<DispatchOutcome>>,
): Promise<DispatchOutcome[]> {
  const outcomes: DispatchOutcome[] = [];
  for (const outcome of started) outcomes.push(await outcome);
  for (let i = started.length; i < calls.length; i++) outcomes.push(await startCall(deps, calls[i] as ToolCall, i, step, assistantSeq));
  return outcomes;
}

/** Stands in for the log of a run that has no store: every write point is already reached. */
const NO_LOG = { flush: (): Promise<void> => Promise.resolve() };

async function runToolsDurably(deps: LoopDeps, allCalls: ToolCall[], step: number, assistantSeq: number, skip?: ReadonlySet<string>): Promise<DispatchOutcome[]> {
  // Keys come from each call's position among all the turn's calls, skipped ones included.
  const calls = skip ? allCalls.filter((c) => !skip.has(c.id)) : allCalls;
  const positions = new Map(allCalls.map((c, i) => [c.id, i]));
  const log = deps.log ?? NO_LOG;
  const signal = deps.controls.abortController.signal;
  const start = (call: ToolCall): string => {
    const key = idempotencyKey(deps.runId, assistantSeq, positions.get(call.id) as number);
    deps.emit({ type: 'tool_started', step, toolCallId: call.id, name: call.name, arguments: call.arguments, idempotencyKey: key });
    return key;
  };
  const durability = (batch: ToolCall[]) => (batch.some((c) => (deps.toolOf(c.name)?.effect ?? 'unsafe') === 'unsafe') ? 'full' : 'normal');
  const finish = async (call: ToolCall, key: string): Promise<DispatchOutcome> => {
    crashPoint('before-tool-execute');
    const outcome = await deps.dispatch(call, { signal, runId: deps.runId, idempotencyKey: key, step });
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
      outcomes.push(await finish(call, key));
    }
    return outcomes;
  }
  const keys = calls.map((call) => start(call));
  await log.flush(durability(calls));
  return Promise.all(calls.map((call, i) => finish(call, keys[i] as string)));
}

async function runGated(deps: LoopDeps, calls: ToolCall[], step: number, assistantSeq: number): Promise<DispatchOutcome[] | typeof PAUSED> {
  const asks: ToolCall[] = [];
  const refusals = new Map<string, string>();
  for (const call of calls) {
    const verdict = decide(deps, step, call);
    if (verdict.decision === 'ask') asks.push(call);
    else if (verdict.decision === 'deny') refusals.set(call.id, policyRefusal(verdict));
  }
  if (asks.length > 0) {
    if (deps.hooks.onConfirm) {
      // One question at a time: a person reads them in call order.
      for (const call of asks) {
        const decision = await askPerson(deps, step, call);
        if (!decision.allow) refusals.set(call.id, declined(decision.reason));
      }
    } else if (!deps.log) {
      // Nowhere to pause: without a store the run cannot wait for a person.
      for (const call of asks) refusals.set(call.id, NO_ONE_TO_ASK);
    } else {
      for (const call of asks) requestApproval(deps, step, call);
      await deps.log.flush();
      return PAUSED;
    }
  }
  // Without a log the durable path is the same minus the waiting: the flushes are no-ops.
  const skip = new Set(refusals.keys());
  const ran = skip.size === calls.length ? [] : await runToolsDurably(deps, calls, step, assistantSeq, skip);
  const byId = new Map(ran.map((o) => [o.result.toolCallId, o]));
  const outcomes: DispatchOutcome[] = [];
  for (const call of calls) {
    const refusal = refusals.get(call.id);
    if (refusal !== undefined) {
      const outcome = deniedOutcome(call, refusal);
      emitFinished(deps, step, call, outcome);
      outcomes.push(outcome);
    } else outcomes.push(byId.get(call.id) as DispatchOutcome);
  }
  // One write point for all the refusals: each `tool_finished` is durable before the run goes on.
  if (skip.size > 0) await deps.log?.flush();
  return outcomes;
}
