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
import { addCallUsage, noteCallEvent } from '../tools/call-side-channel.js';
import type { RunCall } from './run-calls.js';
import type { Sdk } from './sdk.js';
import type { McpEvent, McpSamplingRequest, McpSamplingResult } from './types.js';

/** JSON-RPC code a client answers with when the user rejected a sampling request (the spec's example uses -1). */
const USER_REJECTED = -1;

/** What a sampler may add to its answer for the event: the usage it spent. */
export interface SamplingUsage {
  usage?: { input: number; output: number; cost?: number };
  /** The whole usage (tokens and cost): counted in the totals of the run whose call the request served. */
  spent?: Usage;
}

/**
 * The request handler for one server. A request made while a run's tool call is in flight
 * on the server (`bound`) is that call's: what it spent counts in the run's totals and
 * budgets (through the call's `tool_finished`), and it is logged as the run's
 * `mcp_sampling` event before the call ends.
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
    let answer: McpSamplingResult & SamplingUsage;
    try {
      answer = await sample({ server, params: request.params as McpSamplingRequest['params'], signal: extra.signal });
    } catch (error) {
      const denied = error instanceof ReinError && (error.code === 'permission_denied' || error.code === 'tool_denied');
      const decision = denied ? 'deny' : 'error';
      emit({ type: 'mcp_sampling', server, decision, reason: messageOf(error) });
      if (call)
        noteCallEvent(call.runId, call.toolCallId, {
          type: 'mcp_sampling',
          step: 0,
          toolCallId: call.toolCallId,
          server,
          decision,
          reason: messageOf(error),
        });
      if (denied) throw new sdk.McpError(USER_REJECTED, `sampling was refused: ${messageOf(error)}`);
      throw error;
    }
    const { usage, spent, ...result } = answer;
    emit({
      type: 'mcp_sampling',
      server,
      decision: 'allow',
      model: result.model,
      ...(usage ? { usage } : {}),
      ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}),
    });
    if (call) {
      const whole = spent ?? (usage ? fromShort(usage) : undefined);
      if (whole) addCallUsage(call.runId, call.toolCallId, whole);
      noteCallEvent(call.runId, call.toolCallId, {
        type: 'mcp_sampling',
        step: 0,
        toolCallId: call.toolCallId,
        server,
        decision: 'allow',
        model: result.model,
        ...(whole ? { usage: whole } : {}),
        ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}),
      });
    }
    return result as CreateMessageResult;
  };
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
