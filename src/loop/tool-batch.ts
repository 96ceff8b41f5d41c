/**
 * Running a turn's tool calls: outcomes in call order, with the write points of
 * tool-calls.ts when the run has a log. Under an approval policy or an `onConfirm` hook the
 * batch is the gated one of approvals.ts. Without a log nothing waits, and synchronous
 * tools cost no promise.
 */
import type { ToolCall } from '../model/types.js';
import type { DispatchOutcome } from '../tools/types.js';
import type { LoopDeps } from './deps.js';
import { runGated } from './approvals.js';
import { answerOrWait } from './call-questions.js';
import { contextOf, emitFinished, idempotencyKey, type PAUSED, runToolsDurably, checkCalls, startedEvent } from './tool-calls.js';

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
  if (deps.approvalPolicy || deps.hooks.onConfirm) return runGated(deps, calls, step, assistantSeq);
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
