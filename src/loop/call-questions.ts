/**
 * A tool call that waits for a person's answer to a question its tool was asked (an MCP
 * server's elicitation in a run without a terminal): with a store the call stays
 * unfinished, `elicitation_requested` is logged and the batch pauses, like a call waiting
 * for approval; without one there is nowhere to wait, and the call ends with an error the
 * model reads. On resume the answers logged for the call (`elicitation_answered`) are handed
 * to it before it is made again, so its tool answers the same question with them.
 */
import type { RunEventBody } from '../events.js';
import type { ToolCall } from '../model/types.js';
import { giveCallAnswers, takeCallEvents, takeCallQuestion, type CallAnswer } from '../tools/call-side-channel.js';
import type { DispatchOutcome } from '../tools/types.js';
import type { LoopDeps } from './deps.js';
import { errorOutcome } from './error-outcome.js';

/** Returned instead of an outcome for a call that waits for a person's answer. */
export const WAITS_FOR_ANSWER = Symbol('waits for an answer');

/** Logs the events noted for a call while it ran (before its end, or its pause). */
export function logCallEvents(deps: LoopDeps, step: number, call: ToolCall): void {
  for (const event of takeCallEvents(deps.runId, call.id)) deps.emit(atStep(event, step));
}

/**
 * After a call's dispatch: {@link WAITS_FOR_ANSWER} once its question is logged (a run with
 * a store), the error outcome the model reads (a run without one), or the outcome as it was.
 */
export function answerOrWait(
  deps: LoopDeps,
  step: number,
  call: ToolCall,
  outcome: DispatchOutcome,
): DispatchOutcome | typeof WAITS_FOR_ANSWER {
  const question = takeCallQuestion(deps.runId, call.id);
  if (question === undefined) return outcome;
  if (deps.log) {
    logCallEvents(deps, step, call);
    deps.emit({ type: 'elicitation_requested', step, toolCallId: call.id, ...question });
    return WAITS_FOR_ANSWER;
  }
  const text =
    `MCP server "${question.server}" asked a person: "${question.message}", and this run can neither ask ` +
    'nor wait for an answer (no terminal, no store to pause in): the call did not complete';
  return errorOutcome(call, 'tool_failed', text, outcome.durationMs);
}

/** Hands a call about to be made again on resume the answers logged for it. */
export function handAnswers(deps: LoopDeps, call: ToolCall, answers: readonly CallAnswer[] | undefined): void {
  if (answers !== undefined) giveCallAnswers(deps.runId, call.id, answers);
}

function atStep(event: RunEventBody, step: number): RunEventBody {
  return 'step' in event ? ({ ...event, step } as RunEventBody) : event;
}
