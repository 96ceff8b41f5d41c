/**
 * The agent loop as one function over injected dependencies (STYLE 5). It owns every
 * state transition; the model only produces content while the loop is `planning`.
 *
 * Per turn: check limits → assemble context → stream the model → no tool calls: final
 * answer (unless a follow-up or steering message is queued) → else dispatch every call,
 * write results back in call order → inject steering → stop rules → next turn.
 */
import { toReinError } from '../errors.js';
import type { LoopState, RunEventBody, RunLimits, RunResult, RunTotals } from '../events.js';
import type { AssistantMessage, AssistantStreamEvent, Cost, Message, ModelRef, StreamFunction, StreamOptions, ToolCall, ToolSpec, Usage, UserMessage } from '../model/types.js';
import type { DispatchOutcome } from '../tools/types.js';
import type { AgentHooks } from './options.js';
import type { RunControls } from './handle.js';
import { RepeatTracker, ToolErrorBreaker } from './stop-rules.js';
import { budgetReached, checkStopRules, type Stop } from './turn-stops.js';
import { addUsage, errorFromMessage, finish } from './result.js';

/** Everything the loop needs, injected so tests and other front-ends can swap any part. */
export interface LoopDeps {
  runId: string;
  traceId: string;
  model: ModelRef;
  /** The model call, already wrapped in retry. */
  stream: StreamFunction;
  modelOptions: Omit<StreamOptions, 'signal'>;
  system?: string;
  toolSpecs: ToolSpec[];
  dispatch: (
    call: ToolCall,
    ctx: { signal: AbortSignal; runId: string; idempotencyKey: string; step: number },
  ) => DispatchOutcome | Promise<DispatchOutcome>;
  /** What a response's usage cost in USD (`undefined` when the model's price is unknown). */
  costOf?: (usage: Usage) => Cost | undefined;
  /** Name of the final-answer tool when the run has an output schema. */
  finalAnswerTool?: string;
  limits: RunLimits;
  toolExecution: 'parallel' | 'sequential';
  stopOnToolError: boolean;
  hooks: AgentHooks;
  controls: RunControls;
  /** Receives every event body; returns the `seq` it was stamped with. */
  emit: (body: RunEventBody) => number;
}

/** Runs one agent run to its end. Never rejects: every ending is a {@link RunResult}. */
export async function runLoop(deps: LoopDeps, input: UserMessage, history: Message[]): Promise<RunResult> {
  const started = Date.now();
  const { controls, limits, emit } = deps;
  const signal = controls.abortController.signal;
  const messages: Message[] = [...history, input];
  const totals: RunTotals = {
    steps: 0,
    toolCalls: 0,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 },
    durationMs: 0,
  };
  const repeats = new RepeatTracker(limits.noProgressRepeats);
  const breaker = new ToolErrorBreaker(limits.maxConsecutiveToolErrors);
  let state: LoopState = 'idle';
  let timedOut = false;

  const setState = (to: LoopState): void => {
    if (to === state) return;
    emit({ type: 'state_changed', from: state, to, step: totals.steps });
    state = to;
  };

  emit({
    type: 'run_started',
    traceId: deps.traceId,
    input,
    history,
    model: { provider: deps.model.provider, id: deps.model.id, api: deps.model.api, baseUrl: deps.model.baseUrl },
    ...(deps.system === undefined ? {} : { system: deps.system }),
    tools: deps.toolSpecs.map((t) => t.name),
    limits,
  });

  const timer =
    limits.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controls.abortController.abort('timeout');
        }, limits.timeoutMs);
  // The run's timer must never keep a process alive on its own.
  timer?.unref();

  const abortStop = (): Stop => (timedOut ? { reason: 'timeout' } : { reason: 'aborted' });

  let stop: Stop | undefined;
  let lastOutput: unknown;
  try {
    setState('planning');
    for (;;) {
      if (signal.aborted) {
        stop = abortStop();
        break;
      }
      if (totals.steps >= limits.maxSteps) {
        stop = { reason: 'max_steps' };
        break;
      }
      totals.steps++;
      const step = totals.steps;

      const { message: assistant, seq: assistantSeq } = await callModel(deps, messages, step);
      addUsage(totals, assistant);
      if (assistant.stopReason === 'aborted' || (assistant.stopReason === 'error' && signal.aborted)) {
        // The partial answer is in the log (assistant_message) but never in the history:
        // a half-streamed tool call must not be sent to a model again.
        stop = abortStop();
        break;
      }
      if (assistant.stopReason === 'error') {
        stop = { reason: 'fatal_error', error: errorFromMessage(assistant) };
        break;
      }
      messages.push(assistant);
      const calls = assistant.content.filter((c): c is ToolCall => c.type === 'tool_call');

      if (calls.length === 0) {
        if (injectQueued(deps, messages, step, true)) continue;
        stop = { reason: 'final_answer' };
        break;
      }

      setState('tool_calling');
      const batch = runTools(deps, calls, step, assistantSeq);
      const outcomes = batch instanceof Promise ? await batch : batch;
      setState('observing');
      const results = outcomes.map((o) => o.result);
      messages.push(...results);
      totals.toolCalls += calls.length;

      if (signal.aborted) {
        stop = abortStop();
        break;
      }
      injectQueued(deps, messages, step, false);
      const checked = checkStopRules(deps, { calls, outcomes, assistant, step, messages, totals, repeats, breaker });
      stop = checked instanceof Promise ? await checked : checked;
      if (stop) {
        if (stop.output !== undefined) lastOutput = stop.output;
        break;
      }
      if (budgetReached(limits, totals)) {
        stop = { reason: 'budget' };
        break;
      }
      setState('planning');
    }
  } catch (error) {
    // A bug in a hook or in rein itself still ends as a typed result with the work so far.
    stop = signal.aborted ? abortStop() : { reason: 'fatal_error', error: toReinError(error) };
  } finally {
    if (timer) clearTimeout(timer);
  }
  return finish(deps, stop, messages, totals, started, lastOutput, setState);

  // --- helpers bound to this run -------------------------------------------------------

  async function callModel(d: LoopDeps, history: Message[], step: number): Promise<{ message: AssistantMessage; seq: number }> {
    let context = history;
    if (d.hooks.transformContext) context = await d.hooks.transformContext([...history], { step, signal });
    let attempt = 1;
    emit({ type: 'model_request', step, attempt, messages: context.length });
    const stream = d.stream(d.model, { ...(d.system === undefined ? {} : { system: d.system }), messages: context, tools: d.toolSpecs }, { ...d.modelOptions, signal });
    const onEvent = (event: AssistantStreamEvent): void => {
      switch (event.type) {
        case 'text_delta':
          emit({ type: 'text_delta', step, delta: event.delta });
          break;
        case 'thinking_delta':
          emit({ type: 'thinking_delta', step, delta: event.delta });
          break;
        case 'tool_call_start':
          emit({ type: 'tool_call_delta', step, index: event.index, id: event.id, name: event.name, delta: '' });
          break;
        case 'tool_call_delta':
          emit({ type: 'tool_call_delta', step, index: event.index, delta: event.delta });
          break;
        case 'retry':
          emit({ type: 'retry_scheduled', step, attempt: event.attempt, delayMs: event.delayMs, error: event.error.toJSON() });
          attempt = event.attempt + 1;
          emit({ type: 'model_request', step, attempt, messages: context.length });
          break;
        default:
          break;
      }
    };
    let message: AssistantMessage;
    if (stream.listen) message = await stream.listen(onEvent);
    else {
      for await (const event of stream) onEvent(event);
      message = await stream.result();
    }
    // Usage events carry their cost, from the catalog, unless the adapter set it.
    if (message.usage.cost === undefined && d.costOf) {
      const cost = d.costOf(message.usage);
      if (cost) message.usage.cost = cost;
    }
    // The seq of this event anchors the idempotency keys of the calls it contains.
    const seq = emit({ type: 'assistant_message', step, message });
    return { message, seq };
  }
}

/**
 * Dispatches a turn's calls, emitting `tool_started` / `tool_finished` for each, and returns
 * the outcomes in call order whatever order they finish in. Synchronous outcomes (a
 * synchronous tool with nothing to wait for) cost no promise.
 */
function runTools(deps: LoopDeps, calls: ToolCall[], step: number, assistantSeq: number): DispatchOutcome[] | Promise<DispatchOutcome[]> {
  const signal = deps.controls.abortController.signal;
  const finished = (call: ToolCall, outcome: DispatchOutcome): DispatchOutcome => {
    deps.emit({
      type: 'tool_finished',
      step,
      toolCallId: call.id,
      name: call.name,
      result: outcome.result,
      durationMs: outcome.durationMs,
      ...(outcome.errorCode === undefined ? {} : { errorCode: outcome.errorCode }),
      ...(outcome.terminate ? { terminate: true } : {}),
    });
    return outcome;
  };
  const one = (call: ToolCall, index: number): DispatchOutcome | Promise<DispatchOutcome> => {
    const idempotencyKey = `${deps.runId}:${assistantSeq}:${index}`;
    deps.emit({ type: 'tool_started', step, toolCallId: call.id, name: call.name, arguments: call.arguments, idempotencyKey });
    const outcome = deps.dispatch(call, { signal, runId: deps.runId, idempotencyKey, step });
    return outcome instanceof Promise ? outcome.then((o) => finished(call, o)) : finished(call, outcome);
  };
  if (deps.toolExecution === 'sequential') return runSequentially(calls, one);
  const outcomes = calls.map(one);
  return outcomes.some((o) => o instanceof Promise) ? Promise.all(outcomes) : (outcomes as DispatchOutcome[]);
}

async function runSequentially(
  calls: ToolCall[],
  one: (call: ToolCall, index: number) => DispatchOutcome | Promise<DispatchOutcome>,
): Promise<DispatchOutcome[]> {
  const outcomes: DispatchOutcome[] = [];
  for (let i = 0; i < calls.length; i++) outcomes.push(await one(calls[i] as ToolCall, i));
  return outcomes;
}

/** Moves queued steering (and, when the agent would stop, follow-up) messages into the history. */
function injectQueued(deps: LoopDeps, messages: Message[], step: number, wouldStop: boolean): boolean {
  const { steering, followUps } = deps.controls;
  let injected = false;
  while (steering.length > 0) {
    const message = steering.shift() as UserMessage;
    messages.push(message);
    deps.emit({ type: 'message_injected', step, kind: 'steer', message });
    injected = true;
  }
  if (wouldStop && !injected && followUps.length > 0) {
    const message = followUps.shift() as UserMessage;
    messages.push(message);
    deps.emit({ type: 'message_injected', step, kind: 'follow_up', message });
    injected = true;
  }
  return injected;
}
