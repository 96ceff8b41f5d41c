/**
 * The provider adapters by wire API, registered explicitly (STYLE 4: never by the side
 * effect of an import). Adding an API means one adapter file and one line here.
 */
import { ReinError } from '../../errors.js';
import { EventStream } from '../event-stream.js';
import { emptyUsage } from '../types.js';
import type { AssistantMessage, AssistantStream, AssistantStreamEvent, Context, ModelApi, ModelRef, StreamFunction, StreamOptions } from '../types.js';
import { streamAnthropic } from './anthropic.js';
import { streamGemini } from './gemini.js';
import { streamOpenAIChat } from './openai-chat.js';
import { streamOpenAIResponses } from './openai-responses.js';

/** Every adapter, keyed by {@link ModelApi}. */
export const adapters: Record<ModelApi, StreamFunction> = {
  'openai-chat': streamOpenAIChat,
  'openai-responses': streamOpenAIResponses,
  'anthropic-messages': streamAnthropic,
  gemini: streamGemini,
};

/**
 * Streams one response from `model` through the adapter of its API. Like every adapter it
 * never throws: failures end the stream with an `error` event.
 *
 * @example
 * const message = await streamModel(resolveModel('openai/gpt-4o'), { messages }).result();
 */
export function streamModel(model: ModelRef, context: Context, options?: StreamOptions): AssistantStream {
  const adapter = adapters[model.api] as StreamFunction | undefined; // api may come from untyped config
  if (adapter !== undefined) return adapter(model, context, options);
  const error = new ReinError('config', 'fatal', `No adapter for API "${String(model.api)}" of ${model.provider}/${model.id}: known APIs are ${Object.keys(adapters).join(', ')}`);
  const message: AssistantMessage = { role: 'assistant', content: [], stopReason: 'error', usage: emptyUsage(), provider: model.provider, model: model.id, error: error.toJSON() };
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  out.push({ type: 'error', error, message });
  out.end(message);
  return out;
}
