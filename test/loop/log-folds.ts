/** The check every hostile-input test ends with: the stored log is whole and folds to the run's result. */
import { expect } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { messagesFromEvents } from '../../src/loop/fold.js';
import { resumeStateFrom } from '../../src/loop/resume-state.js';
import type { RunResult } from '../../src/events.js';

/** The stop reasons docs/events.md lists for `run_finished`. */
export const DOCUMENTED_REASONS = new Set([
  'final_answer',
  'terminate',
  'done_signal',
  'max_steps',
  'timeout',
  'aborted',
  'no_progress',
  'budget',
  'tool_errors',
  'fatal_error',
  'awaiting_approval',
  'hook',
  'answer_too_long',
]);

/** Asserts `stored` (a run's stored events) begins with run_started, ends with run_finished as `result` says, and folds to its history. */
export function expectLogFoldsTo(stored: readonly RunEvent[], result: RunResult): void {
  expect(stored[0]?.type).toBe('run_started');
  const last = stored.at(-1);
  expect(last).toMatchObject({ type: 'run_finished', runId: result.runId, status: result.status, reason: result.reason });
  expect(DOCUMENTED_REASONS.has(result.reason)).toBe(true);
  expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i));
  expect(resumeStateFrom(stored).lastStatus).toBe(result.status);
  expect(messagesFromEvents(stored)).toEqual(result.messages);
}
