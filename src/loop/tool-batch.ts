/**
 * Running a turn's tool calls: `tool_started` before each dispatch, `tool_finished` after,
 * outcomes in call order. With a durable log the write points of DESIGN.md hold: the
 * assistant message and every `tool_started` are durable before a tool runs (on disk, not
 * just in the OS cache, before an `unsafe` one), and each `tool_finished` is durable before
 * the run goes on. Without a log nothing waits, and synchronous tools cost no promise.
 */
import type { ToolCall } from '../model/types.js';
import type { DispatchOutcome, Tool } from '../tools/types.js';
import type { LoopDeps } from './run-loop.js';

/** The idempotency key of call `index` of the turn whose assistant message has `assistantSeq`. */
export function idempotencyKey(runId: string, assistantSeq: number, index: number): string {
  return `${runId}:${assistantSeq}:${index}`;
}

/** Emits the `tool_finished` of an outcome. */
export function emitFinished(deps: LoopDeps, step: number, call: ToolCall, outcome: DispatchOutcome, extra: { outcome?: 'unknown' | 'reconciled' } = {}): void {
  deps.emit({
    type: 'tool_finished',
    step,
    toolCallId: call.id,
    name: call.name,
    result: outcome.result,
    durationMs: outcome.durationMs,
    ...(outcome.errorCode === undefined ? {} : { errorCode: outcome.errorCode }),
    ...(outcome.terminate ? { terminate: true } : {}),
    ...extra,
  });
}

/** Runs a turn's calls; see the module comment for what is durable when. */
export function runTools(deps: LoopDeps, calls: ToolCall[], step: number, assistantSeq: number): DispatchOutcome[] | Promise<DispatchOutcome[]> {
  if (deps.log) return runToolsDurably(deps, calls, step, assistantSeq);
  const signal = deps.controls.abortController.signal;
  const one = (call: ToolCall, index: number): DispatchOutcome | Promise<DispatchOutcome> => {
    const key = idempotencyKey(deps.runId, assistantSeq, index);
    deps.emit({ type: 'tool_started', step, toolCallId: call.id, name: call.name, arguments: call.arguments, idempotencyKey: key });
    const outcome = deps.dispatch(call, { signal, runId: deps.runId, idempotencyKey: key, step });
    const finished = (o: DispatchOutcome): DispatchOutcome => {
      emitFinished(deps, step, call, o);
      return o;
    };
    return outcome instanceof Promise ? outcome.then(finished) : finished(outcome);
  };
  if (deps.toolExecution === 'sequential') return inSequence(calls, one);
  const outcomes = calls.map(one);
  return outcomes.some((o) => o instanceof Promise) ? Promise.all(outcomes) : (outcomes as DispatchOutcome[]);
}

async function inSequence(
  calls: ToolCall[],
  one: (call: ToolCall, index: number) => DispatchOutcome | Promise<DispatchOutcome>,
): Promise<DispatchOutcome[]> {
  const outcomes: DispatchOutcome[] = [];
  for (let i = 0; i < calls.length; i++) outcomes.push(await one(calls[i] as ToolCall, i));
  return outcomes;
}

/** True when running `tool` could change the world in a way that must not happen twice. */
export function hasSideEffects(tool: Tool | undefined): boolean {
  return (tool?.effect ?? 'unsafe') !== 'pure';
}

async function runToolsDurably(deps: LoopDeps, calls: ToolCall[], step: number, assistantSeq: number): Promise<DispatchOutcome[]> {
  const log = deps.log!;
  const signal = deps.controls.abortController.signal;
  const start = (call: ToolCall, index: number): string => {
    const key = idempotencyKey(deps.runId, assistantSeq, index);
    deps.emit({ type: 'tool_started', step, toolCallId: call.id, name: call.name, arguments: call.arguments, idempotencyKey: key });
    return key;
  };
  const durability = (batch: ToolCall[]) => (batch.some((c) => (deps.toolOf(c.name)?.effect ?? 'unsafe') === 'unsafe') ? 'full' : 'normal');
  const finish = async (call: ToolCall, key: string): Promise<DispatchOutcome> => {
    const outcome = await deps.dispatch(call, { signal, runId: deps.runId, idempotencyKey: key, step });
    emitFinished(deps, step, call, outcome);
    await log.flush();
    return outcome;
  };
  if (deps.toolExecution === 'sequential') {
    const outcomes: DispatchOutcome[] = [];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i] as ToolCall;
      const key = start(call, i);
      await log.flush(durability([call]));
      outcomes.push(await finish(call, key));
    }
    return outcomes;
  }
  const keys = calls.map(start);
  await log.flush(durability(calls));
  return Promise.all(calls.map((call, i) => finish(call, keys[i] as string)));
}
