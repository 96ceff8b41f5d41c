/**
 * rein: an agent harness. The core entry point; explicit named exports only (STYLE 11).
 * The scripted model server for offline tests is in `rein/testing`.
 */
export { Agent } from './loop/agent.js';
export { RunHandle } from './loop/handle.js';
export type { AgentHooks, AgentOptions, RunOptions, TurnInfo } from './loop/options.js';
export { DEFAULT_LIMITS, SUCCESS_REASONS } from './loop/options.js';
export { runLoop } from './loop/run-loop.js';
export type { LoopDeps, LoopStart } from './loop/run-loop.js';
export { messagesFromEvents } from './loop/fold.js';
export { firstDivergence, replayModel } from './loop/replay.js';
export type { Divergence } from './loop/replay.js';
export type { RunStore, RunRecord, NewRun, RunFilter, Durability } from './store/types.js';
export type { ToolEffect, ReconcileResult } from './tools/types.js';
export { canonicalJson } from './loop/stop-rules.js';

export { ReinError, toReinError } from './errors.js';
export type { ErrorCode, ErrorInfo, ErrorKind, ReinErrorOptions } from './errors.js';
export { DELTA_EVENT_TYPES } from './events.js';
export type {
  EventBase,
  LoopState,
  RunEvent,
  RunEventBody,
  RunEventType,
  RunLimits,
  RunResult,
  RunStatus,
  RunTotals,
  StopReasonCode,
} from './events.js';

export type {
  AssistantMessage,
  AssistantStream,
  AssistantStreamEvent,
  Context,
  ImageContent,
  JsonSchema,
  Message,
  ModelApi,
  ModelRef,
  StopReason,
  StreamFunction,
  StreamOptions,
  TextContent,
  ThinkingContent,
  ToolCall,
  ToolResultMessage,
  ToolSpec,
  Usage,
  UserMessage,
} from './model/types.js';
export { emptyUsage } from './model/types.js';
export { EventStream } from './model/event-stream.js';
export { resolveModel } from './model/resolve.js';
export { streamWithRetry } from './model/retry.js';
export type { RetryPolicy } from './model/retry.js';
export { streamModel } from './model/providers/index.js';
export { streamOpenAIChat } from './model/providers/openai-chat.js';

export { defineTool } from './tools/define.js';
export type { ToolDefinition } from './tools/define.js';
export { ToolRegistry } from './tools/registry.js';
export { createDispatcher } from './tools/dispatch.js';
export type { Dispatcher } from './tools/dispatch.js';
export { createFinalAnswerTool, FINAL_ANSWER_TOOL } from './tools/final-answer.js';
export { seedTools } from './tools/builtin/index.js';
export type {
  ConfirmDecision,
  DispatchContext,
  DispatchOutcome,
  DispatcherOptions,
  Tool,
  ToolContext,
  ToolProgress,
  ToolSource,
  ToolOutput,
  ToolRisk,
} from './tools/types.js';

export { costOf, listModels, lookupModel, UNKNOWN_MODEL_DEFAULTS } from './model/catalog.js';
export type { ModelInfo, ModelOverrides, ModelPricing } from './model/catalog.js';
export type { Cost } from './model/types.js';
export { PRICES_AS_OF } from './model/catalog-data.js';
