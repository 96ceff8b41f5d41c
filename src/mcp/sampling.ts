/**
 * `sampling/createMessage`: a server asks the client's model for a completion. The host's
 * `sample` hook answers (it decides, under its permission policy, whether to); each
 * request is reported as an `mcp_sampling` event with the decision, the model and the
 * usage — never the text of the conversation.
 */
import type { CreateMessageRequest, CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { ReinError } from '../errors.js';
import { messageOf } from './failures.js';
import type { Sdk } from './sdk.js';
import type { McpEvent, McpSamplingRequest, McpSamplingResult } from './types.js';

/** JSON-RPC code a client answers with when the user rejected a sampling request (the spec's example uses -1). */
const USER_REJECTED = -1;

/** What a sampler may add to its answer for the event: the usage it spent. */
export interface SamplingUsage {
  usage?: { input: number; output: number; cost?: number };
}

/** The request handler for one server. */
export function samplingHandler(
  server: string,
  sample: (request: McpSamplingRequest) => Promise<McpSamplingResult & SamplingUsage>,
  emit: (event: McpEvent) => void,
  sdk: Sdk,
): (request: CreateMessageRequest, extra: { signal: AbortSignal }) => Promise<CreateMessageResult> {
  return async (request, extra) => {
    let answer: McpSamplingResult & SamplingUsage;
    try {
      answer = await sample({ server, params: request.params as McpSamplingRequest['params'], signal: extra.signal });
    } catch (error) {
      const denied = error instanceof ReinError && (error.code === 'permission_denied' || error.code === 'tool_denied');
      emit({ type: 'mcp_sampling', server, decision: denied ? 'deny' : 'error', reason: messageOf(error) });
      if (denied) throw new sdk.McpError(USER_REJECTED, `sampling was refused: ${messageOf(error)}`);
      throw error;
    }
    const { usage, ...result } = answer;
    emit({
      type: 'mcp_sampling',
      server,
      decision: 'allow',
      model: result.model,
      ...(usage ? { usage } : {}),
      ...(result.stopReason !== undefined ? { stopReason: result.stopReason } : {}),
    });
    return result as CreateMessageResult;
  };
}
