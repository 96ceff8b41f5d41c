/**
 * The agent loop as one function over injected dependencies (STYLE 5). It owns every
 * state transition; the model only produces content while the loop is `planning`.
 *
 * Per turn: check limits → assemble context → stream the model → no tool calls: final
 * answer (unless a follow-up or steering message is queued) → else dispatch every call,
 * write results back in call order → stop rules and budget (after a text answer that goes
 * on, the hook and budget) → inject the queued messages → next turn. A queued message
 * enters only when the run goes on, so a stopped run never ends on an unanswered one.
 *
 * The cycle itself is one async loop (`LoopRun.turns`: an outer loop per message to
 * answer, an inner one for the tool turns). A run's state lives on one {@link LoopRun}
 * object and each step of a turn is a small method: the loop holds few values across its
 * awaits, awaits a step only when it returned a promise, and the engine compiles each piece
 * on its own. (One large async function with closures was the most expensive thing the JIT
 * compiled in the first hundred runs of a process.)
 */
import { errorFromMessage, ReinError, toReinError } from '../errors.js';
import type { LoopState, RunResult, RunTotals } from '../events.js';
import {
  emptyUsage,
  type AssistantMessage,
  type AssistantStreamEvent,
  type Context,
  type Message,
  type StreamFunction,
  type StreamOptions,
  type ToolCall,
  type ToolSpec,
  type UserMessage,
} from '../model/types.js';
import type { DispatchOutcome } from '../tools/types.js';
import type { ContextCompactedEvent, RunContext, TurnContext } from '../context/engine.js';
import { UsageEstimator } from '../context/usage-estimate.js';
import { clause } from '../model/http-errors.js';
import { RepeatTracker, ToolErrorBreaker } from './stop-rules.js';
import { ABORTED, untilAborted } from '../tools/until-aborted.js';
import type { ResumeState } from './resume-state.js';
import { resumeBatch } from './resume-batch.js';
import { runTools } from './tool-batch.js';
import { PAUSED } from './tool-calls.js';
import type { LoopDeps, LoopStart } from './deps.js';
import { budgetReached, checkStopRules, checkTextTurn, type Stop } from './turn-stops.js';
import { finish } from './result.js';
import { addUsage } from './totals.js';
import { transformedContext } from './validate.js';
import { addChildUsage } from './run-tree.js';
import { takeHandoff } from './handoff-tool.js';
import {
  ANSWER_AT_LIMIT,
  budgetPays,
  FINAL_ANSWER_MAX_TOKENS,
  FINAL_ANSWER_TIMEOUT_MS,
  finalAnswerInstruction,
  finalAnswerUsage,
} from './answer-at-limit.js';

/**
 * With an output schema the run ends by the final-answer tool: a text answer gets this many
 * reminders in a row to call it; the next text answer fails the run (it has no output).
 */
const MAX_REMINDERS = 2;

/** Runs one agent run to its end. Never rejects: every ending is a {@link RunResult}. */
export async function runLoop(deps: LoopDeps, start: LoopStart): Promise<RunResult> {
  const run = new LoopRun(deps, start);
  try {
    run.announce(start);
    await run.drive(start);
  } catch (error) {
    // A bug in a hook or in rein itself still ends as a typed result with the work so far.
    run.stop = run.signal.aborted ? run.abortStop() : { reason: 'fatal_error', error: toReinError(error) };
  } finally {
    run.clearTimer();
  }
  if (run.stop && deps.limits.finalAnswerOnStop && ANSWER_AT_LIMIT.has(run.stop.reason)) await run.answerAtLimit();
  return finish(deps, run.stop, run.messages, run.totals, run.started, run.lastOutput, run.setState);
}

/** The state of one run and the steps of its turns. */
class LoopRun {
  readonly started = Date.now();
  readonly signal: AbortSignal;
  readonly messages: Message[];
  readonly totals: RunTotals;
  stop: Stop | undefined;
  lastOutput: unknown;
  private state: LoopState = 'idle';
  private timedOut = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly repeats: RepeatTracker;
  private readonly breaker: ToolErrorBreaker;
  /** The options of every model request: the agent's, with the run's signal and `toolCallIds`. */
  private streamOptions: StreamOptions;
  /**
   * The ids of the tool calls in the history, so an adapter renames a call whose server
   * reuses an id (`call_0` every turn): kept as answers are taken, never rebuilt per request.
   */
  private readonly toolCallIds = new Set<string>();
  /** The context engine's view of the current turn (one object per run; `step` moves on). */
  private turn: TurnContext | undefined;
  // The model request in flight (one at a time per run), for the stream listener.
  private requestStep = 0;
  private requestMessages = 0;
  private attempt = 1;
  private attemptsBefore = 0;
  /** The seq of the last `assistant_message`: it anchors the idempotency keys of its calls. */
  private assistantSeq = 0;
  /** Estimates usage a server did not report when no context engine does (`context: false`). */
  private usageEstimator: UsageEstimator | undefined;
  /** Reminders to call the final-answer tool since the last tool turn. */
  private reminders = 0;

  constructor(
    private readonly deps: LoopDeps,
    start: LoopStart,
  ) {
    const { controls, limits } = deps;
    this.signal = controls.abortController.signal;
    this.messages = start.kind === 'resume' ? [...start.state.history] : [...start.history, start.input];
    this.totals =
      start.kind === 'resume' ? structuredClone(start.state.totals) : { steps: 0, toolCalls: 0, usage: emptyUsage(), durationMs: 0 };
    this.repeats = new RepeatTracker(limits.noProgressRepeats);
    this.breaker = new ToolErrorBreaker(limits.maxConsecutiveToolErrors);
    // Once per run: the history it starts from (or resumes) may hold calls already.
    for (const message of this.messages) if (message.role === 'assistant') this.addCallIds(message);
    this.streamOptions = { ...deps.modelOptions, signal: this.signal, toolCallIds: this.toolCallIds };
    this.turn = deps.context && { step: 0, signal: this.signal, onCompacted: this.onCompacted };
    // The sub-agents this run starts are capped by what its live totals leave of its budgets.
    if (deps.tree) deps.tree.totals = this.totals;
  }

  /** Moves the loop to `to`, announcing the change. Bound: `finish` calls it on its own. */
  readonly setState = (to: LoopState): void => {
    if (to === this.state) return;
    this.deps.emit({ type: 'state_changed', from: this.state, to, step: this.totals.steps });
    this.state = to;
  };

  /**
   * The last request of a run a limit stopped (`limits.finalAnswerOnStop`): no tools, the
   * best answer from what was done; the stop stays the limit's. Skipped when the run was
   * aborted or the budget cannot pay for it; a failure of its own leaves the run as it was.
   */
  async answerAtLimit(): Promise<void> {
    const { deps, messages } = this;
    const reason = (this.stop as Stop).reason;
    if (this.signal.aborted && !this.timedOut) return;
    const schema = deps.finalAnswerTool === undefined ? undefined : deps.toolOf(deps.finalAnswerTool)?.parameters;
    const instruction = finalAnswerInstruction(reason, schema);
    const maxTokens = Math.min(deps.modelOptions.maxTokens ?? FINAL_ANSWER_MAX_TOKENS, FINAL_ANSWER_MAX_TOKENS);
    const usage = finalAnswerUsage(messages, instruction, maxTokens);
    if (!budgetPays(deps.limits, this.totals, usage, deps.costOf?.(usage)?.total)) return;
    const step = this.totals.steps;
    try {
      const message: UserMessage = { role: 'user', content: instruction };
      messages.push(message);
      deps.emit({ type: 'message_injected', step, kind: 'steer', message });
      // After a timeout the run's signal is spent: this request gets a deadline of its own.
      const deadline = AbortSignal.timeout(
        deps.limits.timeoutMs === undefined ? FINAL_ANSWER_TIMEOUT_MS : Math.min(deps.limits.timeoutMs, FINAL_ANSWER_TIMEOUT_MS),
      );
      const signal = this.timedOut ? deadline : AbortSignal.any([this.signal, deadline]);
      const request = this.request(messages, []);
      this.requestStep = step;
      this.requestMessages = request.messages.length;
      this.attempt = 1;
      this.attemptsBefore = 0;
      deps.emit({ type: 'model_request', step, attempt: 1, messages: this.requestMessages });
      const stream = deps.stream(deps.model, request, { ...this.streamOptions, signal, maxTokens });
      const received = stream.listen ? await stream.listen(this.onStreamEvent) : await this.iterate(stream);
      // Only its text: a tool call the model wrote anyway is not run, nor logged or kept.
      if (received.content.some((block) => block.type === 'tool_call')) {
        received.content = received.content.filter((block) => block.type !== 'tool_call');
        if (received.stopReason === 'tool_use') received.stopReason = 'stop';
      }
      const answer = this.answered(request, received, step);
      addUsage(this.totals, answer);
      if (answer.stopReason === 'error' || answer.stopReason === 'aborted') return;
      messages.push(answer);
      if (deps.finalAnswerTool !== undefined) await this.takeOutput(answer, deps.finalAnswerTool);
    } catch {
      // The run already ended at its limit; the answer was a courtesy.
    }
  }

  /**
   * With `finalAnswerOnStop`, the budget stops the run while it can still pay for the answer
   * at the limit: once what is left would not pay for one more turn and that answer (each
   * estimated as the context so far and the output allowance).
   */
  private keepsRoomForAnswer(): boolean {
    const { limits, modelOptions, costOf } = this.deps;
    if (!limits.finalAnswerOnStop || (limits.maxTokens === undefined && limits.maxCostUsd === undefined)) return false;
    const schema = this.deps.finalAnswerTool === undefined ? undefined : this.deps.toolOf(this.deps.finalAnswerTool)?.parameters;
    const one = finalAnswerUsage(
      this.messages,
      finalAnswerInstruction('budget', schema),
      Math.min(modelOptions.maxTokens ?? FINAL_ANSWER_MAX_TOKENS, FINAL_ANSWER_MAX_TOKENS),
    );
    const two = { ...one, input: 2 * one.input, output: 2 * one.output, total: 2 * one.total };
    return !budgetPays(limits, this.totals, two, costOf?.(two)?.total);
  }

  /** The schema's output from the final answer's text, checked as the final-answer tool would check it. */
  private async takeOutput(answer: AssistantMessage, tool: string): Promise<void> {
    let text = '';
    for (const block of answer.content) if (block.type === 'text') text += block.text;
    const checked = await this.deps.check({
      type: 'tool_call',
      id: 'final_answer_at_limit',
      name: tool,
      arguments: {},
      rawArguments: text,
    });
    if (checked.ok) this.lastOutput = checked.arguments;
  }

  abortStop(): Stop {
    return this.timedOut ? { reason: 'timeout' } : { reason: 'aborted' };
  }

  clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  /** The whole run, from its first event until a stop rule holds. */
  async drive(start: LoopStart): Promise<void> {
    const { deps } = this;
    // The run exists durably from its first event on, so a crash at any later point can be
    // resumed (a model request without an answer is then simply asked again).
    if (deps.log) await deps.log.flush();
    if (start.kind === 'resume' && start.state.pending) await this.finishPending(start.state.pending);
    if (!this.stop) {
      // Steering sent before the run began belongs in its first request.
      injectQueued(deps, this.messages, this.totals.steps, false);
      this.setState('planning');
    }
    if (!this.stop) await this.turns();
  }

  /**
   * The turn cycle. The outer loop takes one message to answer after another (the input,
   * then each follow-up or steering message queued when the model answered in text); the
   * inner loop runs the model's tool turns for it until the model answers in text. Every
   * step of a turn is a small method of its own (see the class comment), and a step that
   * finished synchronously (tools without I/O, stop rules without a hook) is not awaited:
   * the common turn suspends once, on the model's answer.
   */
  private async turns(): Promise<void> {
    for (;;) {
      let step: number;
      let answer: AssistantMessage;
      for (;;) {
        if (this.stop || !this.beginTurn()) return;
        step = this.totals.steps;
        answer = await this.callModel(step);
        const calls = this.takeAnswer(answer);
        if (this.stop) return;
        if (calls === undefined) break;
        const batch = runTools(this.deps, calls, step, this.assistantSeq);
        const outcomes = batch instanceof Promise ? await batch : batch;
        if (outcomes === PAUSED) {
          // Durably waiting for a person: any process can continue it with agent.approve().
          this.stop = { reason: 'awaiting_approval' };
          return;
        }
        const checked = this.takeResults(calls, outcomes, answer, step);
        this.endTurn(checked instanceof Promise ? await checked : checked, step, false);
      }
      // A text answer with a queued message (or a reminder) to answer next: the same end of
      // turn as a tool turn (hook, budget), and then the next message.
      const checked = checkTextTurn(this.deps, answer, step, this.messages, this.totals);
      this.endTurn(checked ? await checked : undefined, step, true);
    }
  }

  /** `run_started` (or `run_resumed`), and the run's timer. */
  announce(start: LoopStart): void {
    const { deps } = this;
    const { limits } = deps;
    const span = deps.traceSpan;
    if (start.kind === 'resume')
      deps.emit({ type: 'run_resumed', epoch: start.epoch, from: start.state.lastStatus, ...(span ? { spanId: span.spanId } : {}) });
    else {
      const model = deps.model;
      deps.emit({
        type: 'run_started',
        traceId: deps.traceId,
        input: start.input,
        history: start.history,
        model: { provider: model.provider, id: model.id, api: model.api, baseUrl: model.baseUrl },
        ...(deps.system === undefined ? {} : { system: deps.system }),
        ...(deps.agentName === undefined ? {} : { agent: deps.agentName }),
        ...(deps.parent ? { parentRunId: deps.parent.runId, parentToolCallId: deps.parent.toolCallId, depth: deps.parent.depth } : {}),
        tools: deps.toolSpecs().map((t) => t.name),
        limits,
        ...(span ? { spanId: span.spanId, ...(span.parentSpanId === undefined ? {} : { parentSpanId: span.parentSpanId }) } : {}),
      });
    }
    if (limits.timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        deps.controls.abortController.abort('timeout');
      }, limits.timeoutMs);
      // The run's timer must never keep a process alive on its own.
      this.timer.unref();
    }
  }

  /** A resumed run whose crashed process left a tool batch open: finish it before asking the model again. */
  private async finishPending(pending: NonNullable<ResumeState['pending']>): Promise<void> {
    const { deps, messages } = this;
    // The resume history ends with the assistant message of that batch.
    const assistant = messages[messages.length - 1] as AssistantMessage;
    this.setState('tool_calling');
    const outcomes = await resumeBatch(deps, pending);
    if (outcomes === PAUSED) {
      this.stop = { reason: 'awaiting_approval' };
      return;
    }
    this.setState('observing');
    this.totals.toolCalls += pending.calls.filter((call) => !pending.finished.has(call.id)).length;
    for (const outcome of outcomes) {
      messages.push(outcome.result);
      if (outcome.usage) addChildUsage(this.totals, outcome.usage);
    }
    this.switchIfHandedOff();
    const checked = checkStopRules(deps, {
      calls: pending.calls,
      outcomes,
      assistant,
      step: pending.step,
      messages,
      totals: this.totals,
      repeats: this.repeats,
      breaker: this.breaker,
    });
    // The same end of turn as without the crash: a budget used up by that turn stops here too.
    this.endTurn(checked instanceof Promise ? await checked : checked, pending.step, false);
  }

  /**
   * After a batch whose handoff tool ran (its `handoff` event is logged): the run goes on as
   * the other agent — its model, prompt, tools and hooks — from the next request on (issue 23).
   */
  private switchIfHandedOff(): void {
    const next = takeHandoff(this.deps.runId);
    if (!next) return;
    const { deps } = this;
    const input = (this.messages.find((m) => m.role === 'user') ?? { role: 'user', content: '' }) as UserMessage;
    // The first agent's skills and paging end here; the next agent's start, from the history so far.
    deps.extras?.end();
    Object.assign(
      deps,
      next.target.handoffPart(deps.emit, { input, scanned: this.messages.length }, { runId: deps.runId, history: this.messages }),
    );
    this.streamOptions = { ...deps.modelOptions, signal: this.signal, toolCallIds: this.toolCallIds };
    this.turn = deps.context && { step: 0, signal: this.signal, onCompacted: this.onCompacted };
    this.usageEstimator = undefined;
  }

  private addCallIds(message: AssistantMessage): void {
    for (const block of message.content) if (block.type === 'tool_call') this.toolCallIds.add(block.id);
  }

  /** Checks the abort and the step limit; true when a turn may start (its step is counted). */
  private beginTurn(): boolean {
    if (this.signal.aborted) {
      this.stop = this.abortStop();
      return false;
    }
    if (this.totals.steps >= this.deps.limits.maxSteps) {
      this.stop = { reason: 'max_steps' };
      return false;
    }
    this.totals.steps++;
    return true;
  }

  /**
   * What the answer means for the run: its tool calls (the loop moves to `tool_calling`),
   * or `undefined` when the turn ends here — a stop, or (no stop set) a queued message to
   * answer next.
   */
  private takeAnswer(assistant: AssistantMessage): ToolCall[] | undefined {
    const { deps, messages, signal } = this;
    addUsage(this.totals, assistant);
    if (assistant.stopReason === 'aborted' || (assistant.stopReason === 'error' && signal.aborted)) {
      // The partial answer is in the log (assistant_message) but never in the history:
      // a half-streamed tool call must not be sent to a model again.
      this.stop = this.abortStop();
      return undefined;
    }
    if (assistant.stopReason === 'error') {
      this.stop = { reason: 'fatal_error', error: errorFromMessage(assistant) };
      return undefined;
    }
    if (assistant.error?.code === 'answer_too_long') {
      messages.push(assistant);
      this.stop = { reason: 'answer_too_long', error: errorFromMessage(assistant) };
      return undefined;
    }
    messages.push(assistant);
    let calls: ToolCall[] | undefined;
    for (const block of assistant.content) {
      if (block.type !== 'tool_call') continue;
      (calls ??= []).push(block);
      this.toolCallIds.add(block.id);
    }
    if (calls === undefined) {
      const { steering, followUps } = deps.controls;
      if (steering.length === 0 && followUps.length === 0 && !this.mayRemind()) this.stop = this.textAnswerStop();
      return undefined;
    }
    this.reminders = 0;
    this.setState('tool_calling');
    return calls;
  }

  /** Writes a batch's results back and asks the stop rules (a promise only when a hook must be asked). */
  private takeResults(
    calls: ToolCall[],
    outcomes: DispatchOutcome[],
    assistant: AssistantMessage,
    step: number,
  ): Stop | undefined | Promise<Stop | undefined> {
    const { deps, messages, totals } = this;
    this.setState('observing');
    for (const outcome of outcomes) {
      messages.push(outcome.result);
      // A sub-agent's spending counts in this run's totals (and budget).
      if (outcome.usage) addChildUsage(totals, outcome.usage);
    }
    this.switchIfHandedOff();
    totals.toolCalls += calls.length;
    if (this.signal.aborted) return this.abortStop();
    return checkStopRules(deps, { calls, outcomes, assistant, step, messages, totals, repeats: this.repeats, breaker: this.breaker });
  }

  /**
   * After the stop rules: stop, or — unless the budget is used up — take in the queued
   * messages (a follow-up only after a text answer) and go on planning.
   */
  private endTurn(stop: Stop | undefined, step: number, answered: boolean): void {
    if (stop) {
      this.stop = stop;
      if (stop.output !== undefined) this.lastOutput = stop.output;
    } else if (budgetReached(this.deps.limits, this.totals) || this.keepsRoomForAnswer()) {
      this.stop = { reason: 'budget' };
    } else {
      // A text answer that goes on with nothing queued is one the final-answer tool must replace.
      if (!injectQueued(this.deps, this.messages, step, answered) && answered) this.remind(step);
      this.setState('planning');
    }
  }

  /**
   * How a text answer with nothing queued ends the run: as the answer, or — when the run has
   * an output schema and the model kept answering in text through the reminders — as a
   * failure, so a caller reading `result.output` never takes a run without one for done.
   */
  private textAnswerStop(): Stop {
    const tool = this.deps.finalAnswerTool;
    if (tool === undefined) return { reason: 'final_answer' };
    const error = new ReinError(
      'invalid_response',
      'fatal',
      `the model answered in text ${this.reminders + 1} times in a row without calling the \`${tool}\` tool, so the run has no output of its schema (its last answer is in result.text); a model that follows tool instructions better, or a system prompt that asks for the tool, may fix it`,
    );
    return { reason: 'fatal_error', error };
  }

  /** Whether a text answer should be met with a reminder to call the final-answer tool. */
  private mayRemind(): boolean {
    return this.deps.finalAnswerTool !== undefined && this.reminders < MAX_REMINDERS;
  }

  /** Tells the model to give its answer through the final-answer tool (a user message, like a steer). */
  private remind(step: number): void {
    this.reminders++;
    const message: UserMessage = {
      role: 'user',
      content: `Give your answer by calling the \`${this.deps.finalAnswerTool as string}\` tool with arguments that match its parameters schema: a text answer does not finish this task.`,
    };
    this.messages.push(message);
    this.deps.emit({ type: 'message_injected', step, kind: 'steer', message });
  }

  /**
   * One model request of `step` (asked again after a context-length refusal that
   * compaction fixed). The common turn — nothing to compact, no `transformContext` — costs
   * one `then` on the stream's answer.
   */
  private callModel(step: number): Promise<AssistantMessage> {
    const { deps } = this;
    const engine = deps.context;
    const turn = this.turn;
    if (turn) turn.step = step;
    this.attempt = 1;
    const tools = deps.toolSpecs();
    // Compacts the history (the loop's own array) in place when the request would reach the threshold.
    const preparing = engine && turn ? engine.prepare(this.messages, tools, turn) : undefined;
    if (preparing || deps.hooks.transformContext) return this.callModelSlowly(step, false, tools, preparing);
    const request = this.request(this.messages, tools);
    const stream = this.send(request, step);
    const answer = stream.listen ? stream.listen(this.onStreamEvent) : this.iterate(stream);
    return answer.then((message) =>
      this.mustRecover(message) ? this.recover(step, tools, request, message) : this.answered(request, message, step),
    );
  }

  /** The same, for a turn that waits on the engine or on `transformContext`, and for the request after a recovery. */
  private async callModelSlowly(
    step: number,
    recovered: boolean,
    firstTools?: ToolSpec[],
    firstPreparing?: Promise<void>,
  ): Promise<AssistantMessage> {
    const { deps } = this;
    const engine = deps.context;
    const turn = this.turn;
    const history = this.messages;
    for (let first = true; ; first = false) {
      const tools = first && firstTools ? firstTools : deps.toolSpecs();
      const preparing = first && firstTools ? firstPreparing : engine && turn ? engine.prepare(history, tools, turn) : undefined;
      if (preparing) await preparing;
      const transform = deps.hooks.transformContext;
      let context = history;
      if (transform) {
        // Aborted while transforming: the request below fails at once as aborted, and the run stops so.
        const transformed = await untilAborted(transform([...history], { step, signal: this.signal }), this.signal);
        if (transformed !== ABORTED) context = transformedContext(transformed);
      }
      const request = this.request(context, tools);
      const stream = this.send(request, step);
      const message = stream.listen ? await stream.listen(this.onStreamEvent) : await this.iterate(stream);
      if (!recovered && this.mustRecover(message)) {
        // The provider refused the request as too long: compact once and ask again; a second refusal fails the run.
        recovered = true;
        if (await this.compactAfterRefusal(tools, message)) {
          this.attempt++;
          continue;
        }
      }
      return this.answered(request, message, step);
    }
  }

  /** A context-length refusal the context engine may fix by compacting. */
  private mustRecover(message: AssistantMessage): boolean {
    return this.turn !== undefined && message.stopReason === 'error' && message.error?.code === 'context_length' && !this.signal.aborted;
  }

  /** Compacts after a refusal and asks again (once), or takes the refusal as the answer. */
  private async recover(step: number, tools: ToolSpec[], request: Context, message: AssistantMessage): Promise<AssistantMessage> {
    if (await this.compactAfterRefusal(tools, message)) {
      this.attempt++;
      return this.callModelSlowly(step, true);
    }
    return this.answered(request, message, step);
  }

  /**
   * Compacts after the provider refused a request as too long; `false` when that cannot
   * help. When even the compacted request would not fit, the run ends with the provider's
   * refusal, not the engine's estimate alone: the provider's words say which limit was hit
   * (a window, a per-minute token limit that counts the output budget too), and the
   * engine's reason is added to them.
   */
  private async compactAfterRefusal(tools: ToolSpec[], message: AssistantMessage): Promise<boolean> {
    try {
      return await (this.deps.context as RunContext).recover(this.messages, tools, this.turn as TurnContext);
    } catch (error) {
      if (!(error instanceof ReinError) || error.code !== 'context_overflow' || !message.error) throw error;
      message.error = {
        ...message.error,
        message: `${clause(message.error.message)}. Compacting the history did not help: ${error.message}`,
      };
      return false;
    }
  }

  /** The request of this turn: assembled by the context engine, or the bare history. */
  private request(messages: Message[], tools: ToolSpec[]): Context {
    const { deps } = this;
    if (deps.context) return deps.context.assemble(messages, tools);
    return deps.system === undefined ? { messages, tools } : { system: deps.system, messages, tools };
  }

  /** Announces the request and starts streaming it. */
  private send(request: Context, step: number): ReturnType<StreamFunction> {
    const { deps } = this;
    this.requestStep = step;
    this.requestMessages = request.messages.length;
    deps.emit({ type: 'model_request', step, attempt: this.attempt, messages: this.requestMessages });
    // Retries inside the stream count on from the attempts already made for this step.
    this.attemptsBefore = this.attempt - 1;
    return deps.stream(deps.model, request, this.streamOptions);
  }

  /** For streams without the synchronous `listen`. */
  private async iterate(stream: ReturnType<StreamFunction>): Promise<AssistantMessage> {
    for await (const event of stream) this.onStreamEvent(event);
    return stream.result();
  }

  /** The run's events for one model stream event (bound once per run, not per request). */
  private readonly onStreamEvent = (event: AssistantStreamEvent): void => {
    const { emit } = this.deps;
    const step = this.requestStep;
    switch (event.type) {
      case 'text_delta':
        if (this.deltasWanted()) emit({ type: 'text_delta', step, delta: event.delta });
        break;
      case 'thinking_delta':
        if (this.deltasWanted()) emit({ type: 'thinking_delta', step, delta: event.delta });
        break;
      case 'tool_call_start':
        if (this.deltasWanted()) emit({ type: 'tool_call_delta', step, index: event.index, id: event.id, name: event.name, delta: '' });
        break;
      case 'tool_call_delta':
        if (this.deltasWanted()) emit({ type: 'tool_call_delta', step, index: event.index, delta: event.delta });
        break;
      case 'retry':
        emit({
          type: 'retry_scheduled',
          step,
          attempt: this.attemptsBefore + event.attempt,
          delayMs: event.delayMs,
          error: event.error.toJSON(),
        });
        break;
      case 'attempt':
        // The retried request goes out now, after its backoff.
        this.attempt = this.attemptsBefore + event.attempt;
        emit({ type: 'model_request', step, attempt: this.attempt, messages: this.requestMessages });
        break;
      default:
        break;
    }
  };

  private deltasWanted(): boolean {
    const wants = this.deps.wantsDeltas;
    return wants === undefined || wants();
  }

  /** The answer is final for this step: teach the engine, price it, log it. */
  private answered(request: Context, message: AssistantMessage, step: number): AssistantMessage {
    const { deps } = this;
    if (message.stopReason === 'error' && message.error?.code === 'answer_too_long') keepTextSoFar(message);
    deps.context?.observe(request, message);
    // A server that reports no usage would leave the token and cost budgets unenforced:
    // such an answer carries rein's estimate instead (marked `estimated`).
    if (unreported(message)) {
      const estimate = deps.context
        ? deps.context.estimateUsage(request, message)
        : (this.usageEstimator ??= new UsageEstimator(deps.model)).estimate(request, message);
      if (estimate) message.usage = estimate;
    }
    // Usage events carry their cost, from the catalog, unless the adapter set it.
    if (message.usage.cost === undefined && deps.costOf) {
      const cost = deps.costOf(message.usage);
      if (cost) message.usage.cost = cost;
    }
    // The seq of this event anchors the idempotency keys of the calls it contains.
    this.assistantSeq = deps.emit({ type: 'assistant_message', step, message });
    return message;
  }

  /** A compaction's summary costs tokens like a turn (not a step); its event carries them for the fold. */
  private readonly onCompacted = (event: ContextCompactedEvent, response: AssistantMessage | undefined): void => {
    this.deps.emit(event);
    if (response) addUsage(this.totals, response);
  };
}

/**
 * An answer cut at the size limit becomes a complete one of its text and thinking (a cut
 * tool call would be sent to a model again, half-written): `length`, as an answer cut by
 * the output token limit is, with the error saying why. Done before it is logged, so the
 * log folds to the same history.
 */
function keepTextSoFar(message: AssistantMessage): void {
  message.content = message.content.filter((block) => block.type !== 'tool_call');
  message.stopReason = 'length';
}

/** An answer (not a failure) whose server reported no token usage at all. */
function unreported(message: AssistantMessage): boolean {
  if (message.stopReason === 'error' || message.stopReason === 'aborted') return false;
  const u = message.usage;
  return u.input === 0 && u.output === 0 && u.cacheRead === 0 && u.cacheWrite === 0;
}

/** Moves queued steering (and, after a text answer, one follow-up) messages into the history. */
function injectQueued(deps: LoopDeps, messages: Message[], step: number, wouldStop: boolean): boolean {
  const { steering, followUps } = deps.controls;
  if (steering.length === 0 && (!wouldStop || followUps.length === 0)) return false;
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
