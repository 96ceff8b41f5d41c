/**
 * rein: an agent harness. The core entry point; explicit named exports only (STYLE 11).
 * The scripted model server for offline tests is in `rein/testing`, the MCP host in
 * `rein/mcp`, the run stores in `rein/store`, an agent in a project folder in
 * `rein/project`, and the parts the agent is built from (the loop, the dispatcher, the
 * providers' stream functions) in `rein/advanced`.
 */
export { Agent } from './loop/agent.js';
export { RunHandle } from './loop/handle.js';
export type { AgentHooks, AgentOptions, OutputOf, RunOptions, TurnInfo } from './loop/options.js';
export { DEFAULT_LIMITS, SUCCESS_REASONS } from './loop/options.js';
export { messagesFromEvents } from './loop/fold.js';
export { firstDivergence, replayModel } from './loop/replay.js';
export type { Divergence } from './loop/replay.js';
export type { RunStore, RunRecord, NewRun, RunFilter, Durability } from './store/types.js';
export type { ToolEffect, ReconcileResult } from './tools/types.js';
export { agentTool } from './loop/agent-tool.js';
export type { AgentToolOptions, SubAgent } from './loop/agent-tool.js';
export { handoff } from './loop/handoff-tool.js';
export type { HandoffOptions, HandoffTarget } from './loop/handoff-tool.js';
export { DEFAULT_MAX_DEPTH } from './loop/run-tree.js';
export type { RunParent } from './loop/run-tree.js';
export { runsOfTree, waitingInTree } from './loop/tree-approval.js';
export type { WaitingCall } from './loop/tree-approval.js';
export { eventsOfTree } from './loop/tree-log.js';

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
export { emptyUsage, toolResultText } from './model/types.js';
export { resolveModel } from './model/resolve.js';
export type { RetryPolicy } from './model/retry.js';

export { defineTool, jsonSchema } from './tools/define.js';
export type { InferArgs, ToolDefinition, TypedJsonSchema } from './tools/define.js';
export { seedTools } from './tools/builtin/index.js';
export type {
  BeforeToolCallResult,
  ConfirmDecision,
  DispatchContext,
  DispatchOutcome,
  DispatcherOptions,
  Tool,
  ToolContext,
  ToolProgress,
  ToolSource,
  ToolOutput,
  ToolReturn,
  ToolRisk,
} from './tools/types.js';

export { costOf, listModels, lookupModel, UNKNOWN_MODEL_DEFAULTS } from './model/catalog.js';
export type { ModelInfo, ModelOverrides, ModelPricing } from './model/catalog.js';
export type { Cost } from './model/types.js';
export { PRICES_AS_OF } from './model/catalog-data.js';

// Context: what each request is built from and token counts (compaction is on by default; `context` option).
export type { ContextOptions, LayerHook, LayerInfo, LayerSource, MemoryOptions, RetrievedText } from './context/options.js';
export { CONTEXT_BLOCK_HEADER } from './context/layers.js';
export type { Layer } from './context/layers.js';
export { createTokenCounter, estimateTokens } from './context/tokens.js';
export type { TokenCounter } from './context/tokens.js';
export { PLAN_TOOL_NAME, updatePlanTool } from './context/plan-tool.js';
export { loadProjectRules } from './context/rules.js';
export type { ProjectRules } from './context/rules.js';
export { createToolOutputTool, ToolOutputArchive } from './context/tool-output.js';
export { createSearchToolsTool, createToolSelector } from './context/tool-selection.js';
export type { ToolSelector, ToolSelectorOptions } from './context/tool-selection.js';
export { fullOutputOf } from './tools/truncate.js';

// Skills, memory, permissions and the workspace tools have entry points of their own
// (`rein/skills`, `rein/memory`, `rein/permissions`, `rein/workspace`), so that importing
// the core stays fast; the agent options that take them are typed here.
export type { LoadSkillsResult, Skill, SkillDiagnostic } from './skills/types.js';
export type { MemoryRetriever, MemorySnippet, MemoryStore } from './memory/types.js';
export type { PermissionDecision, PermissionMode, PermissionOptions, PermissionPolicy, PermissionVerdict } from './permissions/policy.js';
export { createRedactor } from './security/redact.js';
// Observability: the options' types (the helpers are in `rein/trace`, loaded lazily).
export type {
  Alert,
  AlertOptions,
  AlertReason,
  AlertWebhook,
  Logger,
  LogLevel,
  MeterProviderLike,
  SpanAttributeValue,
  SpanRecord,
  TelemetryOptions,
  TracerProviderLike,
} from './trace/types.js';
export type { Redactor, RedactorOptions } from './security/redact.js';
export type { WorkspaceToolName, WorkspaceToolsOptions } from './workspace/index.js';

// MCP: the host itself is in `rein/mcp` (it loads the official SDK); its types are here.
export type { McpConfig, McpDiagnostic, McpServerConfig, McpServerStatus } from './mcp/types.js';
export type { McpHost, McpHostOptions } from './mcp/host.js';
