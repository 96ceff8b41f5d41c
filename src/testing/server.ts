/**
 * The scripted model server: a real HTTP server that speaks every wire format rein
 * supports — chosen by the request path — and answers from one provider-neutral script.
 * Tests, the offline demo and the benchmark talk to it exactly as they would to a
 * provider, so the whole adapter → loop path is exercised.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelApi, ModelRef } from '../model/types.js';
import { resolveAnswer } from './answer.js';
import { ScriptError, takeTurn, type ChatRequest, type Script, type ScriptRequest, type ScriptTurn } from './script.js';
import { JSON_HEADERS, pause, readBody, sendError, sendJson, sendStream, SSE_HEADERS } from './http-io.js';
import { geminiError } from './validate-gemini.js';
import { anthropicWire } from './wire-anthropic.js';
import { chatWire, errorBody } from './wire-chat.js';
import { isObject, type Route, type WireFormat } from './wire-format.js';
import { geminiWire } from './wire-gemini.js';
import { responsesWire } from './wire-responses.js';

/** Options of {@link startScriptedServer}. */
export interface ScriptedServerOptions {
  script: Script;
  /** Default 0: any free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Delay between streamed events for every turn (a `slow` fault overrides it). Default 0. */
  tokenDelayMs?: number;
  /** Characters of text or argument JSON per delta. Default 12, so streams have several deltas. */
  chunkSize?: number;
  /** The model id of {@link ScriptedServer.model} and `GET /v1/models`. Default `scripted`. */
  model?: string;
  /**
   * Keep every request in {@link ScriptedServer.requests} and {@link ScriptedServer.received}.
   * Default true; a long-running server (the benchmark's) turns it off so it does not hold
   * every history it was sent.
   */
  recordRequests?: boolean;
}

/** A request the server received, through any wire. */
export interface ReceivedRequest {
  api: ModelApi;
  /** The parsed JSON body, as sent. */
  body: Record<string, unknown>;
  /** The provider-neutral view a script function sees; absent when the request was rejected. */
  request?: ScriptRequest;
  /** The message of the HTTP 400 the server answered when it rejected the request. */
  rejected?: string;
  /** The request's headers, as Node parsed them (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
}

/** A running scripted model server. */
export interface ScriptedServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:54321/v1`: Chat Completions' and Responses'. */
  url: string;
  /** Scheme, host and port, e.g. `http://127.0.0.1:54321`: the base URL of Anthropic and Gemini. */
  origin: string;
  port: number;
  /**
   * Every Chat Completions request body received (parsed), in arrival order, including
   * those rejected with HTTP 400 (empty when `recordRequests` is false). Other wires are in
   * {@link ScriptedServer.received}.
   */
  requests: ChatRequest[];
  /** Every request of every wire, in arrival order, with its wire and neutral view. */
  received: ReceivedRequest[];
  /**
   * A model reference pointing at this server through `api` (default `openai-chat`), with
   * the base URL rein's adapter for that API expects (see `resolve.ts`).
   *
   * @example
   * const agent = new Agent({ model: server.model('claude-test', 'anthropic-messages'), tools });
   */
  model(id?: string, api?: ModelApi): ModelRef;
  /** Stops listening and drops every open connection (keep-alive or mid-stream). */
  close(): Promise<void>;
}

/** Every wire by API. */
const WIRES: Record<ModelApi, WireFormat> = {
  'openai-chat': chatWire,
  'anthropic-messages': anthropicWire,
  'openai-responses': responsesWire,
  gemini: geminiWire,
};

const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** The wire a request path speaks, or `undefined` for an unknown path. */
function routeOf(path: string, query: string): Route | undefined {
  if (path === '/v1/chat/completions') return { api: 'openai-chat' };
  if (path === '/v1/messages') return { api: 'anthropic-messages' };
  if (path === '/v1/responses') return { api: 'openai-responses' };
  const gemini = GEMINI_PATH.exec(path);
  if (gemini === null) return undefined;
  let model = gemini[1] ?? '';
  try {
    model = decodeURIComponent(model);
  } catch {
    // keep it as sent
  }
  const stream = gemini[2] === 'streamGenerateContent';
  return { api: 'gemini', model, stream, jsonArray: stream && !new URLSearchParams(query).getAll('alt').includes('sse') };
}

/**
 * Starts a scripted model server on 127.0.0.1 (a free port by default). It speaks, by path:
 *
 * - OpenAI Chat Completions: `POST /v1/chat/completions` (SSE honouring
 *   `stream_options.include_usage`, or one JSON body); `GET /v1/models` lists the model.
 * - OpenAI Responses: `POST /v1/responses`.
 * - Anthropic Messages: `POST /v1/messages` (requires the `anthropic-version` header).
 * - Gemini: `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`
 *   (`?alt=sse` for SSE, else one streamed JSON array).
 *
 * Each wire validates its request like the real API (HTTP 400 with the provider's error
 * body on an invalid history; a rejected request takes no turn), hands the script the
 * provider-neutral view of it, and renders the turn and its faults in its own shape. A list
 * script that runs out answers HTTP 500 "scripted model: script exhausted after N turns".
 *
 * @example
 * import { startScriptedServer, text, toolCall } from 'rein/testing';
 *
 * const server = await startScriptedServer({
 *   script: [toolCall('read_file', { path: 'notes.txt' }), text('The notes say hello.')],
 * });
 * try {
 *   const agent = new Agent({ model: server.model('claude-test', 'anthropic-messages'), tools: [readFile] });
 *   await agent.run('What do the notes say?');
 *   expect(server.received[1]?.request?.messages.at(-1)?.role).toBe('tool');
 * } finally {
 *   await server.close();
 * }
 */
export async function startScriptedServer(options: ScriptedServerOptions): Promise<ScriptedServer> {
  const { script } = options;
  const host = options.host ?? '127.0.0.1';
  const defaultModel = options.model ?? 'scripted';
  const chunkSize = Math.max(1, options.chunkSize ?? 12);
  const tokenDelayMs = options.tokenDelayMs ?? 0;
  const requests: ChatRequest[] = [];
  const received: ReceivedRequest[] = [];
  const record = options.recordRequests ?? true;
  let turns = 0;
  let calls = 0;
  let responses = 0;

  async function answer(route: Route, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const wire = WIRES[route.api];
    const raw = await readBody(req);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      sendJson(res, 400, wire.unparsable());
      return;
    }
    let entry: ReceivedRequest | undefined;
    if (record && isObject(parsed)) {
      entry = { api: route.api, body: parsed, headers: req.headers };
      received.push(entry);
      if (route.api === 'openai-chat') requests.push(parsed as ChatRequest);
    }
    const invalid = wire.validate(parsed, req.headers);
    if (invalid) {
      if (entry) entry.rejected = invalid.error.message;
      sendJson(res, 400, invalid);
      return;
    }
    // Every wire's validation rejects a body that is not an object.
    const body = parsed as Record<string, unknown>;
    let view: ScriptRequest | undefined;
    const see = (): ScriptRequest => (view ??= wire.view(body, route));
    if (entry) entry.request = see();
    const model = wire.model(body, route);
    let turn: ScriptTurn;
    try {
      turn = await takeTurn(script, see, turns++);
    } catch (error) {
      const message = error instanceof ScriptError ? error.message : `scripted model: ${String(error)}`;
      sendJson(res, 500, wire.scriptError(message));
      return;
    }
    if (turn.delayMs && !(await pause(turn.delayMs, res))) return;
    const fault = turn.fault;
    if (fault?.type === 'status') {
      sendError(res, wire.statusFault(fault, model));
      return;
    }
    const serial = ++responses;
    const ids = { response: wire.responseId(serial), serial, nextCallId: () => wire.callId(++calls) };
    const resolved = resolveAnswer(turn, ids, model, raw.length);
    const delay = fault?.type === 'slow' ? fault.tokenDelayMs : tokenDelayMs;
    if (wire.streams(body, route)) {
      const streamError = fault?.type === 'error_in_stream' ? fault : undefined;
      const frames = wire.frames(resolved, body, { route, chunkSize, ...(streamError ? { streamError } : {}) });
      await sendStream(res, frames, streamError ? '' : wire.ending(route), fault, delay, route.jsonArray ? JSON_HEADERS : SSE_HEADERS);
      return;
    }
    if (fault?.type === 'cut') {
      res.destroy();
      return;
    }
    if (fault?.type === 'error_in_stream') {
      sendError(res, wire.failure(fault));
      return;
    }
    if (!(await pause(delay, res))) return;
    res.writeHead(200, JSON_HEADERS);
    res.end(wire.json(resolved, body));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    try {
      const route = req.method === 'POST' ? routeOf(path, q === -1 ? '' : target.slice(q + 1)) : undefined;
      if (route !== undefined) return await answer(route, req, res);
      if (req.method === 'GET' && path === '/v1/models') {
        sendJson(res, 200, { object: 'list', data: [{ id: defaultModel, object: 'model', created: 0, owned_by: 'rein' }] });
        return;
      }
      if (path.startsWith('/v1beta/')) {
        sendJson(res, 404, geminiError(404, 'NOT_FOUND', `Invalid URL (${req.method ?? 'GET'} ${path})`));
        return;
      }
      sendJson(res, 404, errorBody(`Invalid URL (${req.method ?? 'GET'} ${path})`, 'invalid_request_error'));
    } catch (error) {
      // A bug here must not hang the client: answer 500 if we still can, else drop the connection.
      if (!res.headersSent) sendJson(res, 500, errorBody(`scripted model: ${String(error)}`, 'server_error'));
      else res.destroy();
    }
  }

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const url = `${origin}/v1`;
  let closing: Promise<void> | undefined;

  return {
    url,
    origin,
    port,
    requests,
    received,
    // resolve.ts: Chat Completions and Responses bases end with /v1; Anthropic's and
    // Gemini's are the bare origin (their adapters append /v1/messages, /v1beta/models/…).
    model: (id, api = 'openai-chat') => ({
      provider: 'scripted',
      id: id ?? defaultModel,
      api,
      baseUrl: api === 'openai-chat' || api === 'openai-responses' ? url : origin,
    }),
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive and in-flight connections would otherwise hold close() open.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
