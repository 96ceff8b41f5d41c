/**
 * `sampling/createMessage`: a server asks the client's model for a completion. The host's
 * `sample` hook answers (it decides, under its permission policy, whether to); each
 * request is reported as an `mcp_sampling` event with the decision, the model and the
 * usage — never the text of the conversation — and, when it served a run's tool call, in
 * that run's log and totals.
 */
import type { CreateMessageRequest, CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { ReinError } from '../errors.js';
import { messageOf } from './failures.js';
import type { Usage } from '../model/types.js';
import type { RunEventBody } from '../events.js';
import { addCallUsage, noteCallEvent, pauseCallFor, takeCallAnswer } from '../tools/call-side-channel.js';
import { samplingHash, type RunCall } from './run-calls.js';
import type { Sdk } from './sdk.js';
import type { McpEvent, McpSamplingRequest, McpSamplingResult } from './types.js';

/** JSON-RPC code a client answers with when the user rejected a sampling request (the spec's example uses -1). */
const USER_REJECTED = -1;

/** What a sampler may add to its answer for the event: the usage it spent. */
export interface SamplingUsage {
  usage?: { input: number; output: number; cost?: number };
  /** The whole usage (tokens and cost): counted in the totals of the run whose call the request served. */
  spent?: Usage;
  /** The permission rule that allowed the request, for the event. */
  rule?: string;
}

/**
 * Thrown by a sampler whose decision is `ask` when nobody is here to ask: a request that
 * serves a run's tool call then pauses that run for a person's decision (`rein approve`);
 * any other is refused.
 */
export class SamplingAwaitsPerson extends ReinError {
  /** The rule that asks (`default: sampling asks`, `ask mcp_sampling(docs)`). */
  readonly rule: string | undefined;
  constructor(rule?: string) {
    super('permission_denied', 'fatal', "the sampling request needs a person's approval and nobody here can be asked", {
      ...(rule === undefined ? {} : { details: { rule } }),
    });
    this.rule = rule;
  }
}

/**
 * The request handler for one server. A request made while a run's tool call is in flight
 * on the server (`bound`) is that call's: what it spent counts in the run's totals and
 * budgets (through the call's `tool_finished`), and it is logged as the run's
 * `mcp_sampling` event before the call ends. A person's decision logged for it while the
 * run was paused (matched by {@link samplingHash}) is used first: approved, the sampler
 * answers without asking; refused, the server is answered "user rejected". A sampler that
 * has nobody to ask ({@link SamplingAwaitsPerson}) pauses the bound call's run.
 */
export function samplingHandler(
  server: string,
  sample: (request: McpSamplingRequest) => Promise<McpSamplingResult & SamplingUsage>,
  emit: (event: McpEvent) => void,
  sdk: Sdk,
  bound: () => RunCall | undefined = () => undefined,
): (request: CreateMessageRequest, extra: { signal: AbortSignal }) => Promise<CreateMessageResult> {
  return async (request, extra) => {
    const call = bound();
    const params = request.params as McpSamplingRequest['params'];
    const requestHash = samplingHash(server, params);
    const stored = call ? takeCallAnswer(call.runId, call.toolCallId, requestHash) : undefined;
    const note = (event: Omit<Extract<RunEventBody, { type: 'mcp_sampling' }>, 'type' | 'step' | 'toolCallId' | 'server'>): void => {
      if (call)
        noteCallEvent(call.runId, call.toolCallId, { type: 'mcp_sampling', step: 0, toolCallId: call.toolCallId, server, ...event });
    };
    const refuse = (reason: string, rule: string | undefined, decision: 'deny' | 'error' = 'deny'): void => {
      emit({ type: 'mcp_sampling', server, decision, ...(rule === undefined ? {} : { rule }), reason });
      note({ decision, ...(rule === undefined ? {} : { rule }), reason });
    };
    if (stored && stored.action !== 'accept') {
      refuse('a person refused the sampling request', 'person: denied');
      throw new sdk.McpError(USER_REJECTED, 'sampling was refused: a person refused the sampling request');
    }
    let answer: McpSamplingResult & SamplingUsage;
    try {
      answer = await sample({ server, params, signal: extra.signal, ...(stored ? { approved: true as const } : {}) });
    } catch (error) {
      if (error instanceof SamplingAwaitsPerson && call) {
        const rule = error.rule;
        emit({ type: 'mcp_sampling', server, decision: 'paused', ...(rule === undefined ? {} : { rule }) });
        note({ decision: 'paused', ...(rule === undefined ? {} : { rule }) });
        pauseCallFor(call.runId, call.toolCallId, { server, mode: 'sampling', message: samplingSummary(params), requestHash });
        // The call ends here; the resume that has the person's decision makes it again.
        call.abort.abort();
        throw new sdk.McpError(USER_REJECTED, "sampling waits for a person's approval");
      }
      const denied = error instanceof ReinError && (error.code === 'permission_denied' || error.code === 'tool_denied');
      const rule = error instanceof ReinError && typeof error.details?.rule === 'string' ? error.details.rule : undefined;
      refuse(messageOf(error), rule, denied ? 'deny' : 'error');
      if (denied) throw new sdk.McpError(USER_REJECTED, `sampling was refused: ${messageOf(error)}`);
      throw error;
    }
    const { usage, spent, rule: decidedBy, ...result } = answer;
    const rule = stored ? 'person: approved' : decidedBy;
    emit({
      type: 'mcp_sampling',
      server,
      decision: 'allow',
      ...(rule === undefined ? {} : { rule }),
      model: result.model,
      ...(usage ? { usage } : {}),
      ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}),
    });
    if (call) {
      const whole = spent ?? (usage ? fromShort(usage) : undefined);
      if (whole) addCallUsage(call.runId, call.toolCallId, whole);
      note({
        decision: 'allow',
        ...(rule === undefined ? {} : { rule }),
        model: result.model,
        ...(whole ? { usage: whole } : {}),
        ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}),
      });
    }
    return result as CreateMessageResult;
  };
}

/** What a person reads to decide a sampling request: its size and its last message (cut to 200 characters). */
export function samplingSummary(params: McpSamplingRequest['params']): string {
  const { messages, maxTokens } = params;
  const last = messages.at(-1)?.content as { type?: string; text?: string } | undefined;
  const text = last?.type === 'text' && typeof last.text === 'string' ? last.text : '';
  const size = `${messages.length} message${messages.length === 1 ? '' : 's'}, up to ${maxTokens} tokens`;
  return `may the model answer its sampling request (${size})${text ? `: "${text.length > 200 ? `${text.slice(0, 197)}...` : text}"` : ''}?`;
}

/** A sampler's short usage as a whole one (a cost given as one figure is its total: the split is unknown). */
function fromShort(usage: NonNullable<SamplingUsage['usage']>): Usage {
  const out: Usage = {
    input: usage.input,
    output: usage.output,
    cacheRead: 0,
    cacheWrite: 0,
    reasoning: 0,
    total: usage.input + usage.output,
  };
  if (usage.cost !== undefined) out.cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: usage.cost };
  return out;
}
