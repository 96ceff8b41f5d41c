/**
 * The Gemini wire (`POST /v1beta/models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`): `GenerateContentResponse` chunks with thought parts,
 * text and `functionCall` parts (the first carrying a `thoughtSignature`), in the shape of
 * the recordings in `shared/fixtures/gemini/` — down to the `\r\n\r\n` between SSE events.
 */
import { argumentsValue, fakeSignature, mapFinish, pieces, type Answer } from './answer.js';
import { geminiError, validateGeminiRequest } from './validate-gemini.js';
import { geminiView } from './view.js';
import type { Route, WireFormat } from './wire-format.js';

type Json = Record<string, unknown>;

const FINISH: Record<string, string> = { stop: 'STOP', tool_calls: 'STOP', length: 'MAX_TOKENS', content_filter: 'SAFETY' };

/** Google's status names by HTTP status, and back. */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};
const CODES: Record<string, number> = Object.fromEntries(Object.entries(STATUS_NAMES).map(([code, name]) => [name, Number(code)]));

/** Gemini's `candidatesTokenCount` leaves out the thoughts, which it counts apart. */
function usage(answer: Answer, final: boolean): Json {
  const { tokens } = answer;
  const details = [{ modality: 'TEXT', tokenCount: tokens.prompt }];
  // The recordings carry only the prompt count until the last chunk.
  if (!final) return { promptTokenCount: tokens.prompt, totalTokenCount: tokens.prompt, promptTokensDetails: details };
  const out: Json = {
    promptTokenCount: tokens.prompt,
    candidatesTokenCount: Math.max(0, tokens.completion - tokens.reasoning),
    totalTokenCount: tokens.total,
    promptTokensDetails: details,
  };
  if (tokens.cached > 0) out.cachedContentTokenCount = tokens.cached;
  if (tokens.reasoning > 0) out.thoughtsTokenCount = tokens.reasoning;
  return out;
}

function response(answer: Answer, parts: Json[], final: boolean): Json {
  const candidate: Json = { content: { parts, role: 'model' } };
  if (final && answer.finishReason !== null) candidate.finishReason = mapFinish(answer.finishReason, FINISH);
  candidate.index = 0;
  return { candidates: [candidate], usageMetadata: usage(answer, final), modelVersion: answer.model, responseId: answer.id };
}

/** The stable fake signature of a turn's thinking and calls. */
function signature(answer: Answer): string {
  // Not the call ids: Gemini sends none, and the same turn must sign the same.
  const calls = answer.calls.map((call) => [call.name, call.arguments]);
  return fakeSignature('gemini-thought', JSON.stringify([answer.turn.thinking ?? '', calls]));
}

/** Every call in one part each; the first carries the turn's signature, as Gemini 2.5+ sends it. */
function callParts(answer: Answer): Json[] {
  return answer.calls.map((call, k) => {
    const part: Json = { functionCall: { name: call.name, args: argumentsValue(call) } };
    if (k === 0) part.thoughtSignature = signature(answer);
    return part;
  });
}

/** The parts of each streamed chunk, in order. */
function chunkParts(answer: Answer, chunkSize: number): Json[][] {
  const { turn, calls } = answer;
  const chunks: Json[][] = [];
  if (turn.thinking) for (const text of pieces(turn.thinking, chunkSize)) chunks.push([{ text, thought: true }]);
  if (turn.text) for (const text of pieces(turn.text, chunkSize)) chunks.push([{ text }]);
  // Gemini sends function calls whole (arguments never arrive in pieces), together.
  if (calls.length > 0) chunks.push(callParts(answer));
  // A thinking turn without calls signs its text in a last, empty text part.
  else if (turn.thinking) chunks.push([{ text: '', thoughtSignature: signature(answer) }]);
  if (chunks.length === 0) chunks.push([{ text: '' }]);
  return chunks;
}

function statusBody(
  fault: { status: number; retryAfter?: number; retryAfterMs?: number },
  model: string,
): { status: number; body: unknown } {
  const delay = fault.retryAfterMs !== undefined ? fault.retryAfterMs / 1000 : fault.retryAfter;
  const retry = delay === undefined ? [] : [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${delay}s` }];
  switch (fault.status) {
    case 401:
      // Gemini answers a bad key with 400, not 401.
      return {
        status: 400,
        body: geminiError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'API_KEY_INVALID',
            domain: 'googleapis.com',
            metadata: { service: 'generativelanguage.googleapis.com' },
          },
          {
            '@type': 'type.googleapis.com/google.rpc.LocalizedMessage',
            locale: 'en-US',
            message: 'API key not valid. Please pass a valid API key.',
          },
        ]),
      };
    case 404:
      return {
        status: 404,
        body: geminiError(
          404,
          'NOT_FOUND',
          `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
        ),
      };
    case 429: {
      const hint = delay === undefined ? '' : `\nPlease retry in ${delay}s.`;
      const quota = {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
            quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
          },
        ],
      };
      const message = `You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.${hint}`;
      return { status: 429, body: geminiError(429, 'RESOURCE_EXHAUSTED', message, [quota, ...retry]) };
    }
    case 500:
      return {
        status: 500,
        body: geminiError(
          500,
          'INTERNAL',
          'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
          retry.length ? retry : undefined,
        ),
      };
    case 503:
      return {
        status: 503,
        body: geminiError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.', retry.length ? retry : undefined),
      };
    default: {
      const name = STATUS_NAMES[fault.status] ?? (fault.status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
      return {
        status: fault.status,
        body: geminiError(fault.status, name, `scripted fault: HTTP ${fault.status}`, retry.length ? retry : undefined),
      };
    }
  }
}

/** Google's error object for an in-stream or non-streamed failure: `code` is a status name. */
function failureBody(fault: { message: string; code?: string }): { status: number; body: unknown } {
  const name = fault.code !== undefined && CODES[fault.code] !== undefined ? fault.code : 'INTERNAL';
  const code = CODES[name] ?? 500;
  return { status: code, body: geminiError(code, name, fault.message) };
}

function frames(answer: Answer, route: Route, chunkSize: number, streamError?: { message: string; code?: string }): string[] {
  const chunks = chunkParts(answer, chunkSize);
  const bodies = chunks.map((parts, k) => JSON.stringify(response(answer, parts, k === chunks.length - 1)));
  if (streamError) bodies.push(JSON.stringify(failureBody(streamError).body));
  // Without `alt=sse` Gemini streams one JSON array, its elements arriving as they are made.
  if (route.jsonArray) return bodies.map((json, k) => (k === 0 ? `[${json}` : `,\r\n${json}`));
  return bodies.map((json) => `data: ${json}\r\n\r\n`);
}

function json(answer: Answer): string {
  const { turn } = answer;
  const parts: Json[] = [];
  if (turn.thinking) parts.push({ text: turn.thinking, thought: true });
  if (turn.text) {
    const part: Json = { text: turn.text };
    if (turn.thinking && answer.calls.length === 0) part.thoughtSignature = signature(answer);
    parts.push(part);
  }
  parts.push(...callParts(answer));
  if (parts.length === 0) parts.push({ text: '' });
  return JSON.stringify(response(answer, parts, true));
}

/** The Gemini wire, as the server drives it. */
export const geminiWire: WireFormat = {
  api: 'gemini',
  unparsable: () => geminiError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unexpected token.'),
  scriptError: (message) => geminiError(500, 'INTERNAL', message),
  validate: (body) => validateGeminiRequest(body),
  model: (_body, route) => route.model ?? '',
  streams: (_body, route) => route.stream === true,
  view: (body, route) => geminiView(body, route),
  responseId: (n) => `scripted-gemini-${n}`,
  callId: (n) => `call_${n}`,
  statusFault: (fault, model) => (fault.body === undefined ? statusBody(fault, model) : { status: fault.status, body: fault.body }),
  failure: (fault) => failureBody(fault),
  frames: (answer, _body, options) => frames(answer, options.route, options.chunkSize, options.streamError),
  ending: (route) => (route.jsonArray ? ']' : ''),
  json: (answer) => json(answer),
};
