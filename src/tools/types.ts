/**
 * The tool contract: a declaration the model sees plus an implementation the harness runs.
 */
import type { ImageContent, JsonSchema, TextContent, ToolCall, ToolResultMessage, Usage } from '../model/types.js';
import type { ErrorCode } from '../errors.js';

/**
 * How much a tool can change the world; decides the default permission (read allows,
 * write and execute ask) once a policy exists.
 */
export type ToolRisk = 'read' | 'write' | 'execute';

/**
 * What running a tool twice would do, which decides what a resume does with a call that
 * started but whose end was never logged (the process died in between):
 * - `pure`: nothing (read-only) → run it again;
 * - `idempotent`: nothing more when given the same `idempotencyKey` → run it again with it;
 * - `reconcilable`: the tool can tell, from the key, whether it happened → ask `reconcile`;
 * - `unsafe` (the default): it might happen twice → never run again; the model is told the
 *   call may or may not have happened.
 */
export type ToolEffect = 'pure' | 'idempotent' | 'reconcilable' | 'unsafe';

/** What `reconcile` answers: whether the call with that key took effect, and its output if known. */
export type ReconcileResult = { done: true; output?: ToolOutput } | { done: false };

/** What a tool gets besides its arguments. */
export interface ToolContext {
  /** Fires on abort of the run or on the tool's timeout. Pass it to everything async. */
  signal: AbortSignal;
  runId: string;
  toolCallId: string;
  /**
   * Stable across resumes of the same run: the same call of the same turn always gets the
   * same key, so an idempotent tool can de-duplicate its side effect.
   */
  idempotencyKey: string;
  /** Structured log line for this call. */
  log: (message: string, data?: Record<string, unknown>) => void;
  /**
   * Reports progress of a long call; the loop streams it as a `tool_progress` event (not
   * stored). Cheap to call often.
   */
  progress: (update: ToolProgress) => void;
}

/** A progress report of a running tool call (MCP's `notifications/progress` maps onto it). */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** What `execute` may return: a string, or content with extras. */
export type ToolOutput =
  | string
  | {
      content: string | Array<TextContent | ImageContent>;
      /** Structured data kept in the result for programs; not sent to the model. */
      details?: unknown;
      /** Report a failure the model should see without throwing. */
      isError?: boolean;
      /**
       * Ask the loop to stop after this batch without another model call. The run stops
       * only when every tool of the batch asks for it.
       */
      terminate?: boolean;
    };

/**
 * What `execute` may return besides a {@link ToolOutput}, as the dispatcher shows it:
 * nothing (`(no output)`), a number, a boolean or any other data (as JSON, also kept in
 * `result.details`), bytes (as text when they are UTF-8, else their size). See `output.ts`.
 */
export type ToolReturn = ToolOutput | void | null | number | boolean | bigint | object;

/** A tool as the registry keeps it: parameters already normalized to JSON Schema. */
export interface Tool {
  name: string;
  /** What it does and when to use it: this is what the model reads. */
  description: string;
  parameters: JsonSchema;
  /**
   * Returns a {@link ToolOutput}. (`defineTool` also accepts the looser {@link ToolReturn},
   * which the dispatcher handles the same way; this type stays narrow for its callers.)
   */
  execute: (args: Record<string, unknown>, ctx: ToolContext) => ToolOutput | Promise<ToolOutput>;
  /** Per-call timeout; defaults to the dispatcher's (30 s). */
  timeoutMs?: number;
  risk?: ToolRisk;
  /** What running it twice would do (default `unsafe`); see {@link ToolEffect}. */
  effect?: ToolEffect;
  /** For `reconcilable` tools: did the call with this idempotency key take effect? */
  reconcile?: (idempotencyKey: string, ctx: { signal: AbortSignal; runId: string }) => ReconcileResult | Promise<ReconcileResult>;
  /**
   * What argument patterns of a permission rule match against: a file tool answers its
   * path (relative to the workspace root), a shell tool its command. `write_file(src/**)`
   * and `bash(git status*)` are matched against this. Without it, only name rules apply.
   */
  permissionSubject?: (args: Record<string, unknown>) => string | undefined;
  /**
   * Why this call would write a file that steers rein or git (`.rein/`, `.mcp.json`,
   * `AGENTS.md`, `.git/` …), or undefined: a permission policy then asks in every mode
   * but yolo, whatever its allow rules say.
   */
  protectedTarget?: (args: Record<string, unknown>) => string | undefined;
  /**
   * What a person approving the call should see besides its arguments (an edit's diff).
   * May fail: the approval then shows the arguments alone.
   */
  preview?: (args: Record<string, unknown>) => string | Promise<string>;
}

/**
 * Tools that come and go while an agent lives (an MCP server connecting, its tool list
 * changing). The agent asks for the current list at every turn and looks calls up in it.
 */
export interface ToolSource {
  /** Names the source in the agent's stored configuration (e.g. `mcp`). */
  readonly id: string;
  /** The tools offered now; called every turn, so keep it cheap (return a cached array). */
  tools(): readonly Tool[];
  /** Calls `listener` whenever `tools()` would answer differently; returns an unsubscribe. */
  onChange?(listener: () => void): () => void;
}

/** Result of a permission check: allow, or deny with a reason the model will read. */
export type ConfirmDecision = boolean | { allow: boolean; reason?: string };

/** What the `beforeToolCall` hook may answer. */
export type BeforeToolCallResult =
  | void
  | undefined
  /** Without a reason the model reads "no reason given": say why, so it does not retry blindly. */
  | { block: true; reason?: string }
  | { arguments: Record<string, unknown> };

/** What one dispatched call produced. */
export interface DispatchOutcome {
  result: ToolResultMessage;
  /** The tool asked the loop to stop. */
  terminate: boolean;
  /** Set when the call failed: which stage failed. */
  errorCode?: ErrorCode;
  /** The arguments the tool was (or would have been) called with, after repair and validation. */
  arguments?: Record<string, unknown>;
  durationMs: number;
  /** What a sub-agent's run spent for this call: it counts in the calling run's totals. */
  usage?: Usage;
}

/** Per-call context the loop hands to the dispatcher. */
export interface DispatchContext {
  signal: AbortSignal;
  runId: string;
  idempotencyKey: string;
  /**
   * The call's arguments as {@link Dispatcher.check} answered them (repaired, validated,
   * defaults filled): repair and validation are not done again, and the tool receives
   * exactly these — the ones the loop recorded and the policy decided on.
   */
  checkedArguments?: Record<string, unknown>;
}

/** What {@link Dispatcher.check} answers: the arguments the tool would receive, or that it would refuse them. */
export type CheckedCall =
  /** `repairs` and `repairedArguments`: what repair fixed in the model's text, and the JSON text that parsed (when it was repaired). */
  { ok: true; arguments: Record<string, unknown>; repaired: boolean; repairs?: string[]; repairedArguments?: string } | { ok: false };

/** Hooks and limits of the dispatcher. */
export interface DispatcherOptions {
  /** Default per-tool timeout in ms (30 000). */
  defaultTimeoutMs?: number;
  /** Output longer than this many characters is cut with a marker (16 000). */
  maxOutputChars?: number;
  /** Permission hook: called after validation, before execution. */
  onConfirm?: (call: ToolCall, args: Record<string, unknown>, tool: Tool) => ConfirmDecision | Promise<ConfirmDecision>;
  /** Block or patch a call after validation. Patched arguments are validated again. */
  beforeToolCall?: (call: ToolCall, args: Record<string, unknown>, tool: Tool) => BeforeToolCallResult | Promise<BeforeToolCallResult>;
  /** Observe or replace a result before it is written back. */
  afterToolCall?: (call: ToolCall, result: ToolResultMessage) => ToolResultMessage | void | Promise<ToolResultMessage | void>;
  /** Log sink for `ctx.log`. */
  log?: (message: string, data?: Record<string, unknown>) => void;
  /** Receives `ctx.progress` reports of running calls. */
  onProgress?: (call: ToolCall, update: ToolProgress) => void;
}
