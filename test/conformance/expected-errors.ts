/**
 * What every error recording must become: the `code` and `kind` of the typed error its
 * stream ends with. One table for all providers, so the same failure is classified the
 * same way whichever API reported it (DESIGN: transient → retried, fatal → run stops).
 */
import { readFileSync } from 'node:fs';
import type { ErrorCode, ErrorKind } from '../../src/errors.js';
import type { ModelApi } from '../../src/model/types.js';
import { FIXTURES_DIR } from '../model/fixture-server.js';
import type { ScriptedResponse } from '../model/fixture-server.js';

/** The expected classification of an error. */
export type ExpectedError = readonly [ErrorCode, ErrorKind];

/** Recordings answered with an HTTP error status, or carrying an error inside a 200 stream. */
export const EXPECTED_ERRORS: Record<string, ExpectedError> = {
  'openai-chat/error-400-unsupported-parameter.json': ['bad_request', 'fatal'],
  'openai-chat/error-400-unsupported-value-developer-role.json': ['bad_request', 'fatal'],
  'openai-chat/error-401-invalid-api-key.json': ['auth', 'fatal'],
  'openai-chat/error-404-model-not-found.json': ['model_not_found', 'fatal'],
  // A text/plain body from OpenAI's edge: not JSON, still classified by its status.
  'openai-chat/error-503-upstream-connect-text-plain.txt': ['server_error', 'transient'],
  // Groq: the model wrote a tool call the server could not parse; another sample may not.
  'openai-compatible/groq-error-400-tool-use-failed.json': ['invalid_response', 'transient'],
  'openai-compatible/groq-stream-tool-use-failed-error-event.sse': ['invalid_response', 'transient'],
  'openai-compatible/openrouter-error-429-upstream-rate-limited.json': ['rate_limited', 'transient'],
  // `"error":{"code":400,"message":"Token limit reached"}` inside a 200 stream.
  'openai-compatible/openrouter-stream-error-in-chunk.sse': ['bad_request', 'fatal'],
  'anthropic/error-400-invalid-request.json': ['bad_request', 'fatal'],
  'anthropic/error-401-authentication.json': ['auth', 'fatal'],
  'anthropic/error-404-not-found-model.json': ['model_not_found', 'fatal'],
  'openai-responses/error-400-invalid-request.json': ['bad_request', 'fatal'],
  // OpenAI answers an unknown model with 400 (code model_not_found) on /responses.
  'openai-responses/error-400-model-not-found.json': ['model_not_found', 'fatal'],
  'openai-responses/error-401-invalid-api-key.json': ['auth', 'fatal'],
  // A used-up quota is not cured by waiting: fatal, unlike a rate limit.
  'openai-responses/stream-error-insufficient-quota.chunks.jsonl': ['rate_limited', 'fatal'],
  // Gemini reports a bad key as 400 INVALID_ARGUMENT with reason API_KEY_INVALID.
  'gemini/error-400-api-key-invalid.json': ['auth', 'fatal'],
  'gemini/error-404-model-not-found.json': ['model_not_found', 'fatal'],
  'gemini/error-429-resource-exhausted.json': ['rate_limited', 'transient'],
};

/** A 200 body that carries an error: an `event: error` frame, an error event, an error object. */
export function carriesStreamError(body: string): boolean {
  return /^event: error$|"type": ?"error"|"error": ?\{/m.test(body);
}

/** One error payload transcribed from a public issue report (errors/observed-in-issue-reports.json). */
export interface ReportedError {
  name: string;
  api: ModelApi;
  response: ScriptedResponse;
  expected: ExpectedError;
}

interface ReportItem {
  provider: string;
  status: number | null;
  scenario: string;
  source_url: string;
  headers?: Record<string, string>;
  body: unknown;
}

/** Expected classification per issue report, by its URL. */
const REPORTED: Record<string, ExpectedError> = {
  'https://github.com/Pythagora-io/gpt-pilot/issues/17': ['rate_limited', 'transient'],
  'https://github.com/rotemweiss57/gpt-newspaper/issues/10': ['rate_limited', 'transient'],
  'https://github.com/XiaomiMiMo/MiMo-Code/issues/1970': ['server_error', 'transient'],
  'https://github.com/crewAIInc/crewAI-examples/issues/121': ['context_length', 'fatal'],
  'https://github.com/mckaywrigley/chatbot-ui/issues/102': ['context_length', 'fatal'],
  'https://github.com/evalstate/fast-agent/issues/621': ['context_length', 'fatal'],
  'https://github.com/openai/openai-cua-sample-app/issues/54': ['server_error', 'transient'],
  'https://github.com/bhouston/mycoder/issues/62': ['rate_limited', 'transient'],
  'https://github.com/anthropics/anthropic-sdk-typescript/issues/357': ['rate_limited', 'transient'],
  'https://github.com/anthropics/claude-code/issues/3633': ['overloaded', 'transient'],
  'https://github.com/gotgenes/pi-anthropic-auth/issues/73': ['overloaded', 'transient'],
  'https://github.com/anthropics/claude-code/issues/4248': ['overloaded', 'transient'],
  'https://github.com/anthropics/claude-code/issues/12186': ['context_length', 'fatal'],
};

const DROPPED_HEADERS = new Set(['content-length', 'connection', 'transfer-encoding', 'content-encoding']);

/**
 * The issue-report payloads that can be replayed as a server would send them: those with
 * an HTTP status, and mid-stream ones whose body is a wire event (`"type": "error"`),
 * sent as the single `event: error` frame of a 200 stream. The Codex report is the SDK's
 * view of an error, not a wire frame, so it is left out.
 */
export function reportedErrors(): ReportedError[] {
  const { items } = JSON.parse(readFileSync(new URL('errors/observed-in-issue-reports.json', FIXTURES_DIR), 'utf8')) as {
    items: ReportItem[];
  };
  const out: ReportedError[] = [];
  for (const item of items) {
    const expected = REPORTED[item.source_url];
    if (expected === undefined) continue;
    const api: ModelApi =
      item.provider === 'anthropic' ? 'anthropic-messages' : item.provider === 'openai-responses' ? 'openai-responses' : 'openai-chat';
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(item.headers ?? {})) if (!DROPPED_HEADERS.has(name.toLowerCase())) headers[name] = value;
    let response: ScriptedResponse;
    if (item.status !== null) {
      headers['content-type'] ??= 'application/json';
      response = { status: item.status, headers, body: item.body === null ? '' : JSON.stringify(item.body) };
    } else {
      response = {
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: `event: error\ndata: ${JSON.stringify(item.body)}\n\n`,
      };
    }
    out.push({ name: `${item.provider} ${item.status ?? 'mid-stream'}: ${item.scenario.slice(0, 70)}`, api, response, expected });
  }
  return out;
}

/** Issue reports the table leaves out on purpose (not replayable as wire data). */
export const UNREPLAYABLE_REPORTS = ['https://github.com/openai/codex/issues/88'];

/** Every issue report's URL, to prove each is either in the table or left out on purpose. */
export function reportUrls(): string[] {
  const { items } = JSON.parse(readFileSync(new URL('errors/observed-in-issue-reports.json', FIXTURES_DIR), 'utf8')) as {
    items: ReportItem[];
  };
  return items.map((item) => item.source_url);
}

/** The URLs the table classifies. */
export const CLASSIFIED_REPORTS: readonly string[] = Object.keys(REPORTED);
