/**
 * A `sample` hook for `startMcp` that answers servers' `sampling/createMessage` with one
 * of rein's models, under a decision: `ask` (the default: the `ask` hook sees the request;
 * without one the request is refused), `allow` or `deny`. Each answer's usage and cost go
 * to `onUsage`, so a caller adds them to its run's totals and budget.
 */
import { ReinError } from '../errors.js';
import { costOf } from '../model/catalog.js';
import { streamModel } from '../model/providers/index.js';
import type { AssistantMessage, ImageContent, Message, ModelRef, TextContent, Usage } from '../model/types.js';
import { SamplingAwaitsPerson, type SamplingUsage } from './sampling.js';
import type { McpSamplingRequest, McpSamplingResult } from './types.js';

/** What a sampler does with a request. */
export type SamplingDecision = 'ask' | 'allow' | 'deny';

/** Options of {@link modelSampler}. */
export interface ModelSamplerOptions {
  /** The model that answers (the run's, or one set aside for sampling). */
  model: ModelRef;
  /**
   * `ask` (default), `allow` every request, `deny` every request, or a decision per
   * request with the rule that made it (`decideSampling(policy, request.server)` from
   * `rein/permissions`: the settings' `mcp_sampling` rules).
   */
  decision?: SamplingDecision | ((request: McpSamplingRequest) => { decision: SamplingDecision; rule?: string });
  /** For `ask`: shows the request to a person; `true` allows it. Absent: `ask` refuses, or with `pause` pauses the run. */
  ask?: (request: McpSamplingRequest) => Promise<boolean>;
  /**
   * For `ask` with no `ask` hook: a request serving a run's tool call pauses that run for a
   * person's decision (`rein approve`, `agent.answerElicitation`) instead of being refused.
   */
  pause?: boolean;
  /** The most tokens one answer may take, whatever the server asks (default 4096). */
  maxTokens?: number;
  /** What each answer used, with its cost when the catalog knows the price. */
  onUsage?: (usage: Usage, request: McpSamplingRequest) => void;
}

/**
 * The hook; throws a `permission_denied` ReinError when the request is refused (the server
 * is answered with the spec's "user rejected" error).
 *
 * @example
 * const mcp = await startMcp({ sample: modelSampler({ model: resolveModel('openai/gpt-4o-mini'), decision: 'allow' }) });
 */
export function modelSampler(options: ModelSamplerOptions): (request: McpSamplingRequest) => Promise<McpSamplingResult & SamplingUsage> {
  return async (request) => {
    const decided =
      typeof options.decision === 'function' ? options.decision(request) : { decision: options.decision ?? 'ask', rule: undefined };
    const { decision, rule } = decided;
    const details = rule === undefined ? {} : { details: { rule } };
    if (request.approved) {
      // A person approved this very request while its run was paused.
    } else if (decision === 'deny')
      throw new ReinError('permission_denied', 'fatal', `sampling requests of MCP server "${request.server}" are denied`, details);
    else if (decision === 'ask' && !options.ask && options.pause) throw new SamplingAwaitsPerson(rule);
    else if (decision === 'ask' && !(options.ask && (await options.ask(request)))) {
      throw new ReinError(
        'permission_denied',
        'fatal',
        options.ask ? 'the person refused the sampling request' : 'nobody can be asked to allow the sampling request',
        details,
      );
    }
    const params = request.params;
    const maxTokens = Math.min(params.maxTokens, options.maxTokens ?? 4096);
    const message = await streamModel(
      options.model,
      {
        ...(params.systemPrompt ? { system: params.systemPrompt } : {}),
        messages: params.messages.map((m) => toMessage(m, options.model)),
      },
      { signal: request.signal, maxTokens, ...(params.temperature !== undefined ? { temperature: params.temperature } : {}) },
    ).result();
    if (message.stopReason === 'error' || message.stopReason === 'aborted') {
      throw new ReinError(
        'mcp_error',
        'correctable',
        `the model could not answer the sampling request: ${message.error?.message ?? message.stopReason}`,
      );
    }
    const usage = { ...message.usage };
    const cost = costOf(options.model, usage);
    if (cost) usage.cost = cost;
    options.onUsage?.(usage, request);
    const text = message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    return {
      role: 'assistant',
      content: { type: 'text', text },
      model: `${options.model.provider}/${options.model.id}`,
      stopReason: message.stopReason === 'length' ? 'maxTokens' : 'endTurn',
      usage: { input: usage.input, output: usage.output, ...(cost ? { cost: cost.total } : {}) },
      spent: usage,
      ...(request.approved ? {} : decision === 'ask' ? { rule: 'person: approved' } : rule === undefined ? {} : { rule }),
    };
  };
}

/** One MCP sampling message as a rein message (text and images; other content as a note). */
function toMessage(m: McpSamplingRequest['params']['messages'][number], model: ModelRef): Message {
  const blocks = (Array.isArray(m.content) ? m.content : [m.content]) as Array<Record<string, unknown>>;
  const parts: Array<TextContent | ImageContent> = blocks.map((b) =>
    b.type === 'text'
      ? { type: 'text', text: String(b.text) }
      : b.type === 'image'
        ? { type: 'image', data: String(b.data), mimeType: String(b.mimeType) }
        : { type: 'text', text: `[${String(b.type)} content omitted]` },
  );
  if (m.role === 'user') return { role: 'user', content: parts };
  const assistant: AssistantMessage = {
    role: 'assistant',
    content: parts.map((p) => (p.type === 'text' ? p : { type: 'text', text: '[image]' })),
    stopReason: 'stop',
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 },
    provider: model.provider,
    model: model.id,
  };
  return assistant;
}
