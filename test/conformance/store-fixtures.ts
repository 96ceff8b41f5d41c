/** Events and runs for the store conformance suite: realistic shapes, deterministic content. */
import { expect } from 'vitest';
import { ReinError, type ErrorCode } from '../../src/errors.js';
import type { RunEvent } from '../../src/events.js';
import type { NewRun } from '../../src/store/types.js';

let counter = 0;

/** A run id unique within the test process. */
export function runId(label = 'run'): string {
  counter += 1;
  return `${label}_${process.pid}_${counter}`;
}

/** A new run with a nested config. */
export function newRun(id: string, extra: Partial<NewRun> = {}): NewRun {
  return {
    id,
    model: 'openai/gpt-4o-mini',
    config: {
      system: 'be brief',
      tools: ['calculate', 'roll_dice'],
      limits: { maxSteps: 8, timeoutMs: null },
      note: 'ünïcødé "quoted" \\ 🙂',
    },
    configHash: 'hash-1',
    ...extra,
  };
}

/**
 * `count` small events from `seq`. `writer` is recorded in each (as the request attempt),
 * so a test can tell whose events a log holds.
 */
export function events(id: string, seq: number, count: number, writer = 0): RunEvent[] {
  return Array.from({ length: count }, (_, i): RunEvent => {
    const s = seq + i;
    if (s % 3 === 0) return { type: 'model_request', step: s, attempt: writer, messages: s, runId: id, seq: s, at: 1_700_000_000_000 + s };
    if (s % 3 === 1)
      return { type: 'state_changed', from: 'planning', to: 'tool_calling', step: writer, runId: id, seq: s, at: 1_700_000_000_000 + s };
    return toolFinished(id, s, `result ${s} of writer ${writer}`, writer);
  });
}

/** The writer recorded in an event made by {@link events}. */
export function writerOf(event: RunEvent): number {
  if (event.type === 'model_request') return event.attempt;
  if (event.type === 'state_changed') return event.step;
  if (event.type === 'tool_finished') return event.step;
  throw new Error(`not a fixture event: ${event.type}`);
}

/** A `tool_finished` whose result carries `text`. */
export function toolFinished(id: string, seq: number, text: string, step = 1): RunEvent {
  return {
    type: 'tool_finished',
    step,
    toolCallId: `call_${seq}`,
    name: 'read_file',
    result: {
      role: 'tool',
      toolCallId: `call_${seq}`,
      toolName: 'read_file',
      content: [{ type: 'text', text }],
      isError: false,
      details: { bytes: text.length },
    },
    durationMs: 3,
    runId: id,
    seq,
    at: 1_700_000_000_000 + seq,
  };
}

/** About `bytes` characters of text with quotes, backslashes, newlines and non-ASCII (escaping must round-trip). */
export function bigText(bytes: number): string {
  const line = 'line "quoted" \\ back\tslash ünïcødé 🙂 <tag> & ; DROP TABLE runs; --\n';
  return line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
}

/** A text delta, which no store keeps. */
export function delta(id: string, seq: number): RunEvent {
  return { type: 'text_delta', step: 1, delta: 'Hel', runId: id, seq, at: 1_700_000_000_000 + seq };
}

/** Asserts that `promise` rejects with a ReinError of `code`. */
export async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<ReinError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a ReinError with code ${code}`).toBeInstanceOf(ReinError);
  expect((error as ReinError).code).toBe(code);
  return error as ReinError;
}

/** JSON round trip: what a store can promise to give back. */
export function json<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
