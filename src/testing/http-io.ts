/**
 * The HTTP plumbing of the scripted server: JSON and SSE responses, pauses that end when the
 * client goes away, and connections dropped on purpose.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Fault } from './script.js';
import type { HttpAnswer } from './wire-format.js';

/** Headers of a streamed answer. */
export const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
/** Headers of a JSON answer. */
export const JSON_HEADERS = { 'content-type': 'application/json' };

/** Sends `body` as JSON, unless the client is already gone. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { ...JSON_HEADERS, ...headers });
  res.end(JSON.stringify(body));
}

/** Resolves true after `ms`, or false as soon as the connection closes (so close() never waits). */
export function pause(ms: number, res: ServerResponse): Promise<boolean> {
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

/** The whole request body as text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Ends the connection mid-body: no terminating chunk, no `[DONE]`, like a dropped proxy. */
function cut(res: ServerResponse, payload: string, headers: Record<string, string>): void {
  res.writeHead(200, headers);
  res.flushHeaders();
  const socket = res.socket;
  if (!socket) {
    res.destroy();
    return;
  }
  // end() once the write is out (Node 24 drops a response write still queued when the socket
  // is ended under it), so what was written reaches the client; then destroy: the socket is gone.
  const drop = (): void => {
    socket.end(() => socket.destroy());
  };
  if (payload) res.write(payload, drop);
  else drop();
}

/** Sends an HTTP error; a string body goes out verbatim as `text/plain`, as proxies send it. */
export function sendError(res: ServerResponse, answer: HttpAnswer): void {
  if (typeof answer.body === 'string') {
    if (res.destroyed) return;
    res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
    res.end(answer.body);
    return;
  }
  sendJson(res, answer.status, answer.body, answer.headers);
}

/** Sends `frames` with `delay` between them (one write when there is none), then `ending`. */
export async function sendStream(
  res: ServerResponse,
  frames: string[],
  ending: string,
  fault: Fault | undefined,
  delay: number,
  headers: Record<string, string>,
): Promise<void> {
  if (fault?.type === 'cut') {
    cut(res, frames.slice(0, Math.max(0, fault.afterChunks)).join(''), headers);
    return;
  }
  res.writeHead(200, headers);
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
