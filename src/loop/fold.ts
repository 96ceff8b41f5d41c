/**
 * Rebuilding a run from its stored events (DESIGN.md: a run's state is a fold over its
 * events). The store, resume and replay build on this; a test proves that the fold of a
 * run's events equals the run's own result.
 */
import type { RunEvent } from '../events.js';
import type { Message, ToolResultMessage } from '../model/types.js';

/**
 * The history a run's events describe: its starting history and input, every complete
 * assistant message (an aborted or failed one is in the log but never in the history),
 * the tool results of each turn in call order (they may finish, and be logged, in any
 * order), and every injected message, in order; a compaction replaces the leading
 * messages with its summary, as the loop did.
 */
export function messagesFromEvents(events: Iterable<RunEvent>): Message[] {
  const messages: Message[] = [];
  let batch: { ids: string[]; results: Map<string, ToolResultMessage> } | undefined;
  const flush = (): void => {
    if (!batch) return;
    for (const id of batch.ids) {
      const result = batch.results.get(id);
      if (result) messages.push(result);
    }
    batch = undefined;
  };
  for (const event of events) {
    switch (event.type) {
      case 'run_started':
        messages.push(...event.history, event.input);
        break;
      case 'assistant_message': {
        flush();
        const message = event.message;
        if (message.stopReason === 'error' || message.stopReason === 'aborted') break;
        messages.push(message);
        const ids = message.content.flatMap((c) => (c.type === 'tool_call' ? [c.id] : []));
        if (ids.length > 0) batch = { ids, results: new Map() };
        break;
      }
      case 'tool_finished':
        if (batch) {
          batch.results.set(event.toolCallId, event.result);
          if (batch.results.size === batch.ids.length) flush();
        } else {
          messages.push(event.result);
        }
        break;
      case 'message_injected':
        flush();
        messages.push(event.message);
        break;
      case 'context_compacted':
        // The same splice the loop made: the summary stands in for the leading messages.
        flush();
        messages.splice(0, event.removedMessages, event.summary);
        break;
      default:
        break;
    }
  }
  flush();
  return messages;
}
