/**
 * `Agent`: the thin class users hold. It resolves configuration once and starts runs;
 * all behaviour lives in {@link runLoop}.
 */
import { DELTA_EVENT_TYPES, type RunEvent, type RunEventBody, type RunLimits, type RunResult } from '../events.js';
import { ReinError, toReinError } from '../errors.js';
import { newRunId, newTraceId } from '../ids.js';
import type { Cost, Message, ModelRef, StreamFunction, ToolCall, ToolSpec, Usage, UserMessage } from '../model/types.js';
import { lookupModel, priceUsage } from '../model/catalog.js';
import { resolveModel } from '../model/resolve.js';
import { streamWithRetry } from '../model/retry.js';
import { streamModel } from '../model/providers/index.js';
import { ToolRegistry } from '../tools/registry.js';
import { createDispatcher } from '../tools/dispatch.js';
import { createFinalAnswerTool } from '../tools/final-answer.js';
import type { Tool } from '../tools/types.js';
import { RunHandle, type RunControls } from './handle.js';
import { AgentTools } from './agent-tools.js';
import { AgentExtras, type RunExtras } from './agent-extras.js';
import { deniedOutcome } from './approvals.js';
import { defaultRedactor } from '../security/redact.js';
import { redactingLog, redactingStore } from '../security/redacting-store.js';
import { DEFAULT_LIMITS, type AgentOptions, type OutputOf, type RunOptions } from './options.js';
import { runLoop } from './run-loop.js';
import type { Confirm, LoopDeps, LoopStart } from './deps.js';
import type { RunLog } from './run-log.js';
import { recordElicitationAnswer, type ElicitationAnswer } from './elicitation-answer.js';
import { canonicalJson } from '../util/canonical-json.js';
import type { RunStore } from '../store/types.js';
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { checkRunOptions, startingHistory, toUser, validateAgentOptions } from './validate.js';
import { emptyUsage } from '../model/types.js';
import { createContextEngine, type ContextEngine, type RunSeed } from '../context/engine.js';
import { updatePlanTool } from '../context/plan-tool.js';
import { LazyTelemetry, parentOf } from '../trace/agent-telemetry.js';
import type { ObserveStart, RunObserver } from '../trace/telemetry.js';
import { handedTo, handoffTargetOf, type HandoffPart, type HandoffTarget } from './handoff-tool.js';
import {
  approveStored,
  checkResumable,
  closeLog,
  type ApprovalDecision,
  type Prepared,
  prepareResume,
  startStored,
  submitStored,
} from './durable-run.js';
import { cappedLimits, registerRun, type RunParent, type TreeNode } from './run-tree.js';

/**
 * An agent: a model, a system prompt, tools, limits and hooks. Runs are independent;
 * one agent can run many at once.
 *
 * @example
 * import { Agent, defineTool } from 'rein';
 *
 * const add = defineTool({
 *   name: 'add',
 *   description: 'Add two numbers. Use it for any addition.',
 *   parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
 *   execute: ({ a, b }) => String(Number(a) + Number(b)),
 * });
 * const agent = new Agent({ model: 'openai/gpt-4o-mini', tools: [add] });
 * const result = await agent.run('What is 2 + 40?');
 * console.log(result.reason, result.text);
 */
export class Agent<S = unknown> {
  readonly model: ModelRef;
  readonly options: AgentOptions<S>;
  private readonly registry: AgentTools;
  private readonly limits: RunLimits;
  private readonly stream: StreamFunction;
  /** The provider call under the retries, and their policy: a worker's fleet limits wrap the one inside the other. */
  private readonly provider: StreamFunction;
  private readonly retry: NonNullable<AgentOptions['retry']>;
  private readonly finalAnswerTool: string | undefined;
  private readonly costOf: ((usage: Usage) => Cost | undefined) | undefined;
  private readonly store: RunStore | undefined;
  private readonly log: AgentOptions['log'];
  private readonly contextEngine: ContextEngine | undefined;
  private readonly extras: AgentExtras;
  private readonly system: string | undefined;
  /** Spans, metrics, log lines and alerts of the runs (loaded on the first run); absent when all are off. */
  private readonly telemetry: LazyTelemetry | undefined;
  /** What a stored run records of this agent, and its hash (a resume refuses a changed agent). */
  private config: unknown;
  private configHashValue: string | undefined;
  private readonly hashConfig: () => string;

  /** Throws a {@link ReinError} with code `config` when the configuration cannot work. */
  constructor(options: AgentOptions<S>) {
    validateAgentOptions(options);
    this.options = options;
    // With its own streamFn (a replay, a test double) the agent never calls the provider: no key needed.
    const modelConfig = options.streamFn ? { ...options.modelConfig, keyOptional: true } : options.modelConfig;
    this.model = typeof options.model === 'string' ? resolveModel(options.model, modelConfig) : options.model;
    // Secrets never reach the log: every stored event and run record is redacted on its way
    // in (the live events and the model's history keep the real values the run needs).
    const redactor = options.redact === false ? undefined : (options.redact ?? defaultRedactor());
    this.store = options.store && redactor ? redactingStore(options.store, redactor) : options.store;
    this.log = options.log && redactor ? redactingLog(options.log, redactor) : options.log;
    // What leaves the process for a telemetry backend is redacted even when the store is not.
    if (options.telemetry !== false || options.logger || options.alerts || options.hooks?.onAlert) {
      const request = options.modelOptions ?? {};
      this.telemetry = new LazyTelemetry({
        telemetry: options.telemetry,
        logger: options.logger,
        alerts: options.alerts,
        onAlert: options.hooks?.onAlert,
        redactor: redactor ?? defaultRedactor(),
        model: this.model,
        request: {
          stream: request.stream !== false,
          ...(request.maxTokens === undefined ? {} : { maxTokens: request.maxTokens }),
          ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        },
      });
    }
    const tools: Tool[] = [...(options.tools ?? [])];
    this.extras = new AgentExtras({
      ...(options.skills ? { skills: options.skills } : {}),
      ...(options.memory ? { memory: options.memory } : {}),
      ...(options.toolOutputPaging ? { toolOutputPaging: options.toolOutputPaging } : {}),
      ...(options.toolSelection ? { toolSelection: options.toolSelection } : {}),
      ownTools: tools.map((t) => t.name),
      ...(this.store ? { store: this.store } : {}),
    });
    tools.push(...this.extras.tools);
    if (options.context && options.context.planTool && !tools.some((t) => t.name === updatePlanTool.name)) tools.push(updatePlanTool);
    if (options.outputSchema !== undefined) {
      const finalAnswer = createFinalAnswerTool(options.outputSchema);
      tools.push(finalAnswer);
      this.finalAnswerTool = finalAnswer.name;
    }
    const own = new ToolRegistry(tools);
    // The final-answer tool is how a run with an output schema ends: always allowed.
    const allowed = options.allowedTools && this.finalAnswerTool ? [...options.allowedTools, this.finalAnswerTool] : options.allowedTools;
    this.registry = new AgentTools(own, options.toolSources ?? [], allowed);
    this.limits = { ...DEFAULT_LIMITS, ...stripUndefined(options.limits ?? {}) };
    // The price is looked up once; each response is then priced by a multiplication.
    const pricing = lookupModel(this.model.provider, this.model.id, options.modelInfo).pricing;
    this.costOf = pricing ? (usage) => priceUsage(pricing, usage) : undefined;
    if (this.limits.maxCostUsd !== undefined && !pricing) {
      throw new ReinError(
        'config',
        'fatal',
        `limits.maxCostUsd is set, but rein has no price for ${this.model.provider}/${this.model.id}: ` +
          'give one as modelInfo: { pricing: { input, output } } (USD per million tokens), or use limits.maxTokens',
      );
    }
    this.config = {
      model: `${this.model.provider}/${this.model.id}`,
      system: options.system ?? null,
      // A source's tools may change between runs (an MCP server updates): the record names
      // the sources, and a resume checks the agent's own tools.
      tools: own
        .list()
        .filter((t) => this.registry.get(t.name) === t)
        .map((t) => ({ name: t.name, description: t.description, parameters: t.parameters, effect: t.effect ?? 'unsafe' })),
      ...(options.toolSources?.length ? { toolSources: options.toolSources.map((s) => s.id) } : {}),
      ...(options.allowedTools ? { allowedTools: options.allowedTools } : {}),
    };
    // The hash is taken on first need (a stored run): an agent without a store never pays for it.
    const recorded = this.config;
    this.hashConfig = () => (this.configHashValue ??= createHash('sha256').update(canonicalJson(recorded)).digest('hex'));
    // Metadata is recorded with each run but is not part of what a resume compares.
    if (options.metadata) this.config = { ...(this.config as Record<string, unknown>), metadata: options.metadata };
    const provider = options.streamFn ?? streamModel;
    const retry = options.retry ?? {};
    this.provider = provider;
    this.retry = retry;
    this.stream = (model, context, streamOptions) => streamWithRetry(provider, model, context, streamOptions, retry);
    // Without a context engine, the skills catalog follows the system prompt directly.
    const catalog = options.context === false ? this.extras.catalog() : '';
    this.system = catalog ? (options.system ? `${options.system}\n\n${catalog}` : catalog) : options.system;
    this.contextEngine =
      options.context === false
        ? undefined
        : createContextEngine(this.extras.contextOptions(options.memory, options.context ?? {}), {
            model: this.model,
            stream: this.stream,
            wrapStream: (fn) => (model, context, streamOptions) => streamWithRetry(fn, model, context, streamOptions, retry),
            ...(this.system === undefined ? {} : { system: this.system }),
            ...(options.modelInfo ? { modelInfo: options.modelInfo } : {}),
            ...(options.modelOptions ? { modelOptions: options.modelOptions } : {}),
          });
  }

  /** The specs of the agent's tools, and the tool behind a name (shared by its runs). */
  private readonly ownSpecs = (): ToolSpec[] => this.registry.specs();
  private readonly toolOf = (name: string): Tool | undefined => this.registry.get(name);

  /** The tools this agent offers the model. */
  get tools(): readonly Tool[] {
    return this.registry.list();
  }

  /**
   * Tools of the tool sources left out because their name was already taken (by the
   * agent's own tools or an earlier source), as of now: a source's tools can change.
   */
  get toolConflicts(): ReadonlyArray<{ source: string; name: string }> {
    return this.registry.conflicts();
  }

  /**
   * Starts a run. The handle is an async iterable of events and a promise of the result;
   * the result always arrives (a limit, an abort or an error is a `reason`, not a throw).
   * With a `store`, every event is logged at the write points and the run can be resumed.
   *
   * Throws a `config` {@link ReinError} at once, before anything runs, for arguments that
   * cannot start a run: an input that is not a string or a user message, or a `history`
   * that is not an array of messages. A history tool call without a result gets an error
   * result (the run's history never holds a dangling call).
   */
  run(input: string | UserMessage, options: RunOptions = {}): RunHandle<OutputOf<S>> {
    checkRunOptions(options);
    const parent = parentOf(options);
    const runId = options.runId ?? newRunId();
    const user = toUser(input, 'run(input)');
    const history = startingHistory(options.history);
    return this.launch(
      runId,
      options.signal,
      { runId, kind: 'new', ...(parent ? { parent } : {}) },
      options.parent,
      undefined,
      async (extras, observedTraceId) => {
        const traceId = observedTraceId ?? newTraceId();
        extras?.restore(history);
        const input = extras ? extras.input(user) : user;
        const log = this.store
          ? await startStored(this.store, {
              id: runId,
              model: `${this.model.provider}/${this.model.id}`,
              config: this.config,
              configHash: this.hashConfig(),
              ...(options.parent ? { parentRunId: options.parent.runId } : {}),
            })
          : undefined;
        return { traceId, seq: 0, ...(log ? { log } : {}), start: { kind: 'new', input, history } };
      },
    );
  }

  /**
   * Hands a run to the workers instead of running it here: stores its `run_started` and
   * enqueues it in one transaction, on a store with a queue (Postgres: docs/workers.md).
   * A `rein worker` (or {@link createWorker}) that knows this agent as `options.agent`
   * (default `default`) takes it, and continues it after any worker's death. Resolves
   * with the run's id once it is queued. A store without a queue (SQLite, memory) is
   * refused with a `config` ReinError that says what to use.
   *
   * @example
   * const store = await openStore('postgres://localhost/rein');
   * const agent = new Agent({ model: 'openai/gpt-4o-mini', store });
   * const { runId } = await agent.submit('Summarize the open issues', { agent: 'triage' });
   */
  async submit(
    input: string | UserMessage,
    options: { runId?: string; agent?: string; history?: RunOptions['history'] } = {},
  ): Promise<{ runId: string }> {
    return submitStored(this.store, {
      input: toUser(input, 'submit(input)'),
      history: startingHistory(options.history),
      ...(options.runId === undefined ? {} : { runId: options.runId }),
      agent: options.agent ?? 'default',
      model: this.model,
      system: this.system,
      tools: this.registry.specs().map((t) => t.name),
      limits: this.limits,
      config: this.config,
      configHash: this.hashConfig(),
    });
  }

  /**
   * Continues a stored run from the tail of its log, in this process: after a crash, a
   * failure whose cause was fixed, an abort, or a pause. Completed tool calls never run
   * again; a call cut off mid-way is resolved by its tool's `effect`. Takes the run's lease,
   * so the process that drove it before can no longer write to it. Refused (as a failed
   * result, like every error) when the run is done, or when the agent's tools, prompt or
   * model changed since it started, unless `force`. `gateModel` wraps each model request
   * attempt of this run (a worker's fleet-wide limits, src/worker/fleet-limits.ts).
   */
  resume(
    runId: string,
    options: { signal?: AbortSignal; force?: boolean; parent?: RunParent; gateModel?: ModelGate } = {},
  ): RunHandle<OutputOf<S>> {
    return this.launch(runId, options.signal, { runId, kind: 'continue' }, options.parent, options.gateModel, async () =>
      prepareResume(await this.loadResumable(runId, options.force === true, false), runId),
    );
  }

  /**
   * Decides the approval a paused run waits for, from any process, and continues the run.
   * By default it approves every call waiting in the run; `toolCallId` (and
   * `argumentsHash`, as shown in the `approval_requested` event) pin the decision to one
   * call, and a decision that matches no waiting call is refused as stale. A denied call
   * becomes an error result the model sees. Deciding a run that no longer waits changes
   * nothing and says so. A run paused because a sub-agent waits (issue 23) is decided the
   * same way, on the root: the decision goes to the child's call (`runId` of the decision
   * narrows it to one child run), and the root resumes, resuming the child.
   */
  approve(runId: string, decision: ApprovalDecision & { signal?: AbortSignal; force?: boolean } = {}): RunHandle<OutputOf<S>> {
    return this.launch(runId, decision.signal, { runId, kind: 'continue' }, undefined, undefined, async () =>
      approveStored(await this.loadResumable(runId, decision.force === true, true), runId, decision),
    );
  }

  /**
   * Answers, from any process, the question a paused run's tool call waits on (an MCP
   * server's elicitation asked with nobody to answer it), and continues the run: the call
   * is made again and the server, asking again, gets this answer. An accepted form is
   * checked against the requested schema first (defaults filled in); one that does not fit,
   * or an answer that matches no waiting call, is refused and leaves the run paused. A
   * question asked in a sub-agent's call is answered on the root the same way (the answer
   * goes to the child's log; `runId` names the child when the call alone does not).
   */
  answerElicitation(runId: string, answer: ElicitationAnswer & { signal?: AbortSignal; force?: boolean }): RunHandle<OutputOf<S>> {
    return this.launch(runId, answer.signal, { runId, kind: 'continue' }, undefined, undefined, async () => {
      const store = await this.loadResumable(runId, answer.force === true, true);
      await recordElicitationAnswer(store, runId, answer);
      return prepareResume(store, runId);
    });
  }

  /** The store of a run this agent may continue (see {@link checkResumable}). */
  private async loadResumable(runId: string, force: boolean, approving: boolean): Promise<RunStore> {
    if (!this.store)
      throw new ReinError('config', 'fatal', 'continuing a stored run needs a store: new Agent({ store: await openStore(), … })');
    await checkResumable(this.store, runId, { force, approving, configHash: this.hashConfig(), config: this.config });
    return this.store;
  }

  /** Wires a run's controls, events, dispatcher and log, then runs the loop from `prepare`'s start. */
  private launch(
    runId: string,
    signal: AbortSignal | undefined,
    observe: ObserveStart,
    parent: RunParent | undefined,
    gateModel: ModelGate | undefined,
    prepare: (extras: RunExtras | undefined, observedTraceId: string | undefined) => Promise<Prepared>,
  ): RunHandle<OutputOf<S>> {
    const extras = this.extras.active ? this.extras.startRun(runId) : undefined;
    // Asked now, in the caller's context: its active span is the run's parent. (A promise
    // only until the telemetry module is loaded, on the agent's first run.)
    const observing = this.telemetry?.open(observe);
    let observer: RunObserver | undefined = observing instanceof Promise ? undefined : observing;
    const abortController = new AbortController();
    // Every asynchronous tool call of a turn listens on the run's signal until it settles: a
    // turn of more than 10 parallel calls is normal, not a leak, so no listener limit here.
    setMaxListeners(0, abortController.signal);
    const controls: RunControls = { steering: [], followUps: [], abortController };
    // The caller's signal may outlive many runs (one per server, per session): its listener
    // holds the whole run, so it goes when the run ends, however it ends.
    let unlinkSignal: (() => void) | undefined;
    if (signal) {
      if (signal.aborted) abortController.abort(signal.reason);
      else {
        const forward = (): void => abortController.abort(signal.reason);
        signal.addEventListener('abort', forward, { once: true });
        unlinkSignal = () => signal.removeEventListener('abort', forward);
      }
    }

    let seq = 0;
    let handle!: RunHandle<OutputOf<S>>;
    let log: RunLog | undefined;
    // Nothing is emitted after `run_finished`: a tool that ignores its abort signal may
    // still report progress, but the run's events end with its end.
    let ended = false;
    // The loop hands over a fresh object literal per event; stamping it in place saves a
    // copy per event on the hot path.
    // Stored events are numbered without gaps; a delta (streamed, never stored) carries the
    // seq of the stored event that will follow it, so the order stays visible.
    const emit = (body: RunEventBody): number => {
      if (ended) return seq;
      if (body.type === 'run_finished') ended = true;
      const stored = !DELTA_EVENT_TYPES.has(body.type);
      // Nobody can see this event (no log, no extras, no listener, no iterator: the run is
      // only awaited): it only takes its number.
      // (deps.extras: the extras of the agent the run is with now, this one's or, after a handoff, another's.)
      if (log === undefined && deps.extras === undefined && observer === undefined && !handle.observed) return stored ? seq++ : seq;
      const event = body as RunEvent;
      event.runId = runId;
      event.seq = seq;
      event.at = Date.now();
      if (stored) {
        seq++;
        log?.record(event);
      }
      deps.extras?.onEvent(event);
      observer?.onEvent(event);
      handle.deliver(event);
      return event.seq;
    };

    // Issue 23: every run is a node of a tree (alone, a root of depth 0) that the sub-agents
    // it starts can see; a child runs under its parent's remaining budgets.
    const node: TreeNode = {
      runId,
      rootRunId: parent?.rootRunId ?? runId,
      depth: parent?.depth ?? 0,
      started: Date.now(),
      limits: cappedLimits(this.limits, parent?.limits),
      totals: undefined,
      task: '',
      durable: false,
      deliver: (event) => handle.deliver(event),
    };
    const unregister = registerRun(node);

    const tools = this.toolDispatch(emit, extras ? (call) => extras.refuse(call) : undefined);
    // Every field is present from the start (optional ones as undefined): one object shape
    // for every run, and no spread per optional field.
    const deps: LoopDeps = {
      runId,
      traceId: '',
      model: this.model,
      // A worker's fleet limits go around each attempt, inside the retries (a 429's wait is then shared).
      stream: gateModel
        ? (model, context, streamOptions) => streamWithRetry(gateModel(this.provider), model, context, streamOptions, this.retry)
        : this.stream,
      modelOptions: this.options.modelOptions ?? {},
      system: this.system,
      toolSpecs: extras ? () => extras.specs(this.registry.specs()) : this.ownSpecs,
      dispatch: tools.dispatch,
      check: tools.check,
      toolOf: this.toolOf,
      approvalPolicy: this.options.approvalPolicy,
      finalAnswerTool: this.finalAnswerTool,
      costOf: this.costOf,
      limits: node.limits,
      toolExecution: this.options.toolExecution ?? 'parallel',
      stopOnToolError: this.options.stopOnToolError ?? false,
      hooks: this.options.hooks ?? {},
      controls,
      emit,
      wantsDeltas: () => handle.observed,
      log: undefined,
      context: undefined,
      traceSpan: undefined,
      tree: node,
      parent,
      agentName: this.options.name,
      extras,
    };

    // Start on a later tick so the caller can attach an iterator or listener first.
    const result: Promise<RunResult> = Promise.resolve()
      .then(async () => {
        if (observing instanceof Promise) observer = await observing;
        let prepared: Prepared;
        try {
          prepared = await prepare(extras, observer?.traceId || undefined);
          if (extras && prepared.start.kind === 'resume') extras.restore(prepared.start.state.history, prepared.events);
        } catch (error) {
          return notStarted(runId, toReinError(error, 'store'), emit);
        }
        if (prepared.finished) return prepared.finished;
        seq = prepared.seq;
        deps.traceId = prepared.traceId;
        node.task = taskText(prepared.start.kind === 'new' ? prepared.start.input : prepared.start.state.input);
        if (observer) this.observeRun(observer, deps, prepared);
        if (this.contextEngine) deps.context = this.contextEngine.startRun(contextSeed(prepared.start));
        // A resumed run that was handed to another agent goes on as that agent (issue 23).
        const handed = prepared.events ? handedTo(this, prepared.events) : undefined;
        if (handed) {
          deps.extras?.end();
          const history = prepared.start.kind === 'resume' ? prepared.start.state.history : [];
          Object.assign(deps, handed.handoffPart(emit, contextSeed(prepared.start), { runId, history }));
        }
        if (prepared.log) {
          log = prepared.log;
          deps.log = prepared.log;
          node.durable = true;
        }
        const outcome = await runLoop(deps, prepared.start);
        return log ? closeLog(this.store as RunStore, log, outcome) : outcome;
      })
      .catch((error: unknown) =>
        // runLoop never rejects by design; this is the last line of defence against a bug:
        // the handle still resolves, with the error as a failed result.
        notStarted(runId, toReinError(error), emit),
      )
      .finally(() => {
        observer?.close();
        unregister();
        unlinkSignal?.();
        deps.extras?.end();
        handle.finish();
      });
    // The output is the final-answer tool's checked arguments, which `OutputOf<S>` describes.
    handle = new RunHandle(runId, controls, result as Promise<RunResult<OutputOf<S>>>);
    return handle;
  }

  /**
   * @internal What a run takes from this agent when a handoff gives it the conversation
   * (issue 23): its model, prompt, tools, permission policy and hooks, its context engine
   * (memory hits, its skills catalog), and its skills, paging and tool selection started
   * for the run from the history so far (a skill the history loaded is active).
   */
  handoffPart(emit: (body: RunEventBody) => number, seed: RunSeed, run: { runId: string; history: readonly Message[] }): HandoffPart {
    const extras = this.extras.active ? this.extras.startRun(run.runId) : undefined;
    extras?.restore(run.history);
    const tools = this.toolDispatch(emit, extras ? (call) => extras.refuse(call) : undefined);
    return {
      model: this.model,
      stream: this.stream,
      modelOptions: this.options.modelOptions ?? {},
      system: this.system,
      toolSpecs: extras ? () => extras.specs(this.registry.specs()) : this.ownSpecs,
      dispatch: tools.dispatch,
      check: tools.check,
      toolOf: this.toolOf,
      approvalPolicy: this.options.approvalPolicy,
      finalAnswerTool: this.finalAnswerTool,
      costOf: this.costOf,
      toolExecution: this.options.toolExecution ?? 'parallel',
      stopOnToolError: this.options.stopOnToolError ?? false,
      hooks: this.options.hooks ?? {},
      agentName: this.options.name,
      context: this.contextEngine?.startRun(seed),
      extras,
    };
  }

  /** @internal The agents this agent's handoff tools lead to, by name. */
  handoffTargets(): ReadonlyMap<string, HandoffTarget> {
    const out = new Map<string, HandoffTarget>();
    for (const tool of this.registry.list()) {
      const target = handoffTargetOf(tool);
      if (target?.options.name !== undefined) out.set(target.options.name, target);
    }
    return out;
  }

  /** Hands a run's observer what it needs from the loop: its start, and the model requests and tool calls to put in context. */
  private observeRun(observer: RunObserver, deps: LoopDeps, prepared: Prepared): void {
    if (prepared.start.kind === 'resume') observer.continueFrom(prepared.events ?? [], prepared.seq);
    const span = observer.spanFields();
    if (span) deps.traceSpan = span;
    if (observer.propagatesToModel) deps.modelOptions = { ...deps.modelOptions, requestHeaders: observer.modelHeaders };
    if (observer.wrapsTools) {
      const dispatch = deps.dispatch;
      deps.dispatch = (call, ctx, confirm) => observer.runTool(call.id, () => dispatch(call, ctx, confirm));
    }
  }

  /**
   * The loop's `dispatch` and `check` over a dispatcher of this agent's tools, for a run or
   * for a run handed over to this agent. `refuse` names calls refused before they run (an
   * active skill's `allowed-tools`).
   */
  private toolDispatch(
    emit: (body: RunEventBody) => number,
    refuse?: (call: ToolCall) => string | undefined,
  ): Pick<LoopDeps, 'dispatch' | 'check'> {
    const stepOfCall = new Map<string, number>();
    // Under an approval policy: the permission check of each gated call being dispatched.
    const checks = new Map<string, Confirm>();
    const dispatcher = this.dispatcherFor(emit, stepOfCall, checks);
    return {
      dispatch: (call, ctx, confirm) => {
        stepOfCall.set(call.id, ctx.step);
        const refusal = refuse?.(call);
        if (refusal !== undefined) return deniedOutcome(call, refusal);
        if (confirm === undefined) return dispatcher.dispatchNow(call, ctx);
        checks.set(call.id, confirm);
        return Promise.resolve(dispatcher.dispatchNow(call, ctx)).finally(() => checks.delete(call.id));
      },
      check: (call) => dispatcher.check(call),
    };
  }

  private dispatcherFor(emit: (body: RunEventBody) => number, stepOfCall: Map<string, number>, checks: ReadonlyMap<string, Confirm>) {
    const hooks = this.options.hooks ?? {};
    // Under a policy or an `onConfirm` hook the batch hands over a check for each call a
    // person must see (see `runGated` in approvals.ts); the dispatcher runs it where it
    // runs a permission check — after validation and beforeToolCall, with the arguments
    // that will run — and allows the calls without one (the policy allowed them).
    const gated = this.options.approvalPolicy !== undefined || hooks.onConfirm !== undefined;
    return createDispatcher(this.registry, {
      ...(this.options.toolTimeoutMs === undefined ? {} : { defaultTimeoutMs: this.options.toolTimeoutMs }),
      ...(this.options.maxToolOutputChars === undefined ? {} : { maxOutputChars: this.options.maxToolOutputChars }),
      ...(hooks.beforeToolCall ? { beforeToolCall: hooks.beforeToolCall } : {}),
      ...(hooks.afterToolCall ? { afterToolCall: hooks.afterToolCall } : {}),
      ...(this.log ? { log: this.log } : {}),
      onProgress: (call, update) => {
        emit({ type: 'tool_progress', step: stepOfCall.get(call.id) ?? 0, toolCallId: call.id, name: call.name, ...update });
      },
      ...(gated
        ? { onConfirm: (call: ToolCall, args: Record<string, unknown>, tool: Tool) => checks.get(call.id)?.(args, tool) ?? true }
        : {}),
    });
  }
}

/**
 * Wraps every model request of a run (each attempt, inside the retries): how a worker
 * holds requests to the fleet's limits (src/worker/fleet-limits.ts).
 */
export type ModelGate = (fn: StreamFunction) => StreamFunction;

/**
 * The result (and last event) of a run that could not begin — a bad store or a refused
 * resume — or, as the last line of defence, of one whose loop failed to build its result.
 */
function notStarted(runId: string, error: ReinError, emit: (body: RunEventBody) => number): RunResult {
  const result: RunResult = {
    runId,
    traceId: '',
    status: 'failed',
    reason: 'fatal_error',
    text: '',
    messages: [],
    totals: { steps: 0, toolCalls: 0, usage: emptyUsage(), durationMs: 0 },
    error: error.toJSON(),
  };
  const { messages: _omit, ...summary } = result;
  emit({ type: 'run_finished', status: 'failed', reason: 'fatal_error', result: summary });
  return result;
}

/** What a run's context engine starts from: the goal, and a resumed run's task record. */
function contextSeed(start: LoopStart): RunSeed {
  if (start.kind === 'new') return { input: start.input, scanned: start.history.length };
  const { state } = start;
  // The record covers every completed batch; a pending one is recorded once it finishes.
  return { input: state.input, task: state.task, scanned: state.history.length - (state.pending ? 1 : 0) };
}

/** The text of a run's task (its input), for the sub-agents it starts. */
function taskText(input: UserMessage): string {
  if (typeof input.content === 'string') return input.content;
  return input.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
