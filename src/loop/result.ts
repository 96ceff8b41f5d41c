/**
 * Turning a stopped run into its {@link RunResult} and final event, and the small sums the
 * loop keeps on the way.
 */
import { ReinError } from '../errors.js';
import type { LoopState, RunResult, RunStatus, RunTotals, StopReasonCode } from '../events.js';
import type { Message } from '../model/types.js';
import type { LoopDeps } from './deps.js';
import type { Stop } from './turn-stops.js';

const STATUS_OF: Record<StopReasonCode, RunStatus> = {
  final_answer: 'done',
  terminate: 'done',
  done_signal: 'done',
  max_steps: 'stopped',
  timeout: 'stopped',
  no_progress: 'stopped',
  budget: 'stopped',
  tool_errors: 'stopped',
  hook: 'stopped',
  answer_too_long: 'stopped',
  aborted: 'aborted',
  fatal_error: 'failed',
  awaiting_approval: 'paused',
};

/** Ends the run: the final state, the result, and the `run_finished` event. */
export function finish(
  deps: LoopDeps,
  stop: Stop | undefined,
  messages: Message[],
  totals: RunTotals,
  started: number,
  output: unknown,
  setState: (s: LoopState) => void,
): RunResult {
  const final = stop ?? { reason: 'fatal_error', error: new ReinError('internal', 'fatal', 'the loop ended without a stop reason') };
  const status = STATUS_OF[final.reason];
  totals.durationMs = Date.now() - started;
  setState(status === 'failed' ? 'failed' : status === 'aborted' ? 'aborted' : status === 'paused' ? 'paused' : 'done');
  const text = lastText(messages);
  const error = final.error === undefined ? undefined : final.error.toJSON();
  // The result, and the same without its messages for the event; optional fields in a
  // fixed order, present only when set.
  const result: RunResult = { runId: deps.runId, traceId: deps.traceId, status, reason: final.reason, text, messages, totals };
  const summary: Omit<RunResult, 'messages'> = { runId: deps.runId, traceId: deps.traceId, status, reason: final.reason, text, totals };
  if (output !== undefined) result.output = summary.output = output;
  if (error !== undefined) result.error = summary.error = error;
  if (final.detail !== undefined) result.detail = summary.detail = final.detail;
  if (deps.agentName !== undefined) result.agent = summary.agent = deps.agentName;
  deps.emit({ type: 'run_finished', status, reason: final.reason, result: summary });
  return result;
}

/** The text of the last assistant message that has any (its refusal, if that is all it has). */
function lastText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Message;
    // Only the run's own answers can be last here in practice; a hand-made history message
    // that slipped through must not turn the run's end into a throw.
    if (m?.role !== 'assistant' || !Array.isArray(m.content)) continue;
    let text = '';
    for (const part of m.content) if (part.type === 'text') text += part.text;
    if (text) return text;
    if (m.refusal) return m.refusal;
  }
  return '';
}
