/**
 * The recorded provider responses in ../shared/fixtures, by wire API: which adapter
 * decodes each file, how to replay it (payload-only `.chunks.jsonl` rebuilt into frames),
 * and a model to ask for it. Shared by the conformance suites and the catalog tests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadAdapter } from '../../src/model/providers/index.js';
import type { AssistantMessage, AssistantStreamEvent, Context, ModelApi, ModelRef, StreamOptions } from '../../src/model/types.js';
import { FIXTURES_DIR, fixtureResponse, startServer } from '../model/fixture-server.js';
import type { RecordedRequest, ScriptedResponse } from '../model/fixture-server.js';
import { collect } from '../model/stream-helpers.js';

/** The provider folders of the fixtures, each replayed through the adapter of its API. */
export const PROVIDER_FOLDERS = ['openai-chat', 'openai-compatible', 'anthropic', 'openai-responses', 'gemini'] as const;

/** The wire API of a recording, from its folder (LM Studio's Responses recordings sit with the compatible servers). */
export function apiOf(file: string): ModelApi {
  const [folder = '', name = ''] = file.split('/');
  if (folder === 'anthropic') return 'anthropic-messages';
  if (folder === 'gemini') return 'gemini';
  if (folder === 'openai-responses' || name.startsWith('lmstudio-responses-')) return 'openai-responses';
  return 'openai-chat';
}

/** Every recording of every provider folder (`folder/name`), cassettes and notes excluded. */
export function allRecordings(): string[] {
  return PROVIDER_FOLDERS.flatMap((folder) =>
    readdirSync(new URL(`${folder}/`, FIXTURES_DIR))
      .filter((name) => /\.(sse|json|txt|jsonl)$/.test(name))
      .sort()
      .map((name) => `${folder}/${name}`),
  );
}

interface ManifestEntry {
  file: string;
  request?: { url?: string; body?: unknown };
  response?: { status: number };
}

let manifestCache: Map<string, ManifestEntry> | undefined;

/** The manifest entry of a recording (request and response metadata). */
export function manifestEntry(file: string): ManifestEntry | undefined {
  if (manifestCache === undefined) {
    const parsed = JSON.parse(readFileSync(new URL('manifest.json', FIXTURES_DIR), 'utf8')) as { fixtures: ManifestEntry[] };
    manifestCache = new Map(parsed.fixtures.map((entry) => [entry.file, entry]));
  }
  return manifestCache.get(file);
}

/** The HTTP status the recording was answered with (200 when the manifest has none: notes-derived streams). */
export function recordedStatus(file: string): number {
  return manifestEntry(file)?.response?.status ?? 200;
}

/** A 200 JSON body: a non-streaming response, requested with `stream: false`. */
export function isNonStreaming(file: string): boolean {
  return file.endsWith('.json') && recordedStatus(file) < 400;
}

/**
 * The response to replay. fixtureResponse rebuilds `.chunks.jsonl` as bare `data:` frames;
 * the fixtures README says Anthropic and Responses frames also carry `event: <type>`, as
 * the real servers send them, so those are rebuilt here.
 */
export function recordedResponse(file: string): ScriptedResponse {
  const response = fixtureResponse(file);
  const api = apiOf(file);
  if (file.endsWith('.chunks.jsonl') && (api === 'anthropic-messages' || api === 'openai-responses')) {
    const lines = readFileSync(new URL(file, FIXTURES_DIR), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '');
    response.body = lines.map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`).join('');
  }
  return response;
}

/** The model the recording was made with, where the manifest says; else a typical one of the API. */
export function recordedModelId(file: string): string {
  const request = manifestEntry(file)?.request;
  const body = request?.body;
  if (typeof body === 'object' && body !== null && typeof (body as { model?: unknown }).model === 'string')
    return (body as { model: string }).model;
  const fromUrl = /\/models\/([^/:]+):/.exec(request?.url ?? '')?.[1];
  if (fromUrl !== undefined) return fromUrl;
  return typicalModelId(apiOf(file));
}

/** A current model of `api`, for requests whose model does not matter. */
export function typicalModelId(api: ModelApi): string {
  return TYPICAL_MODEL[api];
}

const TYPICAL_MODEL: Record<ModelApi, string> = {
  'openai-chat': 'gpt-4o',
  'openai-responses': 'gpt-4o',
  'anthropic-messages': 'claude-sonnet-4-5',
  gemini: 'gemini-2.5-flash',
};

/** The provider name of `resolve.ts` for each API. */
export const PROVIDER_OF: Record<ModelApi, string> = {
  'openai-chat': 'openai',
  'openai-responses': 'openai-responses',
  'anthropic-messages': 'anthropic',
  gemini: 'gemini',
};

/** A model of `api` reached at `baseUrl` (a test server). */
export function modelRef(api: ModelApi, id: string, baseUrl: string): ModelRef {
  return { provider: PROVIDER_OF[api], id, api, baseUrl, apiKey: 'test-key' };
}

/** The result of replaying one recording through its adapter. */
export interface Replay {
  events: AssistantStreamEvent[];
  message: AssistantMessage;
  requests: RecordedRequest[];
}

/**
 * Replays `file` from a local server through the adapter of its API, asking for `id`
 * (default: the recorded model), and collects every event. The server is always closed.
 */
export async function replayRecording(file: string, options: { id?: string; context?: Context } = {}): Promise<Replay> {
  const api = apiOf(file);
  const server = await startServer([recordedResponse(file)]);
  try {
    const model = modelRef(api, options.id ?? recordedModelId(file), server.baseUrl);
    const context = options.context ?? { messages: [{ role: 'user', content: 'hi' }] };
    const streamOptions: StreamOptions = isNonStreaming(file) ? { stream: false } : {};
    const { events, message } = await collect((await loadAdapter(api))(model, context, streamOptions));
    return { events, message, requests: server.requests };
  } finally {
    await server.close();
  }
}
