/**
 * The tool contract: a declaration the model sees plus an implementation the harness runs.
 */
import type { ImageContent, JsonSchema, TextContent, ToolCall, ToolResultMessage } from '../model/types.js';
import type { ErrorCode } from '../errors.js';

/**
 * How much a tool can change the world; decides the default permission (read allows,
 * write and execute ask) once a policy exists.
 */
export type ToolRisk = 'read' | 'write' | 'execute';

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

/** A tool as the registry keeps it: parameters already normalized to JSON Schema. */
export interface Tool {
  name: string;
  /** What it does and when to use it: this is what the model reads. */
  description: string;
  parameters: JsonSchema;
  execute: (args: Record<string, unknown>, ctx: ToolContext) => ToolOutput | Promise<ToolOutput>;
  /** Per-call timeout; defaults to the dispatcher's (30 s). */
  timeoutMs?: number;
  risk?: ToolRisk;
}

/** Result of a permission check: allow, or deny with a reason the model will read. */
export type ConfirmDecision = boolean | { allow: boolean; reason?: string };

/** What the `beforeToolCall` hook may answer. */
export type BeforeToolCallResult =
  | void
  | undefined
  | { block: true; reason: string }
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
}

/** Per-call context the loop hands to the dispatcher. */
export interface DispatchContext {
  signal: AbortSignal;
  runId: string;
  idempotencyKey: string;
}

/** Hooks and limits of the dispatcher. */
export interface DispatcherOptions {
  /** Default per-tool timeout in ms (30 000). */
  defaultTimeoutMs?: number;
  /** Output longer than this many characters is cut with a marker (16 000). */
  maxOutputChars?: number;
  /** Permission hook: called after validation, before execution. */
  onConfirm?: (call: ToolCall, args: Record<string, unknown>, tool: Tool) => ConfirmDecision | Promise<ConfirmDecision>;
  /** Block or patch a call after validation. Patched arguments are validated again. */
  beforeToolCall?: (
    call: ToolCall,
    args: Record<string, unknown>,
    tool: Tool,
  ) => BeforeToolCallResult | Promise<BeforeToolCallResult>;
  /** Observe or replace a result before it is written back. */
  afterToolCall?: (
    call: ToolCall,
    result: ToolResultMessage,
  ) => ToolResultMessage | void | Promise<ToolResultMessage | void>;
  /** Log sink for `ctx.log`. */
  log?: (message: string, data?: Record<string, unknown>) => void;
}
