/**
 * The context engine of one run: before each request it resolves the layers, estimates
 * the request and, past the threshold, compacts the history in place; it assembles the
 * request around the history without changing it; after each response it learns from the
 * reported usage; after a context-length error it compacts once more.
 *
 * Far below the threshold a turn costs a few comparisons and the token counts of the
 * messages added since the last turn (see `sums.ts`); layers are joined and counted only
 * when their text changes (see `turn-layers.ts`).
 */
import { ReinError } from '../errors.js';
import type { RunEventBody } from '../events.js';
import type { AssistantMessage, Context, Message, ToolSpec, Usage, UserMessage } from '../model/types.js';
import { shouldCompact, splitForCompaction, type CompactionSplit } from './compaction.js';
import { RequestMessages } from './layers.js';
import type { ContextAgentInfo, ContextOptions, ContextSetup } from './options.js';
import { resolveContextOptions } from './options.js';
import { buildSummaryRequest, isSummaryMessage, mechanicalSummary, requestSummary, summaryMessage, SUMMARY_HEADER } from './summary.js';
import { MessageSums } from './sums.js';
import { renderTask, TaskTracker, userText, type TaskRecord } from './task.js';
import { TurnLayers } from './turn-layers.js';

/** The stored event a compaction emits. */
export type ContextCompactedEvent = Extract<RunEventBody, { type: 'context_compacted' }>;

/** What the loop hands the engine for one turn. */
export interface TurnContext {
  step: number;
  signal: AbortSignal;
  /** Called once the history was compacted, before anything else can fail: emit the event, count the summary's usage. */
  onCompacted: (event: ContextCompactedEvent, response: AssistantMessage | undefined) => void;
}

/** Where a run starts, for its task record. */
export interface RunSeed {
  /** The run's input: its goal. */
  input: UserMessage;
  /** A resumed run's record, from its log. */
  task?: TaskRecord;
  /** History messages already accounted for (a chat's earlier turns; a resumed run's history). */
  scanned?: number;
}

/** An agent's context engine: options resolved once, one {@link RunContext} per run. */
export interface ContextEngine {
  readonly setup: ContextSetup;
  startRun(seed: RunSeed): RunContext;
}

/**
 * Resolves `options` for an agent. Throws a `config` error for an invalid option.
 *
 * @example
 * const engine = createContextEngine({ threshold: 0.8, summaryModel: 'openai/gpt-4o-mini' }, { model, stream, wrapStream });
 * const run = engine.startRun({ input: { role: 'user', content: 'Fix the build' } });
 */
export function createContextEngine(options: ContextOptions, agent: ContextAgentInfo): ContextEngine {
  const setup = resolveContextOptions(options, agent);
  // The system prompt is the same for every run of the agent: counted once per counter version.
  let system = { version: -1, raw: 0 };
  const systemRaw = (): number => {
    if (system.version !== setup.counter.version)
      system = { version: setup.counter.version, raw: setup.system === undefined ? 0 : setup.counter.text(setup.system) };
    return system.raw;
  };
  return { setup, startRun: (seed) => new RunContext(setup, seed, systemRaw()) };
}

/** Start loading the tokenizer once a request reaches this fraction of the window. */
const LOAD_TOKENIZER_AT = 0.35;
/** After a context-length error, the window is taken to be this fraction of the refused request. */
const REFUSED_FRACTION = 0.9;

/** The engine of one run. */
export class RunContext {
  private trackerState: TaskTracker | undefined;
  private window: number;
  private compacted = false;
  private readonly layers: TurnLayers;
  private readonly sums: MessageSums;
  private placed: RequestMessages | undefined;
  /** The last request assembled and its raw token count, for calibration. */
  private lastRequest: Context | undefined;
  private lastRaw = 0;

  constructor(
    private readonly setup: ContextSetup,
    private readonly seed: RunSeed,
    systemRaw: number,
  ) {
    this.window = setup.window;
    this.layers = new TurnLayers(setup, systemRaw);
    this.sums = new MessageSums(setup.counter);
  }

  /** The task tracker, made when first needed (most runs never compact). */
  private get tracker(): TaskTracker {
    if (!this.trackerState) {
      const { seed } = this;
      const goal = userText(seed.input);
      const record = seed.task ? { ...seed.task, goal: seed.task.goal || goal } : { goal, completed: [] };
      this.trackerState = new TaskTracker(goal, { record, scanned: seed.scanned ?? 0 });
    }
    return this.trackerState;
  }

  /** The task record so far (synced with `history` when given). */
  task(history?: readonly Message[]): Readonly<TaskRecord> {
    if (history) this.tracker.sync(history);
    return this.tracker.record;
  }

  /**
   * Before a request: resolves this turn's layers and, when the request would reach the
   * threshold, compacts `history` in place (the loop's own array, so later turns build on
   * the compacted history). Throws (or rejects with) `context_overflow` when even a
   * compacted request cannot fit the window. Returns nothing, synchronously, on the common
   * turn: no per-turn layers and far below the threshold.
   */
  prepare(history: Message[], tools: readonly ToolSpec[], turn: TurnContext): Promise<void> | undefined {
    if (this.layers.settled(this.showTask(history))) {
      const estimate = this.estimate(history, tools);
      if (estimate < this.window * Math.min(this.setup.threshold, LOAD_TOKENIZER_AT) && estimate <= this.limit()) return undefined;
    }
    return this.prepareFully(history, tools, turn);
  }

  private async prepareFully(history: Message[], tools: readonly ToolSpec[], turn: TurnContext): Promise<void> {
    await this.resolveLayers(history, turn);
    let estimate = this.estimate(history, tools);
    const { counter, threshold } = this.setup;
    if (counter.method === 'estimate' && estimate >= this.window * LOAD_TOKENIZER_AT) {
      const loading = counter.load();
      // Decisions at the threshold are made on exact counts when the model has a tokenizer.
      if (shouldCompact(estimate, this.window, threshold)) {
        await loading;
        estimate = this.estimate(history, tools);
      }
    }
    // Past the threshold, or past what fits when the answer's reserve leaves less than that.
    if (shouldCompact(estimate, this.window, threshold) || estimate > this.limit())
      await this.compact(history, tools, turn, 'threshold', estimate);
  }

  /**
   * The request of this turn around `messages` (the history, or what `transformContext`
   * made of it): the system layers joined into `system`, the user layers in a context
   * message at the end. `messages` is never changed.
   */
  assemble(messages: Message[], tools: ToolSpec[]): Context {
    const { system, systemRaw, block, blockRaw } = this.layers.joined;
    const placed = block ? (this.placed ??= new RequestMessages()).place(messages, block) : messages;
    const request: Context = system === undefined ? { messages: placed, tools } : { system, messages: placed, tools };
    this.lastRequest = request;
    this.lastRaw = systemRaw + this.setup.counter.tools(tools) + this.sums.ofRequest(messages) + blockRaw;
    return request;
  }

  /** After a response to `request`: corrects the token counts by the prompt tokens it reports. */
  observe(request: Context, response: AssistantMessage): void {
    if (this.lastRequest !== request || response.stopReason === 'error' || response.stopReason === 'aborted') return;
    const u = response.usage;
    this.setup.counter.calibrate(this.lastRaw, u.input + u.cacheRead + u.cacheWrite);
  }

  /**
   * The usage of a response whose server reported none (some OpenAI-compatible servers
   * never do, or not without `stream_options`): the calibrated count of `request` as input
   * and of the answer as output. `undefined` when `request` is not the one assembled last.
   */
  estimateUsage(request: Context, response: AssistantMessage): Usage | undefined {
    if (this.lastRequest !== request) return undefined;
    const { counter } = this.setup;
    const input = Math.round(counter.calibrated(this.lastRaw));
    const output = Math.round(counter.calibrated(counter.message(response)));
    return { input, output, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: input + output, estimated: true };
  }

  /**
   * After the provider refused the last request for its length: takes the window to be
   * smaller than that request and compacts once, whatever the estimate says. `false` when
   * nothing could be removed (the run then fails with the provider's error).
   */
  async recover(history: Message[], tools: readonly ToolSpec[], turn: TurnContext): Promise<boolean> {
    const refused = this.lastRequest ? this.setup.counter.calibrated(this.lastRaw) : this.estimate(history, tools);
    this.window = Math.max(256, Math.min(this.window, Math.floor(refused * REFUSED_FRACTION)));
    return this.compact(history, tools, turn, 'context_length', refused);
  }

  // --- estimating ------------------------------------------------------------------------

  /** Whether the task layer is shown this turn. */
  private showTask(history: readonly Message[]): boolean {
    const { task } = this.setup;
    return task === 'always' || (task === 'auto' && (this.compacted || isSummaryMessage(history[0])));
  }

  private resolveLayers(history: readonly Message[], turn: TurnContext): Promise<void> {
    return this.layers.resolve({
      step: turn.step,
      signal: turn.signal,
      history,
      showTask: this.showTask(history),
      task: () => this.task(history),
    });
  }

  /** The calibrated tokens of the request this turn would send for `history`. */
  private estimate(history: readonly Message[], tools: readonly ToolSpec[]): number {
    this.layers.refresh();
    const { systemRaw, blockRaw } = this.layers.joined;
    return this.setup.counter.calibrated(systemRaw + this.setup.counter.tools(tools) + this.sums.ofHistory(history) + blockRaw);
  }

  private limit(): number {
    return this.window - this.setup.reserve;
  }

  /**
   * Throws `context_overflow` when the request `estimate` does not fit the window less the
   * answer's reserve, saying which to shrink. When the reserve is what breaks it (the
   * request alone would fit) or a large part of it (half the window or more), the message
   * leads with the reserve: shortening prompts cannot help then.
   */
  private checkFits(estimate: number, history: readonly Message[], compacted: boolean): void {
    if (estimate <= this.limit()) return;
    const { counter, model, reserve } = this.setup;
    const name = `${model.provider}/${model.id}`;
    const fixed = counter.calibrated(this.layers.joined.systemRaw + this.layers.joined.blockRaw);
    const last = history.length > 0 ? counter.calibrated(counter.message(history[history.length - 1] as Message)) : 0;
    const request = `the next request is about ${estimate} tokens${compacted ? ' even after compaction' : ''}`;
    const parts = `(system prompt and layers ≈ ${fixed}, last message ≈ ${last})`;
    const shorten =
      'shorten the system prompt, rules or skills catalog, keep tool results small (maxToolOutputChars), lower context.keepTurns, ' +
      "or use a model with a larger window (set modelInfo.contextWindow if rein's catalog has it wrong)";
    if (reserve > 0 && (estimate <= this.window || reserve * 2 >= this.window)) {
      const room = this.window - Math.ceil(estimate);
      throw new ReinError(
        'context_overflow',
        'fatal',
        `${request}, and ${reserve} more are kept for the answer (modelOptions.maxTokens; --max-output-tokens in the CLI): ` +
          `together more than the ${this.window}-token window of ${name} ${parts}. ` +
          (room > 0
            ? `Lower the answer's reserve: this request leaves room for at most ${room}`
            : `Lower the answer's reserve, and ${shorten}`),
      );
    }
    throw new ReinError(
      'context_overflow',
      'fatal',
      `${request}, over the ${this.window}-token window of ${name}${reserve > 0 ? ` less ${reserve} kept for the answer` : ''} ${parts}. To make it fit, ${shorten}`,
    );
  }

  // --- compaction ------------------------------------------------------------------------

  /**
   * Summarizes the oldest turns of `history` and replaces them in place with the summary,
   * keeping the last turns verbatim (fewer than `keepTurns` only when they alone would
   * reach the threshold). `false` when there was nothing to remove.
   */
  private async compact(
    history: Message[],
    tools: readonly ToolSpec[],
    turn: TurnContext,
    reason: 'threshold' | 'context_length',
    tokensBefore: number,
  ): Promise<boolean> {
    const { setup } = this;
    const { counter } = setup;
    this.tracker.sync(history);
    const split = this.chooseSplit(history, tools);
    if (!split) {
      if (reason === 'threshold') this.checkFits(tokensBefore, history, false);
      return false;
    }
    const headSteps = new TaskTracker('');
    headSteps.sync(split.head);
    const first = split.head[0];
    const previous = isSummaryMessage(first)
      ? userText(first as UserMessage)
          .slice(SUMMARY_HEADER.length)
          .trim()
      : undefined;
    const request = buildSummaryRequest({
      removed: split.head,
      goal: this.tracker.record.goal,
      steps: headSteps.record.completed,
      maxTokens: setup.summaryMaxTokens,
      // The summary model's window less its answer and the framing of the request.
      budget: setup.summaryWindow - (setup.summaryOptions.maxTokens ?? 2 * setup.summaryMaxTokens) - 200,
      count: (text) => counter.calibrated(counter.text(text)),
    });
    const outcome = await requestSummary(setup.summaryStream, setup.summaryModel, request, {
      maxTokens: setup.summaryMaxTokens,
      counter,
      streamOptions: { ...setup.summaryOptions, signal: turn.signal },
    });
    // An aborted run stops here; the loop reports the abort.
    if (turn.signal.aborted) return false;
    const text = outcome.ok
      ? outcome.text
      : mechanicalSummary({
          ...(previous ? { previous } : {}),
          steps: headSteps.record.completed,
          maxTokens: setup.summaryMaxTokens,
          counter,
          reason: outcome.error.code,
        });
    const summary = summaryMessage(text);
    history.splice(0, split.keepFrom, summary);
    this.tracker.scanned = Math.max(1, this.tracker.scanned - split.keepFrom + 1);
    this.compacted = true;
    this.placed?.reset();
    this.sums.forgetReplaced();
    this.layers.historyRewritten();
    await this.resolveLayers(history, turn);
    const tokensAfter = this.estimate(history, tools);
    const response = outcome.response;
    if (response && response.usage.cost === undefined) {
      const cost = setup.summaryCost(response.usage);
      if (cost) response.usage.cost = cost;
    }
    turn.onCompacted(
      {
        type: 'context_compacted',
        step: turn.step,
        reason,
        tokensBefore,
        tokensAfter,
        removedMessages: split.keepFrom,
        keptMessages: split.tail.length,
        keptTurns: split.keptTurns,
        summary,
        summarizer: outcome.ok ? 'model' : 'mechanical',
        summaryModel: `${setup.summaryModel.provider}/${setup.summaryModel.id}`,
        ...(response ? { usage: response.usage } : {}),
        ...(outcome.ok ? {} : { summaryError: outcome.error.toJSON() }),
      },
      response,
    );
    this.checkFits(tokensAfter, history, true);
    return true;
  }

  /**
   * The split keeping the most turns (up to `keepTurns`) whose compacted request stays
   * under the threshold; the one keeping a single turn when none does.
   */
  private chooseSplit(history: readonly Message[], tools: readonly ToolSpec[]): CompactionSplit | undefined {
    const { counter, keepTurns, summaryMaxTokens, threshold } = this.setup;
    // In `auto` mode the task layer appears with the first compaction: count it in.
    const taskAppears = this.setup.task === 'auto' && !this.showTask(history);
    const { systemRaw, blockRaw } = this.layers.joined;
    const fixedRaw = systemRaw + counter.tools(tools) + blockRaw + (taskAppears ? counter.text(renderTask(this.tracker.record)) + 8 : 0);
    // Counted once; each candidate split is then two subtractions.
    const before: number[] = [0];
    for (const message of history) before.push((before[before.length - 1] as number) + counter.message(message));
    const total = before[history.length] as number;
    let chosen: CompactionSplit | undefined;
    for (let keep = keepTurns; keep >= 1; keep--) {
      const split = splitForCompaction(history, keep);
      if (!split) continue;
      // Re-summarizing nothing but the previous summary gains nothing.
      if (split.head.length === 1 && isSummaryMessage(split.head[0])) continue;
      chosen = split;
      const headRaw = before[split.keepFrom] as number;
      // A summary is at most its cap, and in practice no longer than what it replaces.
      const after = counter.calibrated(fixedRaw + total - headRaw) + Math.min(summaryMaxTokens, counter.calibrated(headRaw));
      if (!shouldCompact(after, this.window, threshold) && after <= this.limit()) break;
    }
    return chosen;
  }
}
