/**
 * The request/response flow every adapter shares: build the request, POST it with rein's
 * keep-alive HTTP client (idle timeout, abort), then hand the body to the wire's decoder,
 * as server-sent events or as one JSON body, and turn every failure into exactly one
 * `error` event. Each adapter supplies only what differs: URL, headers, body, decoder and
 * error classification.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { createParser } from 'eventsource-parser';
import { MAX_ANSWER_CHARS, MAX_WIRE_DEPTH, nestsDeeperThan } from '../json-limits.js';
import { unwatchIdle, watchIdle, type IdleWatch } from '../../http/idle-watchdog.js';
import type { EventSourceParser, ParseError } from 'eventsource-parser';
import { ReinError } from '../../errors.js';
import { EventStream } from '../event-stream.js';
import { endWithError } from '../failed-stream.js';
import { httpPost } from '../../http/client.js';
import type { HttpResponse } from '../../http/client.js';
import { errorFromNetwork, errorFromStreamPayload } from '../http-errors.js';
import { displayUrl } from '../base-url.js';
import type { ErrorContext } from '../http-errors.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../types.js';
import type { AssistantMessage, AssistantStream, AssistantStreamEvent, ModelApi, ModelRef, StreamOptions } from '../types.js';

/** What a wire's decoder offers the runner. It ends `out` with one `done` or `error`. */
export interface WireDecoder {
  /** True once the terminal event was pushed. */
  readonly finished: boolean;
  /** Set while the SSE parser is flushed at the end of the body: a truncated last frame is a cut, not bad data. */
  flushing: boolean;
  /** The server accepted the request: emit `start`. */
  start(): void;
  fail(error: ReinError): void;
  /** The body ended (cleanly, or cut when `cause` is given) before the decoder saw its end. */
  streamEnded(cause?: unknown): void;
}

/** One adapter's part of a request. */
export interface WireSpec<D extends WireDecoder> {
  api: ModelApi;
  /** The URL errors name before the real one is known. */
  /** The base URL as messages quote it: already without credentials (`displayUrl`). */
  errorUrl: string;
  makeDecoder: (out: EventStream<AssistantStreamEvent, AssistantMessage>, ctx: ErrorContext) => D;
  /** Builds the request; may throw (a bad base URL), which ends the stream with an error. */
  prepare: () => { url: URL; headers: OutgoingHttpHeaders; body: string; errorUrl?: string };
  /** One server-sent event. */
  onEvent: (decoder: D, event: string | undefined, data: string) => void;
  /** A whole JSON body (an object, or an array when `bodyMayBeArray`). */
  onBody: (decoder: D, body: unknown) => void;
  bodyMayBeArray?: boolean;
  errorFromResponse: (status: number, headers: HttpResponse['headers'], text: string, ctx: ErrorContext) => ReinError;
  /**
   * A refusal the adapter can answer by changing a parameter the server does not take
   * (Chat Completions: `stream_options`, `max_tokens`): true when `prepare` now builds a
   * request the server takes, which is then sent once more.
   */
  adjustAfterRefusal?: (status: number, text: string) => boolean;
  /** Said after "answered with an HTML page, not the API:", e.g. "check the base URL (it usually ends with /v1)". */
  htmlHint: string;
}

/** How many times one request may be adjusted after a refusal and sent again. */
const MAX_ADJUSTMENTS = 3;

/** Streams one response of `model` through `spec`. Never throws. */
export function streamWire<D extends WireDecoder>(model: ModelRef, options: StreamOptions, spec: WireSpec<D>): AssistantStream {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  run(out, model, options, spec).catch((error: unknown) => {
    // `run` handles every expected failure itself; this only guarantees that a bug in
    // rein still ends the stream instead of leaving the consumer waiting forever.
    if (out.isEnded) return;
    endWithError(
      out,
      model,
      new ReinError('internal', 'fatal', `The ${spec.api} adapter failed: ${String(error)}`, { cause: error }),
      spec.api,
    );
  });
  return out;
}

async function run<D extends WireDecoder>(
  out: EventStream<AssistantStreamEvent, AssistantMessage>,
  model: ModelRef,
  options: StreamOptions,
  spec: WireSpec<D>,
): Promise<void> {
  const { signal } = options;
  const stream = options.stream !== false;
  const ctx: ErrorContext = { provider: model.provider, model: model.id, url: spec.errorUrl };
  const decoder = spec.makeDecoder(out, ctx);
  let started = false;
  try {
    let res: HttpResponse;
    // Each adjustment changes a parameter the request carried, so a server cannot make
    // rein ask for ever; the cap is a safeguard on top of that.
    for (let asked = 0; ; asked++) {
      const request = spec.prepare();
      const extra = options.requestHeaders?.();
      if (extra !== undefined) Object.assign(request.headers, extra);
      // Every adapter gives the endpoint as messages show it (base-url.ts: no user, password
      // or secret parameter), made once per base URL; a spec without one gets it made here.
      ctx.url = request.errorUrl ?? displayUrl(request.url);
      const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
      res =
        options.transport === undefined
          ? await httpPost(request.url, request.headers, request.body, signal, idleMs)
          : await options.transport({ api: spec.api, url: request.url, headers: request.headers, body: request.body }, signal, idleMs);
      if (res.status >= 200 && res.status < 300) break;
      const text = await errorBodyText(res);
      if (asked < MAX_ADJUSTMENTS && spec.adjustAfterRefusal?.(res.status, text)) continue;
      ctx.urlCredentialsNotSent = urlCredentialsNotSent(request.url, request.headers);
      decoder.fail(spec.errorFromResponse(res.status, res.headers, text, ctx));
      return;
    }
    if (res.status === 204 || res.status === 205) {
      // Nothing to read, and nothing to retry for: the server took the request and means it.
      decoder.fail(
        new ReinError(
          'invalid_response',
          'fatal',
          `${ctx.url} answered ${res.status} ${res.statusText || (res.status === 204 ? 'No Content' : 'Reset Content')} with no body, where the model's answer should be: check the base URL (it must be the model API's) and the server's log`,
          { status: res.status },
        ),
      );
      return;
    }
    decoder.start();
    started = true;
    const contentType = res.headers['content-type'] ?? '';
    // The label is a hint: some servers ignore `stream: true`, some mislabel (a Flask
    // `Response(gen())` is `text/html`); the body's first character decides what it is.
    const labelled = contentType.includes('text/html') ? 'html' : !stream || contentType.includes('json') ? 'json' : 'sse';
    await decodeBody(
      res,
      decoder,
      ctx,
      spec,
      labelled,
      options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      options.maxAnswerChars ?? MAX_ANSWER_CHARS,
    );
  } catch (error) {
    if (decoder.finished) return;
    if (signal?.aborted) decoder.fail(new ReinError('aborted', 'fatal', 'The model request was aborted', { cause: signal.reason }));
    else if (started && stream && !isUndecodable(error)) decoder.streamEnded(error);
    else decoder.fail(errorFromNetwork(error, ctx));
  }
}

/** A body in a coding rein cannot decode: no cut, the same on every attempt (http-inflate.ts). */
function isUndecodable(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'ERR_CONTENT_ENCODING';
}

/**
 * The body of a refusal. The status decides what the refusal is, so a body rein cannot read
 * (a coding it cannot decode, damaged compressed data) does not hide it: the refusal is
 * classified by its status with a note in place of the server's words.
 */
async function errorBodyText(res: HttpResponse): Promise<string> {
  try {
    return await res.text();
  } catch (error) {
    if (!isUndecodable(error) && (error as { code?: unknown } | undefined)?.code !== 'EBADBODY') throw error;
    return `(a body rein could not read: ${(error as Error).message})`;
  }
}

/**
 * Whether the URL's user and password were left out of the request: `httpPost` sends them
 * as Basic auth only when the request has no Authorization header (the API key) of its own.
 */
function urlCredentialsNotSent(url: URL, headers: OutgoingHttpHeaders): boolean {
  if (url.username === '' && url.password === '') return false;
  for (const name in headers) if (name.toLowerCase() === 'authorization' && headers[name] !== undefined) return true;
  return false;
}

/**
 * How a 200 body is read: as server-sent events, as one JSON document, or as a web page
 * where the API should be (the base URL points at a UI or a login page), which fails.
 */
type BodyKind = 'sse' | 'json' | 'html';

/** How much of a web page the error quotes. */
const PAGE_CHARS = 200;

/**
 * Reads a 200 body as what its first characters show it is; `labelled` (from the request
 * and the Content-Type) decides only when they do not tell. Servers mislabel both ways:
 * Foundry Local streams events as `application/json`; gateways answer a streamed request
 * with a JSON completion or error object as `text/event-stream` or `text/plain`; a Flask
 * generator streams as `text/html`. Only a body that begins with `<` is a web page. Once
 * the kind is known each chunk costs one comparison more than feeding the parser directly.
 */
async function decodeBody<D extends WireDecoder>(
  res: HttpResponse,
  decoder: D,
  ctx: ErrorContext,
  spec: WireSpec<D>,
  labelled: BodyKind,
  idleMs: number,
  maxChars: number,
): Promise<void> {
  // The connection's own watchdog (http.ts) hears every byte, so SSE comments and pings
  // would keep it quiet for ever; this one hears only events that carry data.
  const quiet =
    idleMs > 0 && Number.isFinite(idleMs)
      ? watchIdle(idleMs, () => {
          decoder.fail(
            new ReinError(
              'timeout',
              'transient',
              `${ctx.url}: no data from the server for ${idleMs} ms (keep-alive comments and pings are not data)`,
            ),
          );
          res.destroy();
        })
      : undefined;
  try {
    await decodeBodyWatched(res, decoder, ctx, spec, labelled, quiet, maxChars);
  } finally {
    if (quiet) unwatchIdle(quiet);
  }
}

async function decodeBodyWatched<D extends WireDecoder>(
  res: HttpResponse,
  decoder: D,
  ctx: ErrorContext,
  spec: WireSpec<D>,
  labelled: BodyKind,
  quiet: IdleWatch | undefined,
  maxChars: number,
): Promise<void> {
  let kind: BodyKind | undefined;
  /** The text before the kind is known (a few bytes: the first chunk nearly always tells). */
  let head = '';
  const json: string[] = [];
  let page = '';
  const events = new EventFeed(decoder, ctx, spec, quiet);
  const webPage = (): void => {
    // The page as it began, whitespace collapsed.
    const began = page.slice(0, PAGE_CHARS).replace(/\s+/g, ' ');
    decoder.fail(
      new ReinError(
        'invalid_response',
        'fatal',
        `${ctx.url} answered with an HTML page, not the API: ${spec.htmlHint}. The page began: ${began}`,
      ),
    );
  };
  const take = (text: string): void => {
    if (kind === 'sse') events.feed(text);
    else if (kind === 'json') {
      json.push(text);
      if (quiet) quiet.last = Date.now();
    } else {
      page += text;
      if (page.length >= PAGE_CHARS) webPage();
    }
  };
  let received = 0;
  await res.consume((chunk) => {
    received += chunk.length;
    if (received > maxChars && !decoder.finished) {
      decoder.fail(
        new ReinError(
          'answer_too_long',
          'fatal',
          `${ctx.url} sent an answer longer than ${maxChars.toLocaleString('en-US')} characters; it was cut there (what came before is kept)`,
        ),
      );
      res.destroy();
      return;
    }
    if (kind === 'sse') events.feed(chunk);
    else if (kind === 'json') json.push(chunk);
    else if (kind === 'html') take(chunk);
    else {
      head += chunk;
      const start = significantStart(head);
      kind = sniff(head, start, labelled);
      if (kind !== undefined) take(head.slice(start));
    }
    // After the end or an error the rest is not wanted: it is drained (so that the
    // connection is reused) without waiting for it, which a server may never send.
    if (decoder.finished) res.drain();
  });
  if (decoder.finished) return;
  if (kind === undefined) {
    // Only blanks, or the start of a field name: read it as labelled.
    kind = labelled;
    take(head.slice(significantStart(head)));
    if (decoder.finished) return;
  }
  if (kind === 'sse') events.end();
  else if (kind === 'json') decodeJson(json.join(''), decoder, ctx, spec);
  else webPage();
}

/** The fields an event stream begins with (`:` starts a comment). */
const SSE_FIELDS = ['data:', 'event:', 'id:', 'retry:'];

/** What `text` is from its character at `start`; `undefined` while it may still be either. */
function sniff(text: string, start: number, labelled: BodyKind): BodyKind | undefined {
  if (start === text.length) return undefined;
  const first = text.charCodeAt(start);
  if (first === 0x7b || first === 0x5b) return 'json'; // `{`, `[`
  if (first === 0x3a) return 'sse'; // `:`, a comment (DeepSeek's keep-alive)
  if (first === 0x3c) return 'html'; // `<`: markup, whatever the label says
  for (const field of SSE_FIELDS) {
    const have = Math.min(field.length, text.length - start);
    if (text.startsWith(field.slice(0, have), start)) return have === field.length ? 'sse' : undefined;
  }
  return labelled;
}

/** Where the body's content starts: after whitespace and a byte order mark. */
function significantStart(text: string): number {
  let at = 0;
  for (; at < text.length; at++) {
    const c = text.charCodeAt(at);
    // The SSE spec strips one leading U+FEFF; eventsource-parser looks for its UTF-8 bytes, not the decoded character.
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09 && c !== 0xfeff) break;
  }
  return at;
}

/** Server-sent events to the wire's decoder. */
class EventFeed<D extends WireDecoder> {
  private readonly parser: EventSourceParser;

  constructor(
    private readonly decoder: D,
    private readonly ctx: ErrorContext,
    spec: WireSpec<D>,
    quiet?: IdleWatch,
  ) {
    // eventsource-parser also takes Gemini's `\r\n\r\n` separators and comment lines. It
    // reports lines of unknown fields to `onError`, which costs nothing on the data lines.
    this.parser = createParser({
      onEvent: (event) => {
        // An empty event or Anthropic's `ping` is a keep-alive too, not data.
        if (quiet && event.event !== 'ping' && event.data.trim() !== '') quiet.last = Date.now();
        if (tooDeep(event.data)) decoder.fail(tooDeepError(ctx));
        else spec.onEvent(decoder, event.event, event.data);
      },
      onError: (error) => this.unknownField(error),
    });
  }

  feed(text: string): void {
    try {
      this.parser.feed(text);
    } catch (error) {
      // Runs inside a stream 'data' listener: an exception here would be uncaught.
      this.decoder.fail(new ReinError('internal', 'fatal', `Failed to decode the stream: ${String(error)}`, { cause: error }));
    }
  }

  /** The body ended. */
  end(): void {
    if (this.decoder.finished) return;
    // A last event may lack its blank line; dispatch it (a truncated one is ignored).
    this.decoder.flushing = true;
    this.feed('\n\n');
    this.decoder.streamEnded();
  }

  /**
   * llama.cpp's server reports a failure inside a 200 stream as an `error:` field (not an
   * `event: error` frame), which the SSE spec says to ignore; it then sends `data: [DONE]`.
   */
  private unknownField(error: ParseError): void {
    if (error.type !== 'unknown-field' || error.field !== 'error' || this.decoder.finished) return;
    const value = error.value ?? '';
    let payload: unknown = value;
    try {
      payload = JSON.parse(value);
    } catch {
      // not JSON: quote the text
    }
    this.decoder.fail(errorFromStreamPayload(payload, this.ctx));
  }
}

/** JSON nested past {@link MAX_WIRE_DEPTH}: refused before a decoder (or what it hands on) recurses into it. */
function tooDeep(text: string): boolean {
  return nestsDeeperThan(text, MAX_WIRE_DEPTH);
}

function tooDeepError(ctx: ErrorContext): ReinError {
  return new ReinError(
    'invalid_response',
    'transient',
    `${ctx.url} sent JSON nested more than ${MAX_WIRE_DEPTH} levels deep; no model answer is shaped so`,
  );
}

function decodeJson<D extends WireDecoder>(text: string, decoder: D, ctx: ErrorContext, spec: WireSpec<D>): void {
  if (tooDeep(text)) {
    decoder.fail(tooDeepError(ctx));
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (typeof body !== 'object' || body === null || (Array.isArray(body) && !spec.bodyMayBeArray)) {
    decoder.fail(
      new ReinError(
        'invalid_response',
        'transient',
        `${ctx.url} answered 200 with a body that is not a JSON object: ${text.slice(0, 200)}`,
      ),
    );
    return;
  }
  spec.onBody(decoder, body);
}
