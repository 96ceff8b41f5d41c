/**
 * What a running tool call tells the loop besides its output, and what the loop tells it:
 * keyed by run and call, held only while the call runs (the run's log is what lasts).
 *
 * - usage spent on the call's behalf (a sub-agent's run, a model answering an MCP server's
 *   sampling request): written into the call's `tool_finished`, so it counts in the run's
 *   totals and budgets;
 * - events to log for the call (an MCP server's sampling request, say), logged just
 *   before its `tool_finished`;
 * - a question the call's tool was asked and nobody here could answer (an MCP
 *   elicitation in a run without a terminal): the call pauses the run instead of finishing;
 * - the answers a person gave to such questions, handed to the call when a resume makes it
 *   again, so the tool answers the same question (asked again) with them.
 */
import type { RunEventBody } from '../events.js';
import type { Usage } from '../model/types.js';

type Of<T extends RunEventBody['type']> = Extract<RunEventBody, { type: T }>;

/**
 * A question a tool call was asked that a person must answer: an MCP server's
 * `elicitation/create` (`form`, `url`), or whether its `sampling/createMessage` may be
 * answered by the model (`sampling`: accept approves it, decline refuses it). What its
 * `elicitation_requested` logs, less what the loop adds (the step and the call).
 */
export type CallQuestion = Omit<Of<'elicitation_requested'>, 'type' | 'step' | 'toolCallId'>;

/** A person's answer to a {@link CallQuestion}, as its `elicitation_answered` logs it. */
export type CallAnswer = Omit<Of<'elicitation_answered'>, 'type' | 'step' | 'toolCallId'>;

const usageOfCalls = new Map<string, Usage>();
const eventsOfCalls = new Map<string, RunEventBody[]>();
const questions = new Map<string, CallQuestion>();
const answersOfCalls = new Map<string, CallAnswer[]>();

const callKey = (runId: string, toolCallId: string): string => `${runId}\u0000${toolCallId}`;

/** Adds usage spent for `toolCallId` of `runId` (summed with what was noted before). */
export function addCallUsage(runId: string, toolCallId: string, usage: Usage): void {
  const key = callKey(runId, toolCallId);
  const before = usageOfCalls.get(key);
  usageOfCalls.set(key, before === undefined ? { ...usage } : sumUsage(before, usage));
}

/** The usage noted for this call (once: it is taken). */
export function takeCallUsage(runId: string, toolCallId: string): Usage | undefined {
  // Asked for every tool call: nothing to look up (and no key to build) when nothing was noted.
  if (usageOfCalls.size === 0) return undefined;
  const key = callKey(runId, toolCallId);
  const usage = usageOfCalls.get(key);
  if (usage !== undefined) usageOfCalls.delete(key);
  return usage;
}

/** Notes an event to log for the call, before its end. */
export function noteCallEvent(runId: string, toolCallId: string, event: RunEventBody): void {
  const key = callKey(runId, toolCallId);
  const list = eventsOfCalls.get(key);
  if (list) list.push(event);
  else eventsOfCalls.set(key, [event]);
}

/** The events noted for this call, in the order noted (once: they are taken). */
export function takeCallEvents(runId: string, toolCallId: string): RunEventBody[] {
  if (eventsOfCalls.size === 0) return [];
  const key = callKey(runId, toolCallId);
  const list = eventsOfCalls.get(key) ?? [];
  eventsOfCalls.delete(key);
  return list;
}

/** Marks a call that waits for a person's answer to `question`: its run pauses instead of finishing it. */
export function pauseCallFor(runId: string, toolCallId: string, question: CallQuestion): void {
  questions.set(callKey(runId, toolCallId), question);
}

/** The question this call waits on, if any (once: the mark is taken). */
export function takeCallQuestion(runId: string, toolCallId: string): CallQuestion | undefined {
  if (questions.size === 0) return undefined;
  const key = callKey(runId, toolCallId);
  const question = questions.get(key);
  if (question !== undefined) questions.delete(key);
  return question;
}

/** Whether this call was marked as waiting (without taking the mark). */
export function callWaits(runId: string, toolCallId: string): boolean {
  return questions.size > 0 && questions.has(callKey(runId, toolCallId));
}

/** Hands a call about to be made again the answers a person gave to its questions (replacing any before). */
export function giveCallAnswers(runId: string, toolCallId: string, answers: readonly CallAnswer[]): void {
  const key = callKey(runId, toolCallId);
  if (answers.length === 0) answersOfCalls.delete(key);
  else answersOfCalls.set(key, [...answers]);
}

/** Forgets the answers handed to a call (it is over). */
export function dropCallAnswers(runId: string, toolCallId: string): void {
  if (answersOfCalls.size > 0) answersOfCalls.delete(callKey(runId, toolCallId));
}

/** The stored answer to the question `requestHash` asked of this call (each answer used once). */
export function takeCallAnswer(runId: string, toolCallId: string, requestHash: string): CallAnswer | undefined {
  const list = answersOfCalls.get(callKey(runId, toolCallId));
  const index = list?.findIndex((a) => a.requestHash === requestHash) ?? -1;
  if (!list || index < 0) return undefined;
  return list.splice(index, 1)[0];
}

function sumUsage(a: Usage, b: Usage): Usage {
  const out: Usage = {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    reasoning: a.reasoning + b.reasoning,
    total: a.total + b.total,
  };
  if (a.estimated || b.estimated) out.estimated = true;
  if (a.cost || b.cost) {
    const z = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
    const x = a.cost ?? z;
    const y = b.cost ?? z;
    out.cost = {
      input: x.input + y.input,
      output: x.output + y.output,
      cacheRead: x.cacheRead + y.cacheRead,
      cacheWrite: x.cacheWrite + y.cacheWrite,
      total: x.total + y.total,
    };
  }
  return out;
}
