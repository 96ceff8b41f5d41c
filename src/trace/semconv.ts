/**
 * Names from the OpenTelemetry GenAI semantic conventions (the `gen_ai.*` attributes and
 * metrics, as `@opentelemetry/semantic-conventions/incubating` lists them), and rein's own
 * (`rein.*`) where the conventions have none. Kept as plain strings: the conventions
 * package is not needed at run time.
 */
import type { StopReason } from '../model/types.js';

export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestStream: 'gen_ai.request.stream',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationTokens: 'gen_ai.usage.cache_creation.input_tokens',
  usageReasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
  tokenType: 'gen_ai.token.type',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
  serverAddress: 'server.address',
  serverPort: 'server.port',
} as const;

/** rein's own attributes (the conventions have nothing for these). */
export const REIN = {
  runId: 'rein.run.id',
  attempt: 'rein.run.attempt',
  resumedFrom: 'rein.run.resumed_from',
  status: 'rein.run.status',
  stopReason: 'rein.run.stop_reason',
  interrupted: 'rein.run.interrupted',
  steps: 'rein.run.steps',
  toolCalls: 'rein.run.tool_calls',
  costUsd: 'rein.usage.cost_usd',
  step: 'rein.step',
  requestAttempt: 'rein.request.attempt',
  retryDelayMs: 'rein.retry.delay_ms',
  toolOutcome: 'rein.tool.outcome',
  toolDurationMs: 'rein.tool.duration_ms',
  idempotencyKey: 'rein.tool.idempotency_key',
  approved: 'rein.approval.approved',
  approvalOutcome: 'rein.approval.outcome',
  approvalWaitMs: 'rein.approval.wait_ms',
  argumentsHash: 'rein.approval.arguments_hash',
  reason: 'rein.reason',
  decision: 'rein.permission.decision',
  rule: 'rein.permission.rule',
  compactionReason: 'rein.compaction.reason',
  tokensBefore: 'rein.compaction.tokens_before',
  tokensAfter: 'rein.compaction.tokens_after',
  removedMessages: 'rein.compaction.removed_messages',
  keptMessages: 'rein.compaction.kept_messages',
  summarizer: 'rein.compaction.summarizer',
  messageKind: 'rein.message.kind',
  linkType: 'rein.link.type',
} as const;

export const METRIC = {
  tokenUsage: 'gen_ai.client.token.usage',
  operationDuration: 'gen_ai.client.operation.duration',
  runs: 'rein.runs',
  runDuration: 'rein.run.duration',
  runCost: 'rein.run.cost',
  cost: 'rein.usage.cost',
  toolCalls: 'rein.tool.calls',
  retries: 'rein.retries',
  approvalWait: 'rein.approval.wait.duration',
  /** Recorded by workers (src/worker/worker-metrics.ts). */
  queueDepth: 'rein.queue.depth',
  queuePickup: 'rein.queue.pickup.duration',
} as const;

/** The conventions' bucket advice for `gen_ai.client.token.usage`. */
export const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** The conventions' bucket advice for `gen_ai.client.operation.duration` (seconds). */
export const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

/**
 * `gen_ai.provider.name` of a rein provider: the conventions' well-known value where there
 * is one (`openai`, `anthropic`, `gcp.gemini`, …), else rein's provider name as it is
 * (`ollama`, `vllm`: the conventions allow a custom value).
 */
export function providerName(provider: string): string {
  switch (provider) {
    case 'openai':
    case 'openai-responses':
      return 'openai';
    case 'gemini':
      return 'gcp.gemini';
    case 'mistral':
      return 'mistral_ai';
    case 'xai':
      return 'x_ai';
    default:
      return provider;
  }
}

/** A finish reason in the conventions' words (`stop`, `length`, `content_filter`, `tool_call`, `error`). */
export function finishReason(reason: StopReason): string {
  switch (reason) {
    case 'tool_use':
      return 'tool_call';
    case 'refusal':
      return 'content_filter';
    default:
      return reason;
  }
}

/** `server.address` and `server.port` of a base URL (the port only when not the scheme's default). */
export function serverAttributes(baseUrl: string): Record<string, string | number> {
  try {
    const url = new URL(baseUrl);
    const out: Record<string, string | number> = { [ATTR.serverAddress]: url.hostname.replace(/^\[|\]$/g, '') };
    if (url.port !== '') out[ATTR.serverPort] = Number(url.port);
    return out;
  } catch {
    return {};
  }
}
