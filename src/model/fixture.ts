/**
 * Real runs as tests: a fixture file holds the model exchanges of a run — each request as
 * sent, each response as received on the wire — with its secrets redacted, and plays them
 * back over the same wire, in order, reporting the first request that differs from the
 * recording.
 *
 * The file is JSON Lines: a first line `{"rein":"fixture","version":1}`, then one exchange
 * per line (`{api, request: {method, url, headers, body}, response: {status, headers,
 * body}}`), appended as each exchange ends, so a run that crashes still leaves what it did.
 *
 * Recording and playback are transports ({@link ModelTransport}): the adapters build and
 * decode exactly what they do against a real server; only the sending changes.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { ReinError } from '../errors.js';
import { displayUrl } from './base-url.js';
import { httpPost, type HttpResponse } from '../http/client.js';
import { isRecord } from './json.js';
import type { ModelApi, ModelTransport, WireRequest } from './types.js';

/** The first line of a fixture file. */
export const FIXTURE_HEADER = { rein: 'fixture', version: 1 } as const;

/** One model exchange of a recording. */
export interface FixtureExchange {
  api: ModelApi;
  request: {
    method: 'POST';
    /** The URL requested, without credentials or secret parameters. */
    url: string;
    /** The request headers, secret ones as `[REDACTED]`. */
    headers: Record<string, string>;
    /** The JSON body as sent (redacted). */
    body: unknown;
  };
  response: {
    status: number;
    headers: Record<string, string>;
    /** The body as received (decoded from gzip and chunking). */
    body: string;
  };
}

/** A recording: its exchanges in order. */
export interface Fixture {
  exchanges: FixtureExchange[];
}

/** What removes secrets from recorded text (a `Redactor` from `createRedactor()` fits). */
export interface FixtureRedactor {
  redactText(text: string): string;
}

/** Headers whose values are credentials. */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
  'set-cookie',
  'openai-organization',
  'openai-project',
  'anthropic-organization-id',
]);
/** Headers that describe the bytes of one transfer, not the response: a playback sends the decoded body. */
const TRANSFER_HEADERS = new Set(['content-encoding', 'transfer-encoding', 'content-length', 'connection', 'keep-alive']);

function headerRecord(headers: OutgoingHttpHeaders | IncomingHttpHeaders, drop: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (value === undefined || drop.has(key)) continue;
    out[key] = SECRET_HEADERS.has(key) ? '[REDACTED]' : Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/** The body of a request as a fixture keeps it: parsed JSON (redacted), or the text when it is not JSON. */
function recordedBody(text: string, redact: FixtureRedactor | undefined): unknown {
  const clean = redact === undefined ? text : redact.redactText(text);
  try {
    return JSON.parse(clean) as unknown;
  } catch {
    return clean;
  }
}

/**
 * A transport that sends through `send` (rein's HTTP client by default) and hands each
 * finished exchange to `onExchange`, redacted: the API key and other credential headers,
 * secret URL parameters, and whatever `redact` finds in the bodies.
 */
export function recordingTransport(
  onExchange: (exchange: FixtureExchange) => void,
  options: { redact?: FixtureRedactor; send?: ModelTransport } = {},
): ModelTransport {
  const { redact } = options;
  const send: ModelTransport =
    options.send ?? ((request, signal, idleMs) => httpPost(request.url, request.headers, request.body, signal, idleMs));
  return async (request, signal, idleMs) => {
    const res = await send(request, signal, idleMs);
    const chunks: string[] = [];
    let written = false;
    const write = (): void => {
      if (written) return;
      written = true;
      const body = chunks.join('');
      onExchange({
        api: request.api,
        request: {
          method: 'POST',
          url: displayUrl(request.url),
          headers: headerRecord(request.headers, new Set(['content-length'])),
          body: recordedBody(request.body, redact),
        },
        response: {
          status: res.status,
          headers: headerRecord(res.headers, TRANSFER_HEADERS),
          body: redact === undefined ? body : redact.redactText(body),
        },
      });
    };
    return {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
      consume: (onChunk) =>
        res
          .consume((chunk) => {
            chunks.push(chunk);
            onChunk(chunk);
          })
          .then(write, (error: unknown) => {
            write();
            throw error;
          }),
      text: (maxChars) =>
        res.text(maxChars).then((text) => {
          chunks.push(text);
          write();
          return text;
        }),
      drain: () => {
        res.drain();
        write();
      },
      destroy: () => {
        res.destroy();
        write();
      },
    };
  };
}

/**
 * Appends exchanges to the fixture file at `path` (created, or emptied, with its header
 * line now), one line each as it ends.
 */
export function fixtureWriter(path: string): (exchange: FixtureExchange) => void {
  try {
    writeFileSync(path, `${JSON.stringify(FIXTURE_HEADER)}\n`);
  } catch (error) {
    throw new ReinError('config', 'fatal', `cannot write the fixture file ${path}: ${(error as Error).message}`, { cause: error });
  }
  return (exchange) => appendFileSync(path, `${JSON.stringify(exchange)}\n`);
}

/**
 * A transport that records every exchange to the fixture file at `path`: the library's
 * way to record a run, as `rein run --record` does.
 *
 * @example
 * const agent = new Agent({ model: 'openai/gpt-4o', tools, modelOptions: { transport: recordTo('run.fixture.jsonl', { redact: createRedactor() }) } });
 */
export function recordTo(path: string, options: { redact?: FixtureRedactor } = {}): ModelTransport {
  return recordingTransport(fixtureWriter(path), options);
}

const APIS: readonly ModelApi[] = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'];

/** Reads a fixture file's text; a line that is not an exchange is refused with its number. */
export function parseFixture(text: string, source = 'the fixture'): Fixture {
  const lines = text.split('\n');
  const first = lines[0]?.trim() ?? '';
  let header: unknown;
  try {
    header = JSON.parse(first);
  } catch {
    header = undefined;
  }
  if (!isRecord(header) || header.rein !== 'fixture')
    throw new ReinError(
      'config',
      'fatal',
      `${source} is not a rein fixture: its first line must be ${JSON.stringify(FIXTURE_HEADER)} (record one with rein run --record <file>)`,
    );
  if (header.version !== FIXTURE_HEADER.version)
    throw new ReinError(
      'config',
      'fatal',
      `${source} is a fixture of version ${JSON.stringify(header.version)}; this rein reads version ${FIXTURE_HEADER.version}`,
    );
  const exchanges: FixtureExchange[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new ReinError('config', 'fatal', `${source}, line ${i + 1}: not valid JSON: ${(error as Error).message}`);
    }
    const problem = exchangeProblem(value);
    if (problem !== undefined) throw new ReinError('config', 'fatal', `${source}, line ${i + 1}: ${problem}`);
    exchanges.push(value as FixtureExchange);
  }
  return { exchanges };
}

function exchangeProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'an exchange must be an object {api, request, response}';
  if (!APIS.includes(value.api as ModelApi)) return `"api" must be one of ${APIS.join(', ')}`;
  if (!isRecord(value.request) || typeof value.request.url !== 'string' || !('body' in value.request))
    return '"request" must be {method, url, headers, body}';
  const response = value.response;
  if (!isRecord(response) || typeof response.status !== 'number' || typeof response.body !== 'string')
    return '"response" must be {status, headers, body} with a number status and a string body';
  if (response.headers !== undefined && !isRecord(response.headers)) return '"response.headers" must be an object';
  return undefined;
}

/** Reads the fixture file at `path`. */
export function loadFixture(path: string): Fixture {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ReinError(
      'config',
      'fatal',
      `${path}: ${code === 'ENOENT' ? 'no such fixture file' : `the fixture file cannot be read: ${(error as Error).message}`}`,
      { cause: error },
    );
  }
  return parseFixture(text, path);
}

/** The first request of a playback that differs from its recording. */
export interface FixtureDivergence {
  /** The request's position, from 1. */
  request: number;
  /** Where it differs: `endpoint`, a JSON path into the body (`messages[2].content`), or `count` for a request past the recording. */
  at: string;
  expected: string;
  actual: string;
  /** The whole sentence. */
  message: string;
}

/** A response of a playback. */
export interface FixtureAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Plays a recording back: request n is compared with the recording's request n (endpoint
 * and body) and answered with its response. The first request that differs is kept as
 * {@link divergence} and answered, as every later one, with HTTP 400 saying where it
 * differs — the agent changed, and the recording cannot say what the model would answer.
 */
export class FixturePlayer {
  /** Requests answered so far. */
  served = 0;
  divergence: FixtureDivergence | undefined;

  constructor(
    private readonly fixture: Fixture,
    private readonly options: { redact?: FixtureRedactor; onDivergence?: (divergence: FixtureDivergence) => void } = {},
  ) {}

  /** Exchanges of the recording no request has asked for yet. */
  get left(): number {
    return Math.max(0, this.fixture.exchanges.length - this.served);
  }

  /** The answer to a request for `path` (with its query) with `body`. */
  answer(path: string, body: string): FixtureAnswer {
    const n = this.served++;
    if (this.divergence !== undefined) return refusal(this.divergence);
    const recorded = this.fixture.exchanges[n];
    const divergence = recorded === undefined ? pastTheEnd(n, this.fixture.exchanges.length) : this.differs(n, recorded, path, body);
    if (divergence !== undefined) {
      this.divergence = divergence;
      this.options.onDivergence?.(divergence);
      return refusal(divergence);
    }
    const response = (recorded as FixtureExchange).response;
    return { status: response.status, headers: response.headers ?? {}, body: response.body };
  }

  private differs(n: number, recorded: FixtureExchange, path: string, body: string): FixtureDivergence | undefined {
    const expectedEndpoint = endpointOf(pathOf(recorded.request.url));
    const actualEndpoint = endpointOf(path);
    if (expectedEndpoint !== actualEndpoint) return divergenceAt(n, 'endpoint', expectedEndpoint, actualEndpoint);
    const difference = firstDifference(recorded.request.body, recordedBody(body, this.options.redact), '');
    return difference === undefined
      ? undefined
      : divergenceAt(n, difference.path === '' ? 'body' : difference.path, difference.expected, difference.actual);
  }
}

function pastTheEnd(n: number, count: number): FixtureDivergence {
  return divergenceAt(n, 'count', `${count} request${count === 1 ? '' : 's'}`, `request ${n + 1}`);
}

function divergenceAt(n: number, at: string, expected: string, actual: string): FixtureDivergence {
  const message =
    at === 'count'
      ? `request ${n + 1} goes past the recording, which holds ${expected}`
      : `request ${n + 1} differs from the recording at ${at}: expected ${expected}, got ${actual}`;
  return { request: n + 1, at, expected, actual, message };
}

/** The answer to a request that differs: an HTTP 400 every wire's error reader understands. */
function refusal(divergence: FixtureDivergence): FixtureAnswer {
  const message = `rein fixture: ${divergence.message}`;
  return {
    status: 400,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: { message, type: 'invalid_request_error', status: 'INVALID_ARGUMENT' } }),
  };
}

function pathOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  } catch {
    return url;
  }
}

/**
 * The part of a path that names the API call, whatever the base URL before it:
 * `chat/completions`, `responses`, `messages`, `models/<id>:streamGenerateContent`.
 */
function endpointOf(path: string): string {
  const bare = path.replace(/[?#].*$/, '');
  const gemini = /models\/[^/]+:\w+$/.exec(bare);
  if (gemini !== null) return gemini[0];
  for (const tail of ['chat/completions', 'responses', 'messages']) if (bare.endsWith(`/${tail}`)) return tail;
  return bare;
}

/** The first place two JSON values differ, depth first, object keys in the recording's order then the new ones. */
export function firstDifference(
  expected: unknown,
  actual: unknown,
  path: string,
): { path: string; expected: string; actual: string } | undefined {
  if (Object.is(expected, actual)) return undefined;
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const length = Math.max(expected.length, actual.length);
    for (let i = 0; i < length; i++) {
      if (i >= expected.length) return { path: `${path}[${i}]`, expected: '(nothing)', actual: shown(actual[i]) };
      if (i >= actual.length) return { path: `${path}[${i}]`, expected: shown(expected[i]), actual: '(nothing)' };
      const inner = firstDifference(expected[i], actual[i], `${path}[${i}]`);
      if (inner !== undefined) return inner;
    }
    return undefined;
  }
  if (isRecord(expected) && isRecord(actual)) {
    for (const key of Object.keys(expected)) {
      const at = path === '' ? key : `${path}.${key}`;
      if (!Object.hasOwn(actual, key)) return { path: at, expected: shown(expected[key]), actual: '(nothing)' };
      const inner = firstDifference(expected[key], actual[key], at);
      if (inner !== undefined) return inner;
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key))
        return { path: path === '' ? key : `${path}.${key}`, expected: '(nothing)', actual: shown(actual[key]) };
    }
    return undefined;
  }
  return { path, expected: shown(expected), actual: shown(actual) };
}

/** A value as a divergence quotes it: JSON, cut at 200 characters. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** A response made of a recorded answer, for the adapters to decode as if it came from a server. */
export function answerResponse(answer: FixtureAnswer): HttpResponse {
  const headers: Record<string, string> = { ...answer.headers };
  return {
    status: answer.status,
    statusText: '',
    headers,
    consume: (onChunk) => {
      if (answer.body !== '') onChunk(answer.body);
      return Promise.resolve();
    },
    text: (maxChars) => Promise.resolve(maxChars === undefined ? answer.body : answer.body.slice(0, maxChars)),
    drain: () => undefined,
    destroy: () => undefined,
  };
}

/** A transport that answers from `player` in the process, through the same adapters and decoders, with no server. */
export function playbackTransport(player: FixturePlayer): ModelTransport {
  return (request: WireRequest) => Promise.resolve(answerResponse(player.answer(request.url.pathname + request.url.search, request.body)));
}
