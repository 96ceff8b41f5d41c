/**
 * Answering, from any process, the question a paused run's tool call waits on (an MCP
 * server's elicitation, logged as `elicitation_requested`): the answer is checked against
 * the requested schema (defaults filled in, values coerced), logged as
 * `elicitation_answered` under the run's lease, and the run then resumes, making the call
 * again; the server asks again and is answered with it.
 */
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import { checkForm } from '../mcp/elicitation.js';
import type { RunStore } from '../store/types.js';
import type { CallAnswer } from '../tools/call-side-channel.js';
import { resumeStateFrom } from './resume-state.js';
import { runsOfTree } from './tree-approval.js';

/** A person's answer to what a paused run's call waits on. */
export interface ElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  /** For an accepted form: the fields (checked against the schema; defaults fill what is left out). */
  content?: Record<string, unknown>;
  /** Which waiting call it answers; needed only when several wait. */
  toolCallId?: string;
  /** The run of the tree whose call it answers (a sub-agent's); found from the call when absent. */
  runId?: string;
}

/** A question a paused run's call waits on, as `elicitation_requested` logged it. */
export type WaitingQuestion = Extract<RunEvent, { type: 'elicitation_requested' }> & { name: string };

/** The questions a run's log shows waiting (asked, not answered, the call not finished). */
export function waitingQuestionsOf(events: readonly RunEvent[]): WaitingQuestion[] {
  if (events.length === 0) return [];
  const pending = resumeStateFrom(events).pending;
  if (!pending) return [];
  const last = new Map<string, Extract<RunEvent, { type: 'elicitation_requested' }>>();
  for (const event of events) if (event.type === 'elicitation_requested') last.set(event.toolCallId, event);
  const out: WaitingQuestion[] = [];
  for (const id of pending.questionsWaiting) {
    const asked = last.get(id);
    if (asked === undefined || pending.finished.has(id)) continue;
    out.push({ ...asked, name: pending.calls.find((c) => c.id === id)?.name ?? '' });
  }
  return out;
}

/**
 * The questions waiting in the tree of runs under `rootRunId` (itself first, then each
 * paused sub-agent's run, depth-first): a sub-agent's call asked pauses its run and, with
 * it, its ancestors up to the root, where it is answered.
 */
export async function waitingQuestionsInTree(store: RunStore, rootRunId: string): Promise<WaitingQuestion[]> {
  const out: WaitingQuestion[] = [];
  for (const { record, depth } of await runsOfTree(store, rootRunId)) {
    if (record.status !== 'paused' && depth > 0) continue;
    out.push(...waitingQuestionsOf(await store.loadEvents(record.id)));
  }
  return out;
}

/** Longest part of a server's question an error repeats: enough to say which question it is. */
const QUOTED_CHARS = 200;

/** The server's question as an error names it: on one line, and cut when long. */
function quotedQuestion(message: string): string {
  const line = message.replace(/\s+/g, ' ').trim();
  return JSON.stringify(line.length > QUOTED_CHARS ? `${line.slice(0, QUOTED_CHARS)}…` : line);
}

/** The answer as it is logged: an accepted form checked against the schema, with its defaults. */
export async function checkedAnswer(question: WaitingQuestion, answer: ElicitationAnswer): Promise<CallAnswer> {
  const out: CallAnswer = { requestHash: question.requestHash, action: answer.action };
  if (answer.action !== 'accept' || question.mode === 'url' || !question.requestedSchema) return out;
  // A field the form does not have is refused, not sent on: most often a misspelt name,
  // whose value would otherwise be lost while the field it meant took its default.
  const fields = Object.keys(question.requestedSchema.properties ?? {});
  const unknown = Object.keys(answer.content ?? {}).filter((name) => !fields.includes(name));
  const checked = await checkForm(question.requestedSchema, answer.content ?? {});
  const errors = [
    ...unknown.map((name) => `the form has no field "${name}" (its fields: ${fields.join(', ') || 'none'})`),
    ...(checked.ok ? [] : checked.errors),
  ];
  if (errors.length > 0 || !checked.ok) {
    throw new ReinError(
      'config',
      'fatal',
      `the answer to ${quotedQuestion(question.message)} does not fit the requested form: ${errors.join('; ')}`,
    );
  }
  out.content = checked.value as NonNullable<CallAnswer['content']>;
  return out;
}

/**
 * Logs the answer to the one question it matches, in the log of the run whose call waits
 * (the root's, or a sub-agent's of its tree; checked before the run is taken: an answer
 * that matches nothing, or does not fit, leaves the run as it was), and marks that run
 * running. The caller resumes the root, which resumes the sub-agent.
 */
export async function recordElicitationAnswer(store: RunStore, rootRunId: string, answer: ElicitationAnswer): Promise<void> {
  // The run whose call waits: the root's own, or a sub-agent's of its tree.
  let runId = answer.runId ?? rootRunId;
  if (answer.runId === undefined && waitingQuestionsOf(await store.loadEvents(rootRunId)).length === 0) {
    const inTree = (await waitingQuestionsInTree(store, rootRunId)).filter(
      (q) => answer.toolCallId === undefined || q.toolCallId === answer.toolCallId,
    );
    const runs = [...new Set(inTree.map((q) => q.runId))];
    if (runs.length === 1) runId = runs[0] as string;
  }
  const checked = await checkedAnswer(chooseQuestion(runId, await store.loadEvents(runId), answer), answer);
  const epoch = await store.acquireLease(runId);
  // Read again under the lease: nothing can be appended any more, and it must still wait.
  await store.append(runId, epoch, [answeredEvent(runId, await store.loadEvents(runId), answer, checked)]);
  // Running from here on: a second answer is refused by the record before it takes the lease.
  await store.updateRun(runId, epoch, { status: 'running' });
}

/**
 * The `elicitation_answered` event that logs `checked` after `events` (read under the run's
 * lease): throws a `conflict` ReinError when no call of the log waits for the answer any more.
 */
export function answeredEvent(runId: string, events: readonly RunEvent[], answer: ElicitationAnswer, checked: CallAnswer): RunEvent {
  const still = chooseQuestion(runId, events, answer);
  return {
    type: 'elicitation_answered',
    runId,
    seq: events.length,
    at: Date.now(),
    step: still.step,
    toolCallId: still.toolCallId,
    requestHash: checked.requestHash,
    action: checked.action,
    ...(checked.content === undefined ? {} : { content: checked.content }),
  };
}

/** The one question of the log `answer` is for; a `conflict` or `config` ReinError when none or several. */
export function chooseQuestion(runId: string, events: readonly RunEvent[], answer: ElicitationAnswer): WaitingQuestion {
  const waiting = waitingQuestionsOf(events);
  const matching = waiting.filter((q) => answer.toolCallId === undefined || q.toolCallId === answer.toolCallId);
  const list = waiting.map((q) => `${q.toolCallId} (${q.name}: "${q.message}")`).join(', ') || 'none';
  if (matching.length === 0)
    throw new ReinError('conflict', 'fatal', `run ${runId} has no call waiting for that answer (waiting: ${list})`);
  if (matching.length > 1)
    throw new ReinError('config', 'fatal', `several calls of run ${runId} wait for an answer: name one with its tool call id (${list})`);
  return matching[0] as WaitingQuestion;
}
