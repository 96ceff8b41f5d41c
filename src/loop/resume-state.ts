/**
 * What a stored run's log says about where it stopped: the history to continue from, the
 * totals so far, and the tool batch left unfinished when the process died.
 */
import { ReinError } from '../errors.js';
import type { RunEvent, RunStatus, RunTotals } from '../events.js';
import type { Message, ToolCall, ToolResultMessage, UserMessage } from '../model/types.js';
import { messagesFromEvents } from './fold.js';
import { addUsage } from './totals.js';
import { taskFromEvents, type TaskRecord } from '../context/task.js';
import type { CallAnswer } from '../tools/call-side-channel.js';

/** A logged end of one call. */
export interface LoggedFinish {
  result: ToolResultMessage;
  terminate: boolean;
}

/** The tool batch of the last turn, when not every call has its `tool_finished`. */
export interface PendingBatch {
  step: number;
  /** Seq of its `assistant_message`: the idempotency keys are made from it. */
  assistantSeq: number;
  calls: ToolCall[];
  /** Calls whose `tool_started` is logged (their effect may have happened). */
  started: Set<string>;
  /** Calls whose `tool_finished` is logged. */
  finished: Map<string, LoggedFinish>;
  /** Calls that wait for a person, with the arguments hash a decision must match. */
  approvalsRequested: Map<string, string>;
  /** Decisions made (in this or any later process) for calls of this batch. */
  approvalsDecided: Map<string, { approved: boolean; reason?: string }>;
  /** Calls whose tool's last question (`elicitation_requested`) has no answer logged yet. */
  questionsWaiting: Set<string>;
  /** The answers logged for each call's questions, handed to the call when it is made again. */
  answers: Map<string, CallAnswer[]>;
}

/** Where a stored run stopped. */
export interface ResumeState {
  traceId: string;
  input: UserMessage;
  /** The history up to the last turn (without the results of a pending batch). */
  history: Message[];
  totals: RunTotals;
  /** The status the log shows: `running` when the process died without finishing the run. */
  lastStatus: RunStatus | 'running';
  pending?: PendingBatch;
  /** The task record (goal, completed steps, plan) of the whole log, compacted turns included. */
  task: TaskRecord;
}

/** Folds a run's stored events into the state a resume continues from. */
export function resumeStateFrom(events: readonly RunEvent[]): ResumeState {
  const first = events[0];
  if (first?.type !== 'run_started') {
    throw new ReinError(
      'conflict',
      'fatal',
      `run log of ${first?.runId ?? 'an unknown run'} does not begin with run_started: it cannot be resumed`,
    );
  }
  const totals: RunTotals = {
    steps: 0,
    toolCalls: 0,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 },
    durationMs: 0,
  };
  let lastStatus: ResumeState['lastStatus'] = 'running';
  let batchIndex = -1;
  let batch: PendingBatch | undefined;
  // Calls of the pending batch the policy wanted a person to see.
  const asks = new Set<string>();
  events.forEach((event, index) => {
    switch (event.type) {
      case 'assistant_message': {
        totals.steps++;
        addUsage(totals, event.message);
        const calls = event.message.content.filter((c): c is ToolCall => c.type === 'tool_call');
        const complete = event.message.stopReason !== 'error' && event.message.stopReason !== 'aborted';
        batch =
          complete && calls.length > 0
            ? {
                step: event.step,
                assistantSeq: event.seq,
                calls,
                started: new Set(),
                finished: new Map(),
                approvalsRequested: new Map(),
                approvalsDecided: new Map(),
                questionsWaiting: new Set(),
                answers: new Map(),
              }
            : undefined;
        batchIndex = index;
        asks.clear();
        break;
      }
      case 'tool_started':
        batch?.started.add(event.toolCallId);
        break;
      case 'tool_finished':
        totals.toolCalls++;
        // What a sub-agent spent for the call counts as the run's own usage (issue 23).
        if (event.usage)
          addUsage(totals, { role: 'assistant', content: [], stopReason: 'stop', usage: event.usage, provider: '', model: '' });
        batch?.finished.set(event.toolCallId, { result: event.result, terminate: event.terminate === true });
        break;
      case 'approval_requested':
        if (event.argumentsHash !== undefined) batch?.approvalsRequested.set(event.toolCallId, event.argumentsHash);
        break;
      case 'elicitation_requested':
        // The call stopped at its server's question, before the server went on: a resume
        // makes it again (with the answer), whatever its effect.
        batch?.started.delete(event.toolCallId);
        batch?.questionsWaiting.add(event.toolCallId);
        break;
      case 'elicitation_answered': {
        batch?.questionsWaiting.delete(event.toolCallId);
        const answer: CallAnswer = { requestHash: event.requestHash, action: event.action };
        if (event.content !== undefined) answer.content = event.content;
        const list = batch?.answers.get(event.toolCallId);
        if (list) list.push(answer);
        else batch?.answers.set(event.toolCallId, [answer]);
        break;
      }
      case 'permission_decided':
        if (event.decision === 'ask') asks.add(event.toolCallId);
        break;
      case 'approval_decided':
        batch?.approvalsDecided.set(event.toolCallId, {
          approved: event.approved,
          ...(event.reason === undefined ? {} : { reason: event.reason }),
        });
        break;
      case 'run_finished':
        lastStatus = event.status;
        break;
      case 'run_resumed':
        lastStatus = 'running';
        break;
      case 'context_compacted':
        // The summary request's tokens count like a model turn's, without being a step.
        if (event.usage)
          addUsage(totals, { role: 'assistant', content: [], stopReason: 'stop', usage: event.usage, provider: '', model: '' });
        break;
      default:
        break;
    }
  });
  // A person's approval is durable before the call it approves runs (see `askPerson`; a
  // pause is decided by `approve` before anything runs): a call the policy asked about with
  // no decision logged never ran, even when its tool_started is (a person is asked inside
  // the dispatch, after it). It may run once a person approves.
  for (const id of asks) if (!batch?.approvalsDecided.has(id)) batch?.started.delete(id);
  const pending = batch && batch.calls.some((call) => !batch?.finished.has(call.id)) ? batch : undefined;
  const history = pending ? messagesFromEvents(events.slice(0, batchIndex + 1)) : messagesFromEvents(events);
  return {
    traceId: first.traceId,
    input: first.input,
    history,
    totals,
    lastStatus,
    task: taskFromEvents(events),
    ...(pending ? { pending } : {}),
  };
}
