/**
 * Every approval path of a run in one place: what an approval policy answers (allow, ask,
 * deny, with the rule) and its `permission_decided` record; a person asked through
 * `hooks.onConfirm` (`approval_requested` / `approval_decided`); a durable pause for a
 * decision made later (`approval_requested` alone, decided by `Agent.approve`); and the
 * check of a call a person already approved, bound to the hash of its arguments, when a
 * resume runs it. The tool batch and the resume of a batch ask these; the dispatcher runs
 * the check right before execution (`askConfirm` in tools/dispatch.ts). The batch of a turn
 * under a policy or an `onConfirm` hook is here too (`runGated`): who is asked, in which
 * order, and when the batch pauses.
 */
import { createHash } from 'node:crypto';
import type { ToolCall } from '../model/types.js';
import { isRecord } from '../util/json.js';
import { askConfirm } from '../tools/dispatch.js';
import type { DispatchOutcome, Tool } from '../tools/types.js';
import type { Confirm, LoopDeps, Verdict } from './deps.js';
import { canonicalJson } from '../util/canonical-json.js';
import { errorOutcome } from './error-outcome.js';
import { emitFinished, failedCheck, type Gate, idempotencyKey, PAUSED, prepare, runToolsDurably } from './tool-calls.js';

/** The hash a decision must match: the arguments shown to the person (and run), canonically. */
export function hashArguments(args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex').slice(0, 32);
}

/** A refusal the model reads, for a call the policy or a person denied. */
export function deniedOutcome(call: ToolCall, reason: string): DispatchOutcome {
  return errorOutcome(call, 'tool_denied', `permission denied for tool "${call.name}": ${reason}`);
}

/**
 * A policy's answer as a verdict. Without a policy an `onConfirm` hook is asked about every
 * call (`ask`), and with neither every call is allowed; unknown tools are allowed here (the
 * dispatcher answers those).
 */
export function verdictOf(deps: LoopDeps, call: ToolCall): Verdict | Promise<Verdict> {
  const tool = deps.toolOf(call.name);
  if (!tool) return { decision: 'allow' };
  if (!deps.approvalPolicy) return { decision: deps.hooks.onConfirm ? 'ask' : 'allow' };
  let answer: unknown;
  try {
    answer = deps.approvalPolicy(call, tool);
  } catch (error) {
    return policyFailed(error);
  }
  // A plain JavaScript policy may be async: its promise is an answer too, never a pass.
  if (answer instanceof Promise || (isRecord(answer) && typeof answer.then === 'function')) {
    return Promise.resolve(answer).then(verdictFrom, policyFailed);
  }
  return verdictFrom(answer);
}

const DECISIONS = new Set(['allow', 'ask', 'deny']);
const POLICY_SHAPE = "approvalPolicy must return 'allow', 'ask', 'deny' or { decision, rule?, reason? }";

/** A policy's answer read strictly: anything but a valid decision fails closed (deny), saying what came back. */
function verdictFrom(answer: unknown): Verdict {
  if (typeof answer === 'string' && DECISIONS.has(answer)) return { decision: answer as Verdict['decision'] };
  if (isRecord(answer) && typeof answer.decision === 'string' && DECISIONS.has(answer.decision)) {
    const verdict: Verdict = { decision: answer.decision as Verdict['decision'] };
    if (typeof answer.rule === 'string') verdict.rule = answer.rule;
    if (typeof answer.reason === 'string') verdict.reason = answer.reason;
    return verdict;
  }
  return {
    decision: 'deny',
    rule: 'invalid policy answer',
    reason: `the approval policy returned ${shown(answer)}, which is not a decision (${POLICY_SHAPE}); the call is refused`,
  };
}

function policyFailed(error: unknown): Verdict {
  const message = error instanceof Error ? error.message : shown(error);
  return { decision: 'deny', rule: 'policy failed', reason: `the approval policy failed (${message}); the call is refused` };
}

function shown(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  try {
    const json = JSON.stringify(value);
    return json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    return String(value);
  }
}

/** Why the policy denied a call, as the model reads it (in a batch and on resume alike). */
export function policyRefusal(verdict: Verdict): string {
  return verdict.reason ?? `the permission policy does not allow it${verdict.rule ? ` (rule: ${verdict.rule})` : ''}`;
}

/** Why a call that needs a person was refused: there is no one to ask and nowhere to wait. */
export const NO_ONE_TO_ASK = "it needs a person's approval, and this run has no store to pause in and no onConfirm hook to ask";

/**
 * The policy's verdict on a call, recorded as `permission_decided` with the rule that made
 * it (in a batch and on resume alike; unknown tools are left to the dispatcher). The call
 * carries its checked arguments (see {@link checkCalls}); one whose arguments the
 * dispatcher refuses never reaches the policy: its dispatch answers with what is wrong.
 */
export async function decide(deps: LoopDeps, step: number, call: ToolCall): Promise<Verdict> {
  const verdict = await verdictOf(deps, call);
  // Without a policy there is no rule to record: the `onConfirm` question is the record.
  if (deps.approvalPolicy && deps.toolOf(call.name)) {
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

/** Records that a call waits for a person's decision on `args` (the run pauses once the log has it). */
export function requestApproval(deps: LoopDeps, step: number, call: ToolCall, args: Record<string, unknown>): void {
  deps.emit({
    type: 'approval_requested',
    step,
    toolCallId: call.id,
    name: call.name,
    arguments: args,
    argumentsHash: hashArguments(args),
  });
}

/**
 * Asks `hooks.onConfirm` about one call and the arguments that will run (validated,
 * patched by `beforeToolCall`), recording the question and the answer. A throwing hook, or
 * one that answers neither a boolean nor `{ allow }`, denies. An approval is durable before
 * the tool runs (a resume then knows that a call whose question was never answered never ran).
 */
export async function askPerson(
  deps: LoopDeps,
  step: number,
  call: ToolCall,
  args: Record<string, unknown>,
  tool: Tool,
): Promise<{ allow: boolean; reason?: string }> {
  const onConfirm = deps.hooks.onConfirm as NonNullable<LoopDeps['hooks']['onConfirm']>;
  const hash = hashArguments(args);
  deps.emit({ type: 'approval_requested', step, toolCallId: call.id, name: call.name, arguments: args, argumentsHash: hash });
  const decision = await askConfirm(onConfirm, call, args, tool);
  deps.emit({
    type: 'approval_decided',
    step,
    toolCallId: call.id,
    approved: decision.allow,
    argumentsHash: hash,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  });
  if (decision.allow && deps.log) await deps.log.flush((tool.effect ?? 'unsafe') === 'unsafe' ? 'full' : 'normal');
  return decision;
}

/** A person's check of one call as the dispatcher needs it: a "no" becomes the refusal the model reads. */
export function personCheck(deps: LoopDeps, step: number, call: ToolCall): Confirm {
  return async (args, tool) => {
    const decision = await askPerson(deps, step, call, args, tool);
    return decision.allow ? decision : { allow: false, reason: declined(decision.reason) };
  };
}

/**
 * The check of a call a person already approved (on `rein approve`, or before a crash): it
 * runs only with the arguments whose hash was approved, never with others (a changed
 * `beforeToolCall`, say). Nothing to check for a decision recorded without a hash.
 */
export function approvedCheck(expected: string | undefined): Confirm | undefined {
  if (expected === undefined) return undefined;
  return (args) => {
    const hash = hashArguments(args);
    if (hash === expected) return { allow: true };
    return {
      allow: false,
      reason: `its arguments (hash ${hash}) are not the ones a person approved (hash ${expected}); call it again to be asked about these`,
    };
  };
}

/**
 * The checks of the calls a person must see, asked one at a time in call order even when
 * the calls run in parallel: each question waits until the call before it was answered
 * (or its dispatch ended without a question).
 */
function askInOrder(deps: LoopDeps, step: number, asks: ToolCall[]): Gate {
  const checks = new Map<string, Confirm>();
  const turns = new Map<string, () => void>();
  let previous: Promise<void> = Promise.resolve();
  for (const call of asks) {
    let done!: () => void;
    const turn = new Promise<void>((resolve) => (done = resolve));
    turns.set(call.id, done);
    const before = previous;
    const ask = personCheck(deps, step, call);
    checks.set(call.id, async (args, tool) => {
      await before;
      try {
        return await ask(args, tool);
      } finally {
        done();
      }
    });
    previous = turn;
  }
  return { checks, settled: (id) => turns.get(id)?.() };
}

/**
 * A turn under an approval policy, in the dispatcher's order: validation → beforeToolCall →
 * permission → execution. `deny` refuses before anything runs (no hook sees the call).
 * `ask` with `onConfirm` asks the person inside the dispatch, about the validated and
 * patched arguments that then run; without one, with a store, each such call is validated
 * and patched first (nothing runs), the arguments a person must approve are logged, and
 * the batch pauses; without a store it is refused.
 */
export async function runGated(
  deps: LoopDeps,
  calls: ToolCall[],
  step: number,
  assistantSeq: number,
): Promise<DispatchOutcome[] | typeof PAUSED> {
  const asks: ToolCall[] = [];
  const refusals = new Map<string, string>();
  for (const call of calls) {
    // A call whose arguments fail their check never reaches the policy: its dispatch says what is wrong.
    if (failedCheck(call)) continue;
    const verdict = await decide(deps, step, call);
    if (verdict.decision === 'ask') asks.push(call);
    else if (verdict.decision === 'deny') refusals.set(call.id, policyRefusal(verdict));
  }
  // Calls answered before the batch runs: refused, or failed while being prepared for a person.
  const answered = new Map<string, DispatchOutcome>();
  let gate: Gate | undefined;
  if (asks.length > 0) {
    if (deps.hooks.onConfirm) gate = askInOrder(deps, step, asks);
    else if (!deps.log) {
      // Nowhere to pause: without a store the run cannot wait for a person.
      for (const call of asks) refusals.set(call.id, NO_ONE_TO_ASK);
    } else {
      const signal = deps.controls.abortController.signal;
      let waiting = false;
      for (const call of asks) {
        const key = idempotencyKey(deps.runId, assistantSeq, calls.indexOf(call));
        const prepared = await prepare(deps, call, { signal, runId: deps.runId, idempotencyKey: key, step });
        if (prepared.ok) {
          requestApproval(deps, step, call, prepared.args);
          waiting = true;
        } else {
          emitFinished(deps, step, call, prepared.outcome);
          answered.set(call.id, prepared.outcome);
        }
      }
      if (waiting) {
        // The calls whose arguments failed their check are answered now, with what is wrong.
        for (const call of calls) {
          if (!failedCheck(call)) continue;
          const key = idempotencyKey(deps.runId, assistantSeq, calls.indexOf(call));
          const failed = await prepare(deps, call, { signal, runId: deps.runId, idempotencyKey: key, step });
          const outcome = failed.ok
            ? deniedOutcome(call, 'its arguments could not be checked before the permission decision')
            : failed.outcome;
          emitFinished(deps, step, call, outcome);
        }
        await deps.log.flush();
        return PAUSED;
      }
    }
  }
  // Without a log the durable path is the same minus the waiting: the flushes are no-ops.
  const skip = new Set([...refusals.keys(), ...answered.keys()]);
  const ran = skip.size === calls.length ? [] : await runToolsDurably(deps, calls, step, assistantSeq, skip, gate);
  if (ran === PAUSED) {
    // A sub-agent waits for a person; the refusals are answered now, like the other calls.
    for (const call of calls) {
      const refusal = refusals.get(call.id);
      if (refusal !== undefined) emitFinished(deps, step, call, deniedOutcome(call, refusal));
    }
    await deps.log?.flush();
    return PAUSED;
  }
  const byId = new Map(ran.map((o) => [o.result.toolCallId, o]));
  const outcomes: DispatchOutcome[] = [];
  for (const call of calls) {
    const refusal = refusals.get(call.id);
    if (refusal !== undefined) {
      const outcome = deniedOutcome(call, refusal);
      emitFinished(deps, step, call, outcome);
      outcomes.push(outcome);
    } else outcomes.push(answered.get(call.id) ?? (byId.get(call.id) as DispatchOutcome));
  }
  // One write point for all the refusals: each `tool_finished` is durable before the run goes on.
  if (skip.size > 0) await deps.log?.flush();
  return outcomes;
}
