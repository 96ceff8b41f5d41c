// The names each entry point exports, pinned: adding, removing or moving a public name is a
// decision (docs/library.md says which entry point holds what), not a side effect of an edit.
// The values are checked at run time too; the types, from the entry point's source.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The names `file` exports by `export { … } from` and `export type { … } from`, as values and types. */
function exportedNames(file: string): { values: string[]; types: string[] } {
  const text = readFileSync(fileURLToPath(new URL(`../src/${file}`, import.meta.url)), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  const values: string[] = [];
  const types: string[] = [];
  for (const match of text.matchAll(/export\s+(type\s+)?\{([^}]*)\}\s*from/g)) {
    for (const entry of match[2]!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const name = entry
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .at(-1)!;
      (match[1] || entry.startsWith('type ') ? types : values).push(name);
    }
  }
  // Any other kind of export would escape the pin.
  expect(text.match(/^export (?!(type )?\{)/gm) ?? [], file).toEqual([]);
  return { values: values.sort(), types: types.sort() };
}

const ROOT_VALUES = [
  'Agent',
  'CONTEXT_BLOCK_HEADER',
  'DEFAULT_LIMITS',
  'DEFAULT_MAX_DEPTH',
  'DELTA_EVENT_TYPES',
  'PLAN_TOOL_NAME',
  'PRICES_AS_OF',
  'ReinError',
  'RunHandle',
  'SUCCESS_REASONS',
  'ToolOutputArchive',
  'UNKNOWN_MODEL_DEFAULTS',
  'agentTool',
  'costOf',
  'createRedactor',
  'createSearchToolsTool',
  'createTokenCounter',
  'createToolOutputTool',
  'createToolSelector',
  'defineTool',
  'emptyUsage',
  'estimateTokens',
  'eventsOfTree',
  'firstDivergence',
  'fullOutputOf',
  'handoff',
  'jsonSchema',
  'listModels',
  'loadProjectRules',
  'lookupModel',
  'messagesFromEvents',
  'replayModel',
  'resolveModel',
  'runsOfTree',
  'seedTools',
  'toReinError',
  'toolResultText',
  'updatePlanTool',
  'waitingInTree',
];
const ROOT_TYPES = [
  'AgentHooks',
  'AgentOptions',
  'AgentToolOptions',
  'Alert',
  'AlertOptions',
  'AlertReason',
  'AlertWebhook',
  'AssistantMessage',
  'AssistantStream',
  'AssistantStreamEvent',
  'BeforeToolCallResult',
  'ConfirmDecision',
  'Context',
  'ContextOptions',
  'Cost',
  'DispatchContext',
  'DispatchOutcome',
  'DispatcherOptions',
  'Divergence',
  'Durability',
  'ErrorCode',
  'ErrorInfo',
  'ErrorKind',
  'EventBase',
  'HandoffOptions',
  'HandoffTarget',
  'ImageContent',
  'InferArgs',
  'JsonSchema',
  'Layer',
  'LayerHook',
  'LayerInfo',
  'LayerSource',
  'LoadSkillsResult',
  'LogLevel',
  'Logger',
  'LoopState',
  'McpConfig',
  'McpDiagnostic',
  'McpHost',
  'McpHostOptions',
  'McpServerConfig',
  'McpServerStatus',
  'MemoryOptions',
  'MemoryRetriever',
  'MemorySnippet',
  'MemoryStore',
  'Message',
  'MeterProviderLike',
  'ModelApi',
  'ModelInfo',
  'ModelOverrides',
  'ModelPricing',
  'ModelRef',
  'NewRun',
  'OutputOf',
  'PermissionDecision',
  'PermissionMode',
  'PermissionOptions',
  'PermissionPolicy',
  'PermissionVerdict',
  'ProjectRules',
  'ReconcileResult',
  'Redactor',
  'RedactorOptions',
  'ReinErrorOptions',
  'RetrievedText',
  'RetryPolicy',
  'RunEvent',
  'RunEventBody',
  'RunEventType',
  'RunFilter',
  'RunLimits',
  'RunOptions',
  'RunParent',
  'RunRecord',
  'RunResult',
  'RunStatus',
  'RunStore',
  'RunTotals',
  'Skill',
  'SkillDiagnostic',
  'SpanAttributeValue',
  'SpanRecord',
  'StopReason',
  'StopReasonCode',
  'StreamFunction',
  'StreamOptions',
  'SubAgent',
  'TelemetryOptions',
  'TextContent',
  'ThinkingContent',
  'TokenCounter',
  'Tool',
  'ToolCall',
  'ToolContext',
  'ToolDefinition',
  'ToolEffect',
  'ToolOutput',
  'ToolProgress',
  'ToolResultMessage',
  'ToolReturn',
  'ToolRisk',
  'ToolSelector',
  'ToolSelectorOptions',
  'ToolSource',
  'ToolSpec',
  'TracerProviderLike',
  'TurnInfo',
  'TypedJsonSchema',
  'Usage',
  'UserMessage',
  'WaitingCall',
  'WorkspaceToolName',
  'WorkspaceToolsOptions',
];
const ADVANCED_VALUES = [
  'DEFAULT_KEEP_TURNS',
  'DEFAULT_SUMMARY_MAX_TOKENS',
  'DEFAULT_THRESHOLD',
  'EventStream',
  'FINAL_ANSWER_TOOL',
  'SUMMARY_HEADER',
  'ToolRegistry',
  'canonicalJson',
  'createDispatcher',
  'createFinalAnswerTool',
  'isSummaryMessage',
  'isSummaryRequest',
  'renderTask',
  'runLoop',
  'shouldCompact',
  'splitForCompaction',
  'streamModel',
  'streamOpenAIChat',
  'streamWithRetry',
  'taskFromEvents',
];
const ADVANCED_TYPES = ['CompactionSplit', 'Dispatcher', 'LoopDeps', 'LoopStart', 'TaskRecord'];

describe('the export lists', () => {
  it('rein exports exactly these names', async () => {
    const { values, types } = exportedNames('index.ts');
    expect(values).toEqual(ROOT_VALUES);
    expect(types).toEqual(ROOT_TYPES);
    expect(Object.keys(await import('../src/index.js')).sort()).toEqual(ROOT_VALUES);
  });

  it('rein/advanced exports exactly these names, none of them also in rein', async () => {
    const { values, types } = exportedNames('advanced.ts');
    expect(values).toEqual(ADVANCED_VALUES);
    expect(types).toEqual(ADVANCED_TYPES);
    expect(Object.keys(await import('../src/advanced.js')).sort()).toEqual(ADVANCED_VALUES);
    const root = new Set([...ROOT_VALUES, ...ROOT_TYPES]);
    expect([...ADVANCED_VALUES, ...ADVANCED_TYPES].filter((name) => root.has(name))).toEqual([]);
  });
});
