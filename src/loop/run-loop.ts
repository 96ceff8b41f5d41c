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
import type { AssistantMessage, AssistantStreamEvent, Context, Cost, Message, ModelRef, StreamFunction, StreamOptions, ToolCall, ToolSpec, Usage, UserMessage } from '../model/types.js';
import type { DispatchOutcome, Tool } from '../tools/types.js';
import type { AgentHooks } from './options.js';
import type { RunContext, TurnContext } from '../context/engine.js';
import type { RunControls } from './handle.js';
import { RepeatTracker, ToolErrorBreaker } from './stop-rules.js';
import type { RunLog } from './run-log.js';
import type { ResumeState } from './resume-state.js';
import { resumeBatch } from './resume-batch.js';
import { PAUSED, runTools, type PolicyAnswer } from './tool-batch.js';
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
  /** The tools the model is offered, asked for every turn (tool sources may change them). */
  toolSpecs: () => ToolSpec[];
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
  /** The durable log, when the run is stored: the loop waits on it at the write points. */
  log?: RunLog;
  /** Assembles each request from layers and compacts the history near the window; absent: the bare history is sent. */
  context?: RunContext;
  /** The tool behind a name (for its declared effect when a resume must decide). */
  toolOf: (name: string) => Tool | undefined;
  /** Which calls need a person's approval (see `AgentOptions.approvalPolicy`). */
  approvalPolicy?: (call: ToolCall, tool: Tool | undefined) => PolicyAnswer;
}

/** How a run begins: fresh, or continuing a stored run from its log. */
export type LoopStart =
  | { kind: 'new'; input: UserMessage; history: Message[] }
  | { kind: 'resume'; state: ResumeState; epoch: number };

/** Runs one agent run to its end. Never rejects: every ending is a {@link RunResult}. */
export async function runLoop(deps: LoopDeps, start: LoopStart): Promise<RunResult> {
  const started = Date.now();
  const { controls, limits, emit } = deps;
  const signal = controls.abortController.signal;
  const resume = start.kind === 'resume' ? start.state : undefined;
  const messages: Message[] = start.kind === 'resume' ? [...start.state.history] : [...start.history, start.input];
  const totals: RunTotals = resume
    ? structuredClone(resume.totals)
    : {
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

  if (start.kind === 'resume') emit({ type: 'run_resumed', epoch: start.epoch, from: start.state.lastStatus });
  else {
    emit({
      type: 'run_started',
      traceId: deps.traceId,
      input: start.input,
      history: start.history,
      model: { provider: deps.model.provider, id: deps.model.id, api: deps.model.api, baseUrl: deps.model.baseUrl },
      ...(deps.system === undefined ? {} : { system: deps.system }),
      tools: deps.toolSpecs().map((t) => t.name),
      limits,
    });
  }

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
    // The run exists durably from its first event on, so a crash at any later point can be
    // resumed (a model request without an answer is then simply asked again).
    if (deps.log) await deps.log.flush();
    if (resume?.pending) {
      // The crashed process left a tool batch open: finish it before asking the model again.
      const pending = resume.pending;
      // The resume history ends with the assistant message of that batch.
      const assistant = messages[messages.length - 1] as AssistantMessage;
      setState('tool_calling');
      const outcomes = await resumeBatch(deps, pending);
      if (outcomes === PAUSED) stop = { reason: 'awaiting_approval' };
      else {
        setState('observing');
        totals.toolCalls += pending.calls.filter((call) => !pending.finished.has(call.id)).length;
        messages.push(...outcomes.map((o) => o.result));
        injectQueued(deps, messages, pending.step, false);
        const checked = checkStopRules(deps, { calls: pending.calls, outcomes, assistant, step: pending.step, messages, totals, repeats, breaker });
        stop = checked instanceof Promise ? await checked : checked;
        if (stop?.output !== undefined) lastOutput = stop.output;
      }
    }
    if (!stop) setState('planning');
    for (;;) {
      if (stop) break;
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
      if (outcomes === PAUSED) {
        // Durably waiting for a person: any process can continue it with agent.approve().
        stop = { reason: 'awaiting_approval' };
        break;
      }
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
    const engine = d.context;
    // A compaction's summary costs tokens like a turn (not a step); its event carries them for the fold.
    const turn: TurnContext | undefined = engine && {
      step,
      signal,
      onCompacted: (event, response) => {
        emit(event);
        if (response) addUsage(totals, response);
      },
    };
    let attempt = 1;
    let recovered = false;
    for (;;) {
      const tools = d.toolSpecs();
      if (engine && turn) {
        // Compacts `history` (the loop's own array) in place when the request would reach the threshold.
        const preparing = engine.prepare(history, tools, turn);
        if (preparing) await preparing;
      }
      let context = history;
      if (d.hooks.transformContext) context = await d.hooks.transformContext([...history], { step, signal });
      const request: Context = engine ? engine.assemble(context, tools) : { ...(d.system === undefined ? {} : { system: d.system }), messages: context, tools };
      emit({ type: 'model_request', step, attempt, messages: request.messages.length });
      const stream = d.stream(d.model, request, { ...d.modelOptions, signal });
      // Retries inside the stream count on from the attempts already made for this step.
      const before = attempt - 1;
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
            emit({ type: 'retry_scheduled', step, attempt: before + event.attempt, delayMs: event.delayMs, error: event.error.toJSON() });
            attempt = before + event.attempt + 1;
            emit({ type: 'model_request', step, attempt, messages: request.messages.length });
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
      if (engine && turn && !recovered && message.stopReason === 'error' && message.error?.code === 'context_length' && !signal.aborted) {
        // The provider refused the request as too long: compact once and ask again; a second refusal fails the run.
        recovered = true;
        if (await engine.recover(history, tools, turn)) {
          attempt++;
          continue;
        }
      }
      engine?.observe(request, message);
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
