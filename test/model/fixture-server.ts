/**
 * A real HTTP server on 127.0.0.1 (port 0) that replays recorded provider responses from
 * ../shared/fixtures, or a scripted sequence of responses (status, headers, body, optional
 * connection cut mid-body). Tests must `close()` it (afterEach / afterAll).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The shared fixtures folder, beside the repository (`<repo>/../shared/fixtures/`). */
export const FIXTURES_DIR = new URL('../../../shared/fixtures/', import.meta.url);

/** One response the server sends. */
export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string | string[]>;
  /** The body: one string, or chunks written one after another (Buffers may split a UTF-8 character). */
  body?: string | Array<string | Buffer>;
  /** After writing the body, destroy the socket instead of finishing the response. */
  cut?: boolean;
  /** After writing the body, keep the response open (until the client leaves or the server closes). */
  hold?: boolean;
}

/** A request the server received. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (`undefined` if it is not JSON). */
  json: unknown;
}

/** A running server. */
export interface TestServer {
  /** `http://127.0.0.1:<port>/v1`: use as a model's base URL. */
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

type Script = ScriptedResponse[] | ((request: RecordedRequest, n: number) => ScriptedResponse);

/**
 * Starts a server answering request `n` with `script[n]` (or `script(request, n)`); past the
 * end of an array it answers 500 "no scripted response".
 */
export async function startServer(script: Script): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const request: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json: parseJson(body) };
      const n = requests.push(request) - 1;
      const response =
        typeof script === 'function'
          ? script(request, n)
          : (script[n] ?? {
              status: 500,
              headers: { 'content-type': 'text/plain' },
              body: `fixture server: no response scripted for request ${n}`,
            });
      return send(res, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        // Held responses and the client's idle keep-alive sockets would keep close() waiting.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A base URL where nothing listens (a port just released by a closed server). */
export async function closedPortUrl(): Promise<string> {
  const server = await startServer([]);
  await server.close();
  return server.baseUrl;
}

/**
 * The recorded response of a fixture (path relative to the fixtures folder): its status
 * and headers from manifest.json (without content-encoding / content-length / framing
 * headers: bodies are stored decoded), and its body. `.chunks.jsonl` payload-only
 * recordings are rebuilt as `data: <line>\n\n` frames.
 */
export function fixtureResponse(file: string): ScriptedResponse {
  const entry = manifest().get(file);
  if (entry === undefined) throw new Error(`fixture ${file} is not in manifest.json`);
  const text = readFileSync(new URL(file, FIXTURES_DIR), 'utf8');
  const streamed = file.endsWith('.sse') || file.endsWith('.jsonl');
  const body = file.endsWith('.chunks.jsonl')
    ? text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => `data: ${line}\n\n`)
        .join('')
    : text;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(entry.response?.headers ?? {})) {
    if (!DROPPED_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
    headers['content-type'] = streamed ? 'text/event-stream' : 'application/json';
  }
  return { status: entry.response?.status ?? 200, headers, body };
}

/** Reads a fixture file as text. */
export function readFixture(file: string): string {
  return readFileSync(new URL(file, FIXTURES_DIR), 'utf8');
}

/** Splits a body into byte chunks of `size` (cutting through UTF-8 characters on purpose). */
export function byteChunks(body: string, size: number): Buffer[] {
  const bytes = Buffer.from(body, 'utf8');
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return chunks;
}

/** An SSE body from chunk objects: `data: <json>\n\n` each, then `data: [DONE]` unless `done` is false. */
export function sseBody(chunks: unknown[], done = true): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('') + (done ? 'data: [DONE]\n\n' : '');
}

const DROPPED_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

interface ManifestEntry {
  file: string;
  response?: { status: number; headers: Record<string, string[]> };
}

let manifestCache: Map<string, ManifestEntry> | undefined;

function manifest(): Map<string, ManifestEntry> {
  if (manifestCache === undefined) {
    const parsed = JSON.parse(readFileSync(new URL('manifest.json', FIXTURES_DIR), 'utf8')) as { fixtures: ManifestEntry[] };
    manifestCache = new Map(parsed.fixtures.map((entry) => [entry.file, entry]));
  }
  return manifestCache;
}

async function send(res: ServerResponse, response: ScriptedResponse): Promise<void> {
  res.writeHead(response.status ?? 200, response.headers ?? {});
  const chunks = response.body === undefined ? [] : typeof response.body === 'string' ? [response.body] : response.body;
  for (const chunk of chunks) {
    await new Promise<void>((resolve) => res.write(chunk, () => resolve()));
  }
  if (response.cut) {
    // Headers are flushed by the first write; with no body, flush them before cutting.
    if (chunks.length === 0) res.flushHeaders();
    res.socket?.destroy();
  } else if (!response.hold) {
    res.end();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
