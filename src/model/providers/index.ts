/**
 * The provider adapters by wire API, registered explicitly (STYLE 4: never by the side
 * effect of an import). Adding an API means one adapter file and one line here.
 */
import { ReinError } from '../../errors.js';
import { EventStream } from '../event-stream.js';
import { endWithError, failedStream } from '../failed-stream.js';
import { streamPrompted, toolCallingOf } from '../prompted-tools.js';
import type {
  AssistantMessage,
  AssistantStream,
  AssistantStreamEvent,
  Context,
  ModelApi,
  ModelRef,
  StreamFunction,
  StreamOptions,
} from '../types.js';
import { streamOpenAIChat } from './openai-chat.js';

/**
 * How each API's adapter is loaded. Chat Completions — the default, and what most
 * OpenAI-compatible servers speak — is part of the core; the others are loaded on their
 * first request, so importing rein does not pay for adapters a program never uses.
 */
export const adapterLoaders: Record<ModelApi, () => Promise<StreamFunction>> = {
  'openai-chat': () => Promise.resolve(streamOpenAIChat),
  'openai-responses': () => import('./openai-responses.js').then((m) => m.streamOpenAIResponses),
  'anthropic-messages': () => import('./anthropic.js').then((m) => m.streamAnthropic),
  gemini: () => import('./gemini.js').then((m) => m.streamGemini),
};

/** The adapters loaded so far, keyed by {@link ModelApi}; see {@link loadAdapter}. */
export const adapters: Partial<Record<ModelApi, StreamFunction>> = { 'openai-chat': streamOpenAIChat };

/** The adapter of `api`, loaded once (later calls answer from {@link adapters}). */
export async function loadAdapter(api: ModelApi): Promise<StreamFunction> {
  const loaded = adapters[api];
  if (loaded) return loaded;
  const adapter = await adapterLoaders[api]();
  adapters[api] = adapter;
  return adapter;
}

/**
 * Streams one response from `model` through the adapter of its API. Like every adapter it
 * never throws: failures end the stream with an `error` event. A model that gets its
 * tools in the prompt (`toolCallingOf`, prompted-tools.ts) is asked through the same
 * adapter, with its tools described and its calls read from its text.
 *
 * @example
 * const message = await streamModel(resolveModel('openai/gpt-4o'), { messages }).result();
 */
export function streamModel(model: ModelRef, context: Context, options?: StreamOptions): AssistantStream {
  if (context.tools !== undefined && context.tools.length > 0 && toolCallingOf(model) === 'prompt')
    return streamPrompted(streamNatively, model, context, options);
  return streamNatively(model, context, options);
}

function streamNatively(model: ModelRef, context: Context, options?: StreamOptions): AssistantStream {
  const adapter = adapters[model.api] as StreamFunction | undefined; // api may come from untyped config
  if (adapter !== undefined) return adapter(model, context, options);
  if (Object.hasOwn(adapterLoaders, model.api)) return streamWhenLoaded(model, context, options);
  const error = new ReinError(
    'config',
    'fatal',
    `No adapter for API "${String(model.api)}" of ${model.provider}/${model.id}: known APIs are ${Object.keys(adapterLoaders).join(', ')}`,
  );
  return failedStream(model, error);
}

/** The first request of an API whose adapter is not loaded yet: load it, then relay its stream. */
function streamWhenLoaded(model: ModelRef, context: Context, options?: StreamOptions): AssistantStream {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  loadAdapter(model.api).then(
    async (adapter) => {
      const inner = adapter(model, context, options);
      out.end((await inner.listen?.((event) => out.push(event))) ?? (await relay(inner, out)));
    },
    (cause: unknown) => {
      const error = new ReinError(
        'internal',
        'fatal',
        `the ${model.api} adapter could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
      endWithError(out, model, error);
    },
  );
  return out;
}

async function relay(inner: AssistantStream, out: EventStream<AssistantStreamEvent, AssistantMessage>): Promise<AssistantMessage> {
  for await (const event of inner) out.push(event);
  return inner.result();
}
