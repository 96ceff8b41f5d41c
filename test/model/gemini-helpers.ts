/** Shared helpers of the Gemini adapter tests. */
import type { AssistantStreamEvent, ModelRef } from '../../src/model/types.js';

/** A Gemini model pointing at a test server (the adapter appends `/v1beta/models/…`). */
export function geminiModel(serverBaseUrl: string, id = 'gemini-2.5-flash', overrides: Partial<ModelRef> = {}): ModelRef {
  return { provider: 'gemini', id, api: 'gemini', baseUrl: serverBaseUrl.replace(/\/v1$/, ''), apiKey: 'test-key', ...overrides };
}

/** The error of the terminal event (fails when the stream did not end in an error). */
export function errorOf(events: AssistantStreamEvent[]): Extract<AssistantStreamEvent, { type: 'error' }>['error'] {
  const last = events[events.length - 1];
  if (last?.type !== 'error') throw new Error(`expected an error event, got ${last?.type}`);
  return last.error;
}

/** One `GenerateContentResponse` frame as `data: …` SSE, with Gemini's CRLF separators. */
export function geminiSse(chunks: unknown[]): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join('');
}

/** A response chunk with the given parts (and optional finish reason / extra members). */
export function candidate(parts: unknown[], finishReason?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const c: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
  if (finishReason !== undefined) c.finishReason = finishReason;
  return { candidates: [c], responseId: 'resp-test', ...extra };
}
