/**
 * How an agent's context is assembled and compacted: the options users write, checked and
 * resolved once per agent into a {@link ContextSetup} that each run's engine shares.
 */
import { ReinError } from '../errors.js';
import { lookupModel, priceUsage, type ModelOverrides } from '../model/catalog.js';
import { resolveModel } from '../model/resolve.js';
import type { Cost, Message, ModelRef, StreamFunction, StreamOptions, Usage } from '../model/types.js';
import { DEFAULT_KEEP_TURNS, DEFAULT_THRESHOLD } from './compaction.js';
import type { Layer } from './layers.js';
import { DEFAULT_SUMMARY_MAX_TOKENS } from './summary.js';
import type { TaskRecord } from './task.js';
import { createTokenCounter, type TokenCounter } from './tokens.js';

/** Text for a layer: given, or produced once per run (a loader of `AGENTS.md`, a skills catalog). */
export type LayerSource = string | (() => string | undefined | Promise<string | undefined>);

/**
 * One retrieved piece of text for the memory layer: what a `retrieve` function answers (the
 * memory store's own `MemorySnippet` has these fields and more).
 */
export interface RetrievedText {
  text: string;
  /** Where it came from (a file, a note id), shown beside it. */
  source?: string;
  /** Relevance, higher is better; compared with `minScore` when both are set. */
  score?: number;
}

/** Memory (retrieval) injected into the request when it is relevant to the latest user input. */
export interface MemoryOptions {
  /** Finds up to `k` snippets for `query` (the latest user input). Called again only when the input changes. */
  retrieve: (query: string, k: number, signal: AbortSignal) => RetrievedText[] | Promise<RetrievedText[]>;
  /** Snippets asked for (default 5). */
  topK?: number;
  /** Snippets scoring below this are left out (default: keep all the retriever returns). */
  minScore?: number;
  /** The memory block stops taking snippets past this many characters (default 4000; the best one is always shown, cut if it must be). */
  maxChars?: number;
}

/** What a layer hook sees besides the layers. */
export interface LayerInfo {
  step: number;
  /** The history this request is built around (read-only: the hook rewrites layers, not history). */
  history: readonly Message[];
  task: Readonly<TaskRecord>;
  signal: AbortSignal;
}

/** Adds, removes or rewrites the layers of one request (e.g. inject a reminder, drop the skills catalog). */
export type LayerHook = (layers: Layer[], info: LayerInfo) => Layer[] | Promise<Layer[]>;

/**
 * `new Agent({ context })`: what goes into each request, and when and how the history is
 * compacted. Every field is optional; `context: false` turns the engine off (requests are
 * the bare history, nothing is compacted, a context-length error fails the run).
 */
export interface ContextOptions {
  /** Compact when the next request would reach this fraction of the window (default 0.7). */
  threshold?: number;
  /** Turns kept verbatim by a compaction (default 5; fewer only when 5 alone would not fit). */
  keepTurns?: number;
  /** Cap of a summary in tokens (default 500): longer answers are cut. */
  summaryMaxTokens?: number;
  /** The model that writes summaries, `provider/model` or a {@link ModelRef} (default: the run's model). */
  summaryModel?: string | ModelRef;
  /** The call used for summaries (default: the agent's own, `streamFn` included). Retry wraps it. */
  summaryStream?: StreamFunction;
  /** Request options of summary calls (default: `maxTokens` of twice the cap, so a model that overshoots is cut, not stopped short). */
  summaryOptions?: Omit<StreamOptions, 'signal'>;
  /** The window to plan for, in tokens (default: `modelInfo.contextWindow`, else rein's catalog). */
  contextWindow?: number;
  /** Project rules (the text of `AGENTS.md`), a system layer after the system prompt. */
  rules?: LayerSource;
  /** The skills catalog, a system layer after the rules. */
  skills?: LayerSource;
  /** Memory hits for the latest user input, in the context message at the end of the request. */
  memory?: MemoryOptions;
  /**
   * When the task layer (goal, completed steps, plan) is shown: `auto` (default) once the
   * history was compacted — before that, the history itself shows it —; `always`; `never`.
   * It defaults to `always` with `planTool`.
   */
  task?: 'auto' | 'always' | 'never';
  /** Offer the model the `update_plan` tool, whose plan the task layer shows. */
  planTool?: boolean;
  /** Called on every request with its layers; returns the layers to use. */
  layers?: LayerHook;
}

/** What the agent tells the context engine about itself. */
export interface ContextAgentInfo {
  model: ModelRef;
  /** The agent's model call, retry included. */
  stream: StreamFunction;
  /** Wraps a user-given summary call the way the agent's own is wrapped (retry). */
  wrapStream: (fn: StreamFunction) => StreamFunction;
  system?: string;
  modelInfo?: ModelOverrides;
  modelOptions?: Omit<StreamOptions, 'signal'>;
}

/** Options resolved once per agent and shared by its runs. */
export interface ContextSetup {
  model: ModelRef;
  counter: TokenCounter;
  /** The model's window in tokens. */
  window: number;
  /** Tokens kept free for the answer (`modelOptions.maxTokens`, else 0). */
  reserve: number;
  threshold: number;
  keepTurns: number;
  summaryMaxTokens: number;
  summaryModel: ModelRef;
  summaryWindow: number;
  summaryStream: StreamFunction;
  summaryOptions: Omit<StreamOptions, 'signal'>;
  summaryCost: (usage: Usage) => Cost | undefined;
  system: string | undefined;
  rules: LayerSource | undefined;
  skills: LayerSource | undefined;
  memory: MemoryOptions | undefined;
  task: 'auto' | 'always' | 'never';
  layers: LayerHook | undefined;
}

/**
 * Checks `options` and resolves them against the agent. Throws a `config` {@link ReinError}
 * naming the option and what to write instead.
 */
export function resolveContextOptions(options: ContextOptions, agent: ContextAgentInfo): ContextSetup {
  const threshold = options.threshold ?? DEFAULT_THRESHOLD;
  if (!(threshold > 0 && threshold <= 1)) bad('threshold', threshold, 'a fraction of the window above 0 and at most 1, e.g. 0.7');
  const keepTurns = options.keepTurns ?? DEFAULT_KEEP_TURNS;
  if (!Number.isInteger(keepTurns) || keepTurns < 1) bad('keepTurns', keepTurns, 'a whole number of turns, at least 1');
  const summaryMaxTokens = options.summaryMaxTokens ?? DEFAULT_SUMMARY_MAX_TOKENS;
  if (!Number.isInteger(summaryMaxTokens) || summaryMaxTokens < 50)
    bad('summaryMaxTokens', summaryMaxTokens, 'a whole number of tokens, at least 50');
  const info = lookupModel(agent.model.provider, agent.model.id, agent.modelInfo);
  const window = options.contextWindow ?? info.contextWindow;
  if (!Number.isInteger(window) || window < 256) bad('contextWindow', window, "the model's context window in tokens, e.g. 128000");
  const summaryModel =
    options.summaryModel === undefined
      ? agent.model
      : typeof options.summaryModel === 'string'
        ? resolveModel(options.summaryModel)
        : options.summaryModel;
  const sameModel = summaryModel === agent.model;
  const summaryInfo = sameModel ? info : lookupModel(summaryModel.provider, summaryModel.id);
  const pricing = summaryInfo.pricing;
  return {
    model: agent.model,
    counter: createTokenCounter(agent.model),
    window,
    reserve: agent.modelOptions?.maxTokens ?? 0,
    threshold,
    keepTurns,
    summaryMaxTokens,
    summaryModel,
    summaryWindow: sameModel ? window : summaryInfo.contextWindow,
    summaryStream: options.summaryStream ? agent.wrapStream(options.summaryStream) : agent.stream,
    summaryOptions: options.summaryOptions ?? { maxTokens: 2 * summaryMaxTokens },
    summaryCost: pricing ? (usage) => priceUsage(pricing, usage) : () => undefined,
    system: agent.system,
    rules: options.rules,
    skills: options.skills,
    memory: options.memory,
    task: options.task ?? (options.planTool ? 'always' : 'auto'),
    layers: options.layers,
  };
}

function bad(option: string, value: unknown, expected: string): never {
  throw new ReinError('config', 'fatal', `context.${option} is ${JSON.stringify(value)}: expected ${expected}`);
}
