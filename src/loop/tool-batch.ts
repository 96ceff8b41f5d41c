/**
 * Running a turn's tool calls: `tool_started` before each dispatch, `tool_finished` after,
 * outcomes in call order. With a durable log the write points of DESIGN.md hold: the
 * assistant message and every `tool_started` are durable before a tool runs (on disk, not
 * just in the OS cache, before an `unsafe` one), and each `tool_finished` is durable before
 * the run goes on. Without a log nothing waits, and synchronous tools cost no promise.
 */
import type { RunEventBody } from '../events.js';
import type { ToolCall } from '../model/types.js';
import type { CheckedCall, DispatchOutcome } from '../tools/types.js';
import type { Confirm, LoopDeps } from './deps.js';
import { decide, deniedOutcome, NO_ONE_TO_ASK, personCheck, policyRefusal, requestApproval } from './approvals.js';
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
const CHILD_PAUSED = Symbol('child paused');

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
const UNCHECKED: Confirm = () => ({ allow: false, reason: 'its arguments could not be checked before the permission decision' });

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

/**
 * Runs a turn's calls; see the module comment for what is durable when. A call the policy
 * denies is answered with a refusal; a call it wants a person to see, with no `onConfirm`
 * to ask, pauses the whole batch before anything runs (durably: `approval_requested`).
 */
export function runTools(
  deps: LoopDeps,
  modelCalls: ToolCall[],
  step: number,
  assistantSeq: number,
): DispatchOutcome[] | Promise<DispatchOutcome[] | typeof PAUSED> {
  const checked = checkCalls(deps, modelCalls);
  if (checked instanceof Promise) return checked.then((calls) => runChecked(deps, calls, step, assistantSeq));
  return runChecked(deps, checked, step, assistantSeq);
}

function runChecked(
  deps: LoopDeps,
  calls: ToolCall[],
  step: number,
  assistantSeq: number,
): DispatchOutcome[] | Promise<DispatchOutcome[] | typeof PAUSED> {
  if (deps.approvalPolicy) return runGated(deps, calls, step, assistantSeq);
  if (deps.log) return runToolsDurably(deps, calls, step, assistantSeq);
  const sequential = deps.toolExecution === 'sequential';
  const outcomes: Array<DispatchOutcome | Promise<DispatchOutcome>> = [];
  // Parallel calls all start before any finishes, as in the durable path: the order of a
  // batch's events is then the same whether a call is synchronous or waits (a validator
  // compiled on first use, or shared with an earlier tool of the same schema), so a replay
  // in the same process does not diverge from its recording.
  const keys = sequential ? undefined : calls.map((call, i) => emitStarted(deps, call, i, step, assistantSeq));
  let waiting = false;
  for (let i = 0; i < calls.length; i++) {
    if (sequential && waiting) return inSequence(deps, calls, step, assistantSeq, outcomes);
    const outcome = startCall(deps, calls[i] as ToolCall, i, step, assistantSeq, keys?.[i]);
    if (outcome instanceof Promise) waiting = true;
    outcomes.push(outcome);
  }
  return waiting ? Promise.all(outcomes) : (outcomes as DispatchOutcome[]);
}

function emitStarted(deps: LoopDeps, call: ToolCall, index: number, step: number, assistantSeq: number): string {
  const key = idempotencyKey(deps.runId, assistantSeq, index);
  deps.emit(startedEvent(step, call, key));
  return key;
}

/** `tool_started` (unless already emitted: `startedKey`), the dispatch, and `tool_finished` once it is done (at once for a synchronous tool). */
function startCall(
  deps: LoopDeps,
  call: ToolCall,
  index: number,
  step: number,
  assistantSeq: number,
  startedKey?: string,
): DispatchOutcome | Promise<DispatchOutcome> {
  const key = startedKey ?? emitStarted(deps, call, index, step, assistantSeq);
  const outcome = deps.dispatch(
    call,
    contextOf(call, { signal: deps.controls.abortController.signal, runId: deps.runId, idempotencyKey: key, step }),
  );
  // Without a log a call cannot wait for a person's answer: `answerOrWait` makes it an error.
  if (outcome instanceof Promise) {
    return outcome.then((o) => {
      const answered = answerOrWait(deps, step, call, o) as DispatchOutcome;
      emitFinished(deps, step, call, answered);
      return answered;
    });
  }
  const answered = answerOrWait(deps, step, call, outcome) as DispatchOutcome;
  emitFinished(deps, step, call, answered);
  return answered;
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

async function runToolsDurably(
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

/** The person's checks of a batch's gated calls, and what tells the next question it may go. */
interface Gate {
  checks: ReadonlyMap<string, Confirm>;
  /** A call's dispatch is over (asked or not: it may have failed validation first). */
  settled(id: string): void;
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
async function runGated(deps: LoopDeps, calls: ToolCall[], step: number, assistantSeq: number): Promise<DispatchOutcome[] | typeof PAUSED> {
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
