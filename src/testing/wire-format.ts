/**
 * What the server needs from each wire format: how to validate and read a request, and how
 * to render an answer, a fault and its own errors. One implementation per file
 * (`wire-chat.ts`, `wire-anthropic.ts`, `wire-responses.ts`, `wire-gemini.ts`); the server
 * does the HTTP, the script and the faults once for all of them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ModelApi } from '../model/types.js';
import type { Answer } from './answer.js';
import type { Fault, ScriptRequest } from './script.js';

/** A request path resolved to a wire, with what the path itself says. */
export interface Route {
  api: ModelApi;
  /** Gemini names the model in the path. */
  model?: string;
  /** Gemini streams by path (`:streamGenerateContent`); the others by `stream: true`. */
  stream?: boolean;
  /** Gemini's `:streamGenerateContent` without `alt=sse` streams one JSON array. */
  jsonArray?: boolean;
}

/** An HTTP answer other than the turn itself. */
export interface HttpAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The error body of a rejected request: every wire puts the message at `error.message`. */
export interface RejectionBody {
  error: { message: string };
}

/** Options of {@link WireFormat.frames}. */
export interface FrameOptions {
  route: Route;
  /** Characters of text or argument JSON per delta. */
  chunkSize: number;
  /** End with the wire's in-stream error instead of the finish. */
  streamError?: { message: string; code?: string };
}

/** One wire format, as the server drives it. */
export interface WireFormat {
  api: ModelApi;
  /** The HTTP 400 body for a request body that is not JSON (or not a JSON object). */
  unparsable(): unknown;
  /** The HTTP 500 body for a script that has no answer (`scripted model: …`). */
  scriptError(message: string): unknown;
  /** Checks a parsed body like the real API: the 400 body of the first problem, or `undefined`. */
  validate(body: unknown, headers: IncomingHttpHeaders): RejectionBody | undefined;
  /** The model id of a valid request. */
  model(body: Record<string, unknown>, route: Route): string;
  /** Whether a valid request asks for a stream. */
  streams(body: Record<string, unknown>, route: Route): boolean;
  /** The provider-neutral view of a valid request. */
  view(body: Record<string, unknown>, route: Route): ScriptRequest;
  /** The response id for the `n`-th answer of the server. */
  responseId(n: number): string;
  /** The `n`-th generated tool call id. */
  callId(n: number): string;
  /** The answer to a `status` fault. */
  statusFault(fault: Extract<Fault, { type: 'status' }>, model: string): HttpAnswer;
  /** A non-streamed request meeting an `error_in_stream` fault. */
  failure(fault: Extract<Fault, { type: 'error_in_stream' }>): HttpAnswer;
  /** The complete SSE frames of a streamed answer, without {@link WireFormat.ending}. */
  frames(answer: Answer, body: Record<string, unknown>, options: FrameOptions): string[];
  /** Sent after the frames of a stream that did not fail (`data: [DONE]` for Chat Completions). */
  ending(route: Route): string;
  /** The JSON body of a non-streamed answer. */
  json(answer: Answer, body: Record<string, unknown>): string;
}

/** An SSE frame with an `event:` line, as Anthropic and the Responses API send them. */
export function namedFrame(type: string, data: string): string {
  return `event: ${type}\ndata: ${data}\n\n`;
}

/** True for a plain JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `'null'`, `'an array'`, `'an object'`, `'a string'`…: how error messages name a value's type. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' ? 'an object' : `a ${type}`;
}
