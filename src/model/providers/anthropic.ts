/**
 * The Anthropic Messages adapter. PLACEHOLDER while the adapter is written: it ends every stream with
 * a `config` error saying so. Replaced by the real adapter in this same change.
 */
import { ReinError } from '../../errors.js';
import { EventStream } from '../event-stream.js';
import { emptyUsage } from '../types.js';
import type { AssistantMessage, AssistantStreamEvent, StreamFunction } from '../types.js';

export const streamAnthropic: StreamFunction = (model) => {
  const error = new ReinError('config', 'fatal', 'the Anthropic Messages adapter is not built yet');
  const message: AssistantMessage = { role: 'assistant', content: [], stopReason: 'error', usage: emptyUsage(), provider: model.provider, model: model.id, error: error.toJSON() };
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  out.push({ type: 'error', error, message });
  out.end(message);
  return out;
};
