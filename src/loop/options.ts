/**
 * What an agent and a run are configured with. Everything optional has a default here,
 * in one place, so the loop never guesses.
 */
import type { RunLimits, RunTotals, StopReasonCode } from '../events.js';
import type {
  AssistantMessage,
  ChatCompat,
  Message,
  ModelRef,
  ToolCalling,
  StreamFunction,
  StreamOptions,
  ToolResultMessage,
  ToolCall,
} from '../model/types.js';
import type { RetryPolicy } from '../model/retry.js';
import type { ModelOverrides } from '../model/catalog.js';
import type { RunStore } from '../store/types.js';
import type { DispatcherOptions, Tool, ToolSource } from '../tools/types.js';
import type { InferArgs } from '../tools/define.js';
import type { ContextOptions } from '../context/options.js';
import type { Redactor } from '../security/redact.js';
import type { Skill } from '../skills/types.js';
import type { MemoryStore } from '../memory/types.js';
import type { Alert, AlertOptions, Logger, TelemetryOptions } from '../trace/types.js';
import type { RunParent } from './run-tree.js';

/** What an approval policy answers (also as a promise). */
export type PolicyDecision = 'allow' | 'ask' | 'deny' | { decision: 'allow' | 'ask' | 'deny'; rule?: string; reason?: string };

/** What `shouldStopAfterTurn` sees after each turn. */
export interface TurnInfo {
  step: number;
  assistant: AssistantMessage;
  toolResults: ToolResultMessage[];
  messages: readonly Message[];
  totals: RunTotals;
}

/** Hooks into the loop. Each may be async; each gets the run's abort signal where it waits. */
export interface AgentHooks {
  /**
   * Rewrites the messages sent to the model on each turn; must return an array of messages.
   * It gets a fresh array, but the message objects in it are the run's own history (and
   * already delivered events): return new message objects for anything it changes and
   * never mutate the ones it is given. (They are not copied per turn: the request body
   * cache relies on their identity.)
   */
  transformContext?: (messages: Message[], info: { step: number; signal: AbortSignal }) => Message[] | Promise<Message[]>;
  /** Blocks or patches a validated call before the permission check. */
  beforeToolCall?: DispatcherOptions['beforeToolCall'];
  /** Observes or replaces a tool result before it is written back. */
  afterToolCall?: DispatcherOptions['afterToolCall'];
  /**
   * Permission: `true` runs the call, `false` (or `{allow:false, reason}`) answers the model
   * with a denial. Each decision is recorded as `approval_requested` / `approval_decided`.
   */
  onConfirm?: (
    call: ToolCall,
    args: Record<string, unknown>,
    tool: Tool,
  ) => boolean | { allow: boolean; reason?: string } | Promise<boolean | { allow: boolean; reason?: string }>;
  /**
   * Asked after each turn that would go on — a tool turn, or a text answer followed by a
   * queued steer or follow-up — before the budget. Ends the run with `true`, a non-empty
   * string or `{ stop: true, reason }` (the reason is kept as `detail`); `false`, `''`,
   * `{ stop: false }`, `undefined` and `null` go on. Anything else fails the run (a `config`
   * error naming what it must return). `messages` does not yet hold the queued messages.
   */
  shouldStopAfterTurn?: (
    info: TurnInfo,
  ) => boolean | string | { stop: boolean; reason?: string } | Promise<boolean | string | { stop: boolean; reason?: string }>;
  /**
   * Told of each alert the agent's runs raise (a fatal error, a tripped tool-error breaker,
   * a budget reached, a run paused for a person; see `alerts`), redacted. It runs beside
   * the run: what it throws or how long it takes never reaches the run.
   */
  onAlert?: (alert: Alert) => void | Promise<void>;
}

/**
 * Configuration of an {@link Agent}. Checked by its constructor: a value that cannot work
 * (a negative or NaN limit, an unknown `limits` or `hooks` key, a hook that is not a
 * function, …) throws a `config` ReinError naming the option.
 */
export interface AgentOptions<S = unknown> {
  /**
   * The agent's name in a tree of runs (sub-agents, handoffs): recorded in each run's
   * `run_started` and in `result.agent`. Absent: the runs name no agent.
   */
  name?: string;
  /** `provider/model` (e.g. `openai/gpt-4o`, `ollama/llama3.1`) or a resolved {@link ModelRef}. */
  model: string | ModelRef;
  /**
   * Base URL / key / headers used when `model` is a string (overrides the environment); the
   * server's quirks rein does not detect (`compat`, see {@link ChatCompat}); and how the
   * model gets its tools (`toolCalling`: `native`, or `prompt` for a model without tool
   * calling, whose tools are then described in the system prompt).
   */
  modelConfig?: {
    baseUrl?: string;
    apiKey?: string;
    headers?: Record<string, string>;
    compat?: Partial<ChatCompat>;
    toolCalling?: ToolCalling;
  };
  /**
   * Overrides of what the model catalog says about this model: context window, output
   * limit, reasoning, and prices in USD per million tokens (an unknown model has no price,
   * so no cost, until you give one here).
   */
  modelInfo?: ModelOverrides;
  system?: string;
  tools?: Tool[];
  /**
   * Tools that come and go while the agent lives, such as an MCP host's. Each turn offers
   * the model their current tools beside `tools`; a name already taken is left out.
   */
  toolSources?: ToolSource[];
  /**
   * Skills (from `loadSkills()`): their catalog joins the system layer and the model can
   * `load_skill`; `/skill:name` in the input injects one; a description matching the input
   * injects it (`match: false` turns that off). An active skill's `allowed-tools` narrows
   * the tools.
   */
  skills?: Skill[] | { skills: Skill[]; match?: boolean };
  /**
   * Memory (`openMemory()` from SQLite FTS5, or your own store): `remember` / `recall`
   * tools, and the hits for the latest input in each request.
   */
  memory?: MemoryStore;
  /**
   * A cut tool result can be paged with `read_tool_output` (the log keeps the whole text
   * either way).
   */
  toolOutputPaging?: boolean | { maxPageChars?: number; archiveChars?: number };
  /**
   * With more tools than `maxTools` (default 24), send a subset — the agent's own tools,
   * active skills', recently used and those found with `search_tools` — instead of all.
   */
  toolSelection?: { maxTools?: number; always?: string[]; fill?: boolean };
  /**
   * Least privilege: the tools this agent may use, by name or `*` glob (`github__*`).
   * Any other tool — its own, a source's — is neither offered to the model nor run.
   */
  allowedTools?: string[];
  /**
   * A JSON Schema (or zod / TypeBox schema) for the run's output: the model finishes by
   * calling the `final_answer` tool with arguments valid against it (`done_signal`). A
   * text answer instead is met with a user message telling it to call that tool (a step;
   * `max_steps` bounds it); after 2 such reminders in a row the next text answer fails the
   * run (`fatal_error`, code `invalid_response`). `result.output` is typed from it (see
   * {@link OutputOf}).
   */
  outputSchema?: S;
  limits?: Partial<RunLimits>;
  /** Run a turn's tool calls concurrently (default) or one after another. */
  toolExecution?: 'parallel' | 'sequential';
  /** Stop the run on the first failing tool result (reason `tool_errors`). */
  stopOnToolError?: boolean;
  /** Per-tool default timeout in ms (30 000). */
  toolTimeoutMs?: number;
  /** Tool output longer than this is cut with a marker (16 000 characters). */
  maxToolOutputChars?: number;
  retry?: Partial<RetryPolicy>;
  hooks?: AgentHooks;
  /** Per-request model options (max tokens, temperature, streaming). */
  modelOptions?: Omit<StreamOptions, 'signal' | 'toolCallIds' | 'requestHeaders'>;
  /** Replaces the provider call (custom providers, tests). Retry still wraps it. */
  streamFn?: StreamFunction;
  /**
   * Which calls need a person's approval: `allow` runs the call, `deny` answers the model
   * with a refusal, `ask` asks `hooks.onConfirm` when there is one and otherwise pauses the
   * run durably (status `paused`, reason `awaiting_approval`) until `agent.approve(runId)` —
   * from any process — decides. Pausing needs a `store`. The answer may be a verdict
   * `{ decision, rule, reason }` (what `createPermissionPolicy().decide` returns): each
   * decision is logged as a `permission_decided` event with its rule, and a denial's
   * reason reaches the model. The order is the dispatcher's: validation → `beforeToolCall`
   * → permission → execution, so a person is asked (and a pause records, with its
   * `argumentsHash`) the validated, patched arguments that will run — never a call that
   * fails validation — and an approval runs only with the arguments it approved. A denied
   * call is refused before any hook sees it. Before a pause, the calls that wait are
   * validated and passed through `beforeToolCall` (nothing runs); after the approval the
   * hook runs again, and a call whose arguments then differ is refused. The policy sees the
   * call with its validated arguments. An answer that is not a decision (`'maybe'`, `0`), a
   * throw or a rejected promise denies the call, with a reason saying what came back.
   */
  approvalPolicy?: (call: ToolCall, tool: Tool | undefined) => PolicyDecision | Promise<PolicyDecision>;
  /**
   * Where runs are logged (`openStore()` from `rein/store`: SQLite by default, Postgres by
   * URL). With a store, every run is durable and can be resumed with `agent.resume(id)`.
   */
  store?: RunStore;
  /**
   * Redacts secrets (API keys, tokens, private keys, the values of secret-looking
   * environment variables) from everything stored and logged. On by default; pass your own
   * `createRedactor({ envNames, values })` to add names and values, or `false` to store
   * runs verbatim.
   */
  redact?: Redactor | false;
  /**
   * Recorded with each stored run (in its record's `config.metadata`), for the program that
   * continues it later: how it built this agent. Not part of the resume check.
   */
  metadata?: Record<string, unknown>;
  /** Log sink for tools' `ctx.log`. */
  log?: (message: string, data?: Record<string, unknown>) => void;
  /**
   * OpenTelemetry spans and metrics of the runs (GenAI conventions), through
   * `@opentelemetry/api` — an optional package: on by default when it is installed and an
   * SDK is registered, costing nothing otherwise. `false` turns them off. See
   * docs/observability.md.
   */
  telemetry?: TelemetryOptions | false;
  /**
   * Structured log lines of the runs (one per model request and tool call; run start and
   * end, retries, compactions, permission decisions), with trace and span ids, redacted
   * like the store. A pino logger works, or `createJsonLogger()` / `openFileLogger()` from
   * `rein/trace`.
   */
  logger?: Logger;
  /** Alerts of the runs (webhook, which situations); `hooks.onAlert` is told of each too. */
  alerts?: AlertOptions;
  /**
   * What goes into each request and how the history is compacted near the model's window
   * (on by default: compaction at 70% of the window, the last 5 turns kept, summaries by
   * the run's model). `false` sends the bare history and never compacts.
   */
  context?: ContextOptions | false;
}

/** Options of one run. */
export interface RunOptions {
  signal?: AbortSignal;
  /** Earlier messages this run continues (a chat session). */
  history?: Message[];
  /** Use this id instead of generating one. */
  runId?: string;
  /**
   * The caller's W3C trace context (`00-<trace id>-<span id>-<flags>`): the run joins that
   * trace as a child of that span (its `traceId` is the trace's). Without it, the caller's
   * active OpenTelemetry span, if any, is the parent.
   */
  traceparent?: string;
  /** The `tracestate` that came with `traceparent`, passed on as is. */
  tracestate?: string;
  /**
   * Makes the run a child of another run's tool call (set by `agentTool`, issue 23): its
   * record and `run_started` name the parent, and the parent's remaining budgets cap its limits.
   */
  parent?: RunParent;
}

/** The limits every run gets unless configured. */
export const DEFAULT_LIMITS: RunLimits = {
  maxSteps: 15,
  noProgressRepeats: 3,
  maxConsecutiveToolErrors: 5,
};

/** Stop reasons for which the run reached its goal (CLI exit code 0). */
export const SUCCESS_REASONS: ReadonlySet<StopReasonCode> = new Set(['final_answer', 'terminate', 'done_signal']);

/**
 * The type of `result.output` for an agent whose `outputSchema` is `S`: the answer as the
 * model sent it, checked against the schema (coerced, defaults filled) — TypeBox's `Static`,
 * zod's input type (its transforms are not applied to the answer kept), the type given to
 * `jsonSchema<T>()`, a plain record for another JSON Schema; `unknown` without a schema.
 */
export type OutputOf<S> = unknown extends S
  ? unknown
  : S extends { static: infer T }
    ? T
    : S extends { _zod: { input: infer I } }
      ? I
      : InferArgs<S>;
