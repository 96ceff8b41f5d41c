/** The outcome of a call the loop answers itself, without its tool: an error result the model reads. */
import type { ErrorCode } from '../errors.js';
import type { ToolCall } from '../model/types.js';
import type { DispatchOutcome } from '../tools/types.js';

export function errorOutcome(call: ToolCall, errorCode: ErrorCode, text: string, durationMs = 0): DispatchOutcome {
  return {
    result: { role: 'tool', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text }], isError: true },
    terminate: false,
    errorCode,
    arguments: call.arguments,
    durationMs,
  };
}
