/**
 * The scripted model server: a real HTTP server speaking the OpenAI Chat Completions wire
 * format, answering from a script. Tests, the offline demo and the benchmark talk to it
 * exactly as they would to a provider, so the whole adapter → loop path is exercised.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelRef } from '../types.js';
import { ScriptError, takeTurn, type ChatRequest, type Fault, type Script, type ScriptTurn } from './script.js';
import { validateChatRequest } from './validate.js';
import { completionBody, errorBody, resolveAnswer, statusErrorBody, streamFrames, type Answer } from './wire.js';

/** Options of {@link startScriptedServer}. */
export interface ScriptedServerOptions {
  script: Script;
  /** Default 0: any free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Delay between streamed chunks for every turn (a `slow` fault overrides it). Default 0. */
  tokenDelayMs?: number;
  /** Characters of text or argument JSON per delta. Default 12, so streams have several deltas. */
  chunkSize?: number;
  /** The model id of {@link ScriptedServer.model} and `GET /v1/models`. Default `scripted`. */
  model?: string;
  /**
   * Keep every request body in {@link ScriptedServer.requests}. Default true; a long-running
   * server (the benchmark's) turns it off so it does not hold every history it was sent.
   */
  recordRequests?: boolean;
}

/** A running scripted model server. */
export interface ScriptedServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:54321/v1`. */
  url: string;
  port: number;
  /**
   * Every chat request body received (parsed), in arrival order, including those rejected
   * with HTTP 400 (empty when `recordRequests` is false).
   */
  requests: ChatRequest[];
  /** A model reference pointing at this server. */
  model(id?: string): ModelRef;
  /** Stops listening and drops every open connection (keep-alive or mid-stream). */
  close(): Promise<void>;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
const JSON_HEADERS = { 'content-type': 'application/json' };
const DONE = 'data: [DONE]\n\n';

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { ...JSON_HEADERS, ...headers });
  res.end(JSON.stringify(body));
}

/** Resolves true after `ms`, or false as soon as the connection closes (so close() never waits). */
function pause(ms: number, res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(true);
    }, ms);
    res.once('close', onClose);
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Ends the connection mid-body: no terminating chunk, no `[DONE]`, like a dropped proxy. */
function cut(res: ServerResponse, payload: string): void {
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  if (payload) res.write(payload);
  const socket = res.socket;
  // end() first so what was written reaches the client, then destroy: the socket is gone.
  if (socket) socket.end(() => socket.destroy());
  else res.destroy();
}

function sendStatusFault(res: ServerResponse, fault: Extract<Fault, { type: 'status' }>, model: string): void {
  const headers: Record<string, string> = {};
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs);
  if (typeof fault.body === 'string') {
    res.writeHead(fault.status, { 'content-type': 'text/plain', ...headers });
    res.end(fault.body);
    return;
  }
  sendJson(res, fault.status, fault.body ?? statusErrorBody(fault.status, model), headers);
}

async function sendStream(res: ServerResponse, answer: Answer, request: ChatRequest, chunkSize: number, tokenDelayMs: number): Promise<void> {
  const fault = answer.turn.fault;
  const frames = streamFrames(answer, {
    chunkSize,
    includeUsage: request.stream_options?.include_usage === true,
    ...(fault?.type === 'error_in_stream' ? { streamError: fault } : {}),
  });
  if (fault?.type === 'cut') {
    cut(res, frames.slice(0, Math.max(0, fault.afterChunks)).join(''));
    return;
  }
  const ending = fault?.type === 'error_in_stream' ? '' : DONE;
  const delay = fault?.type === 'slow' ? fault.tokenDelayMs : tokenDelayMs;
  res.writeHead(200, SSE_HEADERS);
  if (delay <= 0) {
    // One write for the whole stream: the cheap path the benchmark takes.
    res.end(frames.join('') + ending);
    return;
  }
  let first = true;
  for (const frame of frames) {
    if (!first && !(await pause(delay, res))) return;
    first = false;
    res.write(frame);
  }
  if (await pause(delay, res)) res.end(ending);
}

/**
 * Starts a scripted model server on 127.0.0.1 (a free port by default).
 *
 * `POST /v1/chat/completions` validates the request like OpenAI (HTTP 400 on an invalid
 * history), takes the script's next turn and answers it streamed (SSE, honouring
 * `stream_options.include_usage`) or as one JSON body; `GET /v1/models` lists the model.
 * A list script that runs out answers HTTP 500 "scripted model: script exhausted after N turns".
 *
 * @example
 * import { startScriptedServer, text, toolCall } from 'rein/testing';
 *
 * const server = await startScriptedServer({
 *   script: [toolCall('read_file', { path: 'notes.txt' }), text('The notes say hello.')],
 * });
 * try {
 *   const agent = new Agent({ model: server.model(), tools: [readFile] });
 *   await agent.run('What do the notes say?');
 *   expect(server.requests[1]?.messages.at(-1)?.role).toBe('tool');
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
  const record = options.recordRequests ?? true;
  let turns = 0;
  let calls = 0;
  let responses = 0;
  const nextCallId = (): string => `call_${++calls}`;

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      sendJson(res, 400, errorBody('We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.', 'invalid_request_error'));
      return;
    }
    if (record && typeof body === 'object' && body !== null && !Array.isArray(body)) requests.push(body as ChatRequest);
    const invalid = validateChatRequest(body);
    if (invalid) {
      sendJson(res, 400, invalid);
      return;
    }
    // Validated above: model and messages are present and well-formed.
    const request = body as ChatRequest;
    let turn: ScriptTurn;
    try {
      turn = await takeTurn(script, request, turns++);
    } catch (error) {
      const message = error instanceof ScriptError ? error.message : `scripted model: ${String(error)}`;
      sendJson(res, 500, errorBody(message, 'server_error', 'script_error'));
      return;
    }
    if (turn.delayMs && !(await pause(turn.delayMs, res))) return;
    const fault = turn.fault;
    if (fault?.type === 'status') {
      sendStatusFault(res, fault, request.model);
      return;
    }
    const answer = resolveAnswer(turn, { response: `chatcmpl-scripted-${++responses}`, nextCallId }, request.model, raw.length);
    if (request.stream === true) {
      await sendStream(res, answer, request, chunkSize, tokenDelayMs);
      return;
    }
    if (fault?.type === 'cut') {
      res.destroy();
      return;
    }
    if (fault?.type === 'error_in_stream') {
      sendJson(res, 500, errorBody(fault.message, 'server_error', fault.code ?? null));
      return;
    }
    const delay = fault?.type === 'slow' ? fault.tokenDelayMs : tokenDelayMs;
    if (!(await pause(delay, res))) return;
    res.writeHead(200, JSON_HEADERS);
    res.end(completionBody(answer));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0];
    try {
      if (req.method === 'POST' && path === '/v1/chat/completions') return await chat(req, res);
      if (req.method === 'GET' && path === '/v1/models') {
        sendJson(res, 200, { object: 'list', data: [{ id: defaultModel, object: 'model', created: 0, owned_by: 'rein' }] });
        return;
      }
      sendJson(res, 404, errorBody(`Invalid URL (${req.method ?? 'GET'} ${path ?? '/'})`, 'invalid_request_error'));
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
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`;
  let closing: Promise<void> | undefined;

  return {
    url,
    port,
    requests,
    model: (id) => ({ provider: 'scripted', id: id ?? defaultModel, api: 'openai-chat', baseUrl: url }),
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
