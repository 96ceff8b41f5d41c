/**
 * Ending a model stream with an error before (or instead of) any answer: the one `error`
 * event and the empty message carrying it, as every consumer of a stream expects.
 */
import type { ReinError } from '../errors.js';
import { EventStream } from './event-stream.js';
import {
  emptyUsage,
  type AssistantMessage,
  type AssistantStream,
  type AssistantStreamEvent,
  type ModelApi,
  type ModelRef,
} from './types.js';

/** Pushes the `error` event of `error` and ends `out` with an empty message carrying it. */
export function endWithError(
  out: EventStream<AssistantStreamEvent, AssistantMessage>,
  model: Pick<ModelRef, 'provider' | 'id'>,
  error: ReinError,
  api?: ModelApi,
): void {
  const message: AssistantMessage = {
    role: 'assistant',
    content: [],
    stopReason: 'error',
    usage: emptyUsage(),
    provider: model.provider,
    model: model.id,
    ...(api === undefined ? {} : { api }),
    error: error.toJSON(),
  };
  out.push({ type: 'error', error, message });
  out.end(message);
}

/** A stream that failed with `error` without asking the model. */
export function failedStream(model: Pick<ModelRef, 'provider' | 'id'>, error: ReinError): AssistantStream {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  endWithError(out, model, error);
  return out;
}
