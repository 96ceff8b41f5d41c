/**
 * The stop rules asked after each tool batch, in their fixed order ({@link STOP_RULES}):
 * done signal, terminate, tool errors, no progress, then the `shouldStopAfterTurn` hook;
 * after a text answer that goes on because a message is queued, only the hook. (Budget is asked last, by the loop, once
 * the turn's results are in the history; queued messages enter only when the run goes on.)
 */
import { ReinError } from '../errors.js';
import { isRecord } from '../util/json.js';
import type { RunLimits, RunTotals, StopReasonCode } from '../events.js';
import type { AssistantMessage, Message, ToolCall } from '../model/types.js';
import type { DispatchOutcome } from '../tools/types.js';
import type { TurnInfo } from './options.js';
import type { LoopDeps } from './deps.js';
import type { RepeatTracker, ToolErrorBreaker } from './stop-rules.js';
import { describe } from './validate.js';
import { ABORTED, untilAborted } from '../tools/until-aborted.js';

/** Why a run ends, with what it produced. */
export interface Stop {
  reason: StopReasonCode;
  error?: ReinError;
  detail?: string;
  output?: unknown;
}

/** What one turn did, for the stop rules. */
export interface TurnFacts {
  calls: ToolCall[];
  outcomes: DispatchOutcome[];
  assistant: AssistantMessage;
  step: number;
  messages: Message[];
  totals: RunTotals;
  repeats: RepeatTracker;
  breaker: ToolErrorBreaker;
}

/**
 * A stop rule: a small named predicate over what a turn did, answering why the run stops,
 * or nothing to go on. Rules may keep counts (the repeat tracker, the error breaker): each
 * is asked only when every rule before it let the run go on, as DESIGN.md orders them.
 */
export type StopRule = (deps: LoopDeps, turn: TurnFacts) => Stop | undefined;

/** `done_signal`: the final-answer tool of an output schema was called with valid arguments. */
export const doneSignal: StopRule = (deps, { outcomes }) => {
  if (!deps.finalAnswerTool) return undefined;
  const done = outcomes.find((o) => o.result.toolName === deps.finalAnswerTool && !o.result.isError);
  return done ? { reason: 'done_signal', output: done.arguments } : undefined;
};

/** `terminate`: every tool of the batch asked to stop (and none failed): no extra model call. */
export const everyToolTerminates: StopRule = (_deps, { outcomes }) => {
  for (const outcome of outcomes) if (!outcome.terminate || outcome.result.isError) return undefined;
  return { reason: 'terminate' };
};

/** `tool_errors` under `stopOnToolError`: the first failing result stops the run. */
export const firstToolError: StopRule = (deps, { outcomes }) =>
  deps.stopOnToolError && outcomes.some((o) => o.result.isError) ? { reason: 'tool_errors' } : undefined;

/** `tool_errors`: the circuit breaker's count of failing results in a row reached its limit. */
export const toolErrorStreak: StopRule = (_deps, { breaker, outcomes }) =>
  breaker.recordOutcomes(outcomes) ? { reason: 'tool_errors' } : undefined;

/** `no_progress`: the same calls (tool and equal arguments), or a short cycle of them, again and again. */
export const noProgress: StopRule = (_deps, { repeats, calls, outcomes }) => {
  const stuck = repeats.recordTurn(calls.map((call, i) => ({ name: call.name, args: outcomes[i]?.arguments ?? call.arguments })));
  return stuck === undefined ? undefined : { reason: 'no_progress', detail: stuck };
};

/** The rules asked after a tool batch, in their order; `shouldStopAfterTurn` is asked after them (it may be async). */
export const STOP_RULES: readonly StopRule[] = [doneSignal, everyToolTerminates, firstToolError, toolErrorStreak, noProgress];

/**
 * The first stop rule that holds after a tool batch, or `undefined` to go on. Synchronous
 * unless a `shouldStopAfterTurn` hook has to be asked.
 */
export function checkStopRules(deps: LoopDeps, t: TurnFacts): Stop | undefined | Promise<Stop | undefined> {
  for (const rule of STOP_RULES) {
    const stop = rule(deps, t);
    if (stop !== undefined) return stop;
  }
  if (!deps.hooks.shouldStopAfterTurn) return undefined;
  return askHook(deps, {
    step: t.step,
    assistant: t.assistant,
    toolResults: t.outcomes.map((o) => o.result),
    messages: t.messages,
    totals: t.totals,
  });
}

/**
 * After a text answer the run goes on only because a steering or follow-up message is
 * queued: no calls, so of the rules only the hook applies (`undefined` without one).
 */
export function checkTextTurn(
  deps: LoopDeps,
  assistant: AssistantMessage,
  step: number,
  messages: Message[],
  totals: RunTotals,
): Promise<Stop | undefined> | undefined {
  if (!deps.hooks.shouldStopAfterTurn) return undefined;
  return askHook(deps, { step, assistant, toolResults: [], messages, totals });
}

function askHook(deps: LoopDeps, info: TurnInfo): Promise<Stop | undefined> {
  const hook = deps.hooks.shouldStopAfterTurn as NonNullable<LoopDeps['hooks']['shouldStopAfterTurn']>;
  // An abort ends the wait; the loop then stops as aborted at its next check.
  return Promise.resolve(untilAborted(Promise.resolve(hook(info)), deps.controls.abortController.signal)).then((answer) =>
    answer === ABORTED ? undefined : hookStop(answer),
  );
}

/**
 * Only `true`, a non-empty reason or `{ stop: true }` stops (an empty string is no reason);
 * `false`, `''`, `{ stop: false }` and nothing at all (`undefined`, `null`: a hook that only
 * sometimes returns) go on. Anything else — `42`, `{ stop: 'yes' }`, a typo such as
 * `{ stpo: true }` — is a mistake that must not pass for "go on" (the run would miss the
 * stop it was meant to make): it ends the run as `fatal_error`, as a throwing hook does,
 * with a `config` error naming the hook and what it must return.
 */
function hookStop(answer: unknown): Stop | undefined {
  if (answer === true) return { reason: 'hook' };
  if (answer === false || answer === undefined || answer === null) return undefined;
  if (typeof answer === 'string') return answer ? { reason: 'hook', detail: answer } : undefined;
  if (isRecord(answer) && typeof answer.stop === 'boolean' && (answer.reason === undefined || typeof answer.reason === 'string')) {
    if (!answer.stop) return undefined;
    return answer.reason ? { reason: 'hook', detail: answer.reason } : { reason: 'hook' };
  }
  const error = new ReinError(
    'config',
    'fatal',
    `hooks.shouldStopAfterTurn must return true, a non-empty reason or { stop: true, reason? } to stop, or false, '', { stop: false } or nothing to go on; it returned ${describe(answer)}`,
  );
  return { reason: 'fatal_error', error };
}

/** `budget`: the run has used its token or USD allowance. */
export function budgetReached(limits: RunLimits, totals: RunTotals): boolean {
  if (limits.maxTokens !== undefined && totals.usage.total >= limits.maxTokens) return true;
  return limits.maxCostUsd !== undefined && (totals.usage.cost?.total ?? 0) >= limits.maxCostUsd;
}
