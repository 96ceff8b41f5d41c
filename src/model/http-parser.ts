/**
 * An incremental HTTP/1.x response parser: the head, then the body as Content-Length,
 * chunked, or read until the connection closes (RFC 9112 §6.3). It works on the socket's
 * Buffers without copying them where it can, and hands the body over once per socket read
 * (not once per chunk): a streamed model answer arrives as many small chunks, and every
 * call made per chunk is paid on every request.
 */

/** A response head (after any 1xx interim responses, which are skipped). */
export interface ResponseHead {
  status: number;
  statusText: string;
  /** `1.0` or `1.1`. */
  version: string;
  /** Lower-case names; a header sent more than once is joined with `, `. */
  headers: Record<string, string>;
}

/** Where a parsed response goes. */
export interface ResponseSink {
  /** The final head; called once. */
  onHead(head: ResponseHead): void;
  /** Body bytes (already de-chunked), one call per `execute` that carried body bytes. */
  onBody(body: Buffer): void;
  /**
   * The body is complete. `reusable`: the connection may carry another request (keep-alive,
   * a delimited body, and no stray bytes after it).
   */
  onEnd(reusable: boolean): void;
}

/** A response that breaks HTTP/1.1: the connection cannot be trusted any more. */
export class HttpParseError extends Error {
  readonly code = 'HPE_INVALID_RESPONSE';

  constructor(
    /** What is wrong, without the `Parse Error:` prefix of the message. */
    readonly detail: string,
    /**
     * Set when the bytes are not HTTP at all (another protocol on the port): what arrived,
     * quoted and shortened, with a guess at what it is when the bytes tell.
     */
    readonly received?: string,
  ) {
    super(`Parse Error: ${detail}`);
    this.name = 'HttpParseError';
  }
}

/**
 * Longest head accepted (status line and headers). Node's default `maxHeaderSize` is 16 KB,
 * but a proxy's or load balancer's cookies alone can pass that (a 20 KB `set-cookie` is
 * seen), and a head rein cannot read fails every attempt alike; 64 KB still bounds the
 * memory a broken server can make rein hold.
 */
export const MAX_HEAD_BYTES = 64 * 1024;

/** Longest status line that is waited for: a real one is about 20 bytes. */
const MAX_STATUS_LINE_BYTES = 1024;

const CR = 13;
const LF = 10;

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'until-close' | 'done';

/** Parses one response. Feed it every byte the connection receives, then `eof()` when it closes. */
export class ResponseParser {
  private state: State = 'head';
  /** Bytes of an unfinished line or head, carried to the next read. */
  private carry: Buffer | undefined;
  /** Body bytes (or chunk bytes) still expected. */
  private remaining = 0;
  private keepAlive = true;
  private pieces: Buffer[] = [];
  /**
   * Whether the head being read has shown a valid status line. It is checked as soon as its
   * line has ended (and its first bytes as they arrive), not once the whole head is in: a
   * server speaking another protocol (SSH, HTTP/2, TLS) may never send a blank line.
   */
  private statusLineValid = false;
  /** True once any byte arrived (a reused connection that fails before this may be retried). */
  started = false;

  constructor(
    private readonly sink: ResponseSink,
    private readonly maxHeadBytes = MAX_HEAD_BYTES,
  ) {}

  /** True once the body is complete. */
  get complete(): boolean {
    return this.state === 'done';
  }

  /**
   * The start of a head that has not ended (quoted and shortened, for a message about a
   * connection closed in the middle of it); undefined when no part of a head is waiting.
   */
  get partialHead(): string | undefined {
    return this.state === 'head' && this.carry !== undefined ? quotedLine(this.carry, 0) : undefined;
  }

  /** Consumes one read. Throws {@link HttpParseError} when the bytes are not an HTTP/1.x response. */
  execute(data: Buffer): void {
    if (data.length === 0) return;
    this.started = true;
    if (this.state === 'done') {
      // Bytes after a complete response: this connection can no longer be trusted.
      return;
    }
    const buf = this.carry === undefined ? data : Buffer.concat([this.carry, data]);
    this.carry = undefined;
    let at = 0;
    try {
      while (at < buf.length && !this.complete) {
        const next = this.step(buf, at);
        if (next < 0) {
          // Needs more bytes: keep the unfinished part.
          this.carry = buf.subarray(at);
          // Unfinished text is kept only up to the head limit, whatever it is part of.
          if (this.carry.length > this.maxHeadBytes) throw new HttpParseError(`${this.state === 'head' ? 'the response head' : 'a chunk-size or trailer line'} is longer than ${this.maxHeadBytes} bytes`);
          break;
        }
        at = next;
      }
    } finally {
      this.flushBody();
    }
    if (this.complete) this.sink.onEnd(this.keepAlive && at === buf.length);
  }

  /**
   * The connection closed. True when that completes the response (a body read until close);
   * false when the response was cut short.
   */
  eof(): boolean {
    if (this.state === 'until-close') {
      this.state = 'done';
      this.sink.onEnd(false);
      return true;
    }
    return this.state === 'done';
  }

  /** Parses from `at`; returns where it stopped, or -1 when the rest is an unfinished unit. */
  private step(buf: Buffer, at: number): number {
    switch (this.state) {
      case 'head':
        return this.head(buf, at);
      case 'length':
        return this.take(buf, at, 'done');
      case 'until-close':
        this.pieces.push(at === 0 ? buf : buf.subarray(at));
        return buf.length;
      case 'chunk-size': {
        const eol = buf.indexOf(LF, at);
        if (eol < 0) return -1;
        const size = chunkSize(buf, at, eol);
        if (size === 0) this.state = 'trailers';
        else {
          this.remaining = size;
          this.state = 'chunk-data';
        }
        return eol + 1;
      }
      case 'chunk-data':
        return this.take(buf, at, 'chunk-end');
      case 'chunk-end': {
        // The CRLF after a chunk's data (a bare LF is tolerated, as by most parsers).
        if (buf[at] === LF) {
          this.state = 'chunk-size';
          return at + 1;
        }
        if (buf[at] !== CR) throw new HttpParseError('a chunk is longer than its size says');
        if (at + 1 >= buf.length) return -1;
        if (buf[at + 1] !== LF) throw new HttpParseError('a chunk is longer than its size says');
        this.state = 'chunk-size';
        return at + 2;
      }
      case 'trailers': {
        // Trailer fields end with an empty line; rein has no use for them.
        const eol = buf.indexOf(LF, at);
        if (eol < 0) return -1;
        if (eol === at || (eol === at + 1 && buf[at] === CR)) this.state = 'done';
        return eol + 1;
      }
      default:
        return buf.length;
    }
  }

  /** Takes up to `remaining` body bytes from `at`; moves to `then` once none remain. */
  private take(buf: Buffer, at: number, then: State): number {
    const end = Math.min(at + this.remaining, buf.length);
    this.pieces.push(buf.subarray(at, end));
    this.remaining -= end - at;
    if (this.remaining === 0) this.state = then;
    return end;
  }

  /** Parses one head (skipping 1xx interim responses); -1 until its blank line arrived. */
  private head(buf: Buffer, at: number): number {
    if (!this.statusLineValid) {
      // Blank lines before a status line are skipped, as llhttp does.
      while (at < buf.length && (buf[at] === CR || buf[at] === LF)) at++;
      if (at === buf.length) return at;
      this.checkStatusLine(buf, at);
    }
    const next = headEnd(buf, at);
    if (next < 0) return -1;
    if (next - at > this.maxHeadBytes) throw new HttpParseError(`the response head is longer than ${this.maxHeadBytes} bytes`);
    const text = buf.toString('latin1', at, headTextEnd);
    let eol = text.indexOf('\n');
    if (eol < 0) eol = text.length;
    const statusLine = text.charCodeAt(eol - 1) === CR ? text.slice(0, eol - 1) : text.slice(0, eol);
    const match = STATUS_LINE.exec(statusLine) as RegExpExecArray; // checked by checkStatusLine
    this.statusLineValid = false; // the next head (after an interim one) is checked again
    const status = Number(match[2]);
    const version = `1.${match[1]}`;
    const headers: Record<string, string> = {};
    let last: string | undefined;
    for (let from = eol + 1; from < text.length; from = eol + 1) {
      eol = text.indexOf('\n', from);
      if (eol < 0) eol = text.length;
      const line = text.slice(from, text.charCodeAt(eol - 1) === CR ? eol - 1 : eol);
      if (line === '') continue;
      const first = line.charCodeAt(0);
      if (first === 32 || first === 9) {
        // obs-fold: a continuation of the previous field (RFC 9112 §5.2: replace with a space).
        if (last === undefined) throw new HttpParseError('a header continuation line with no header before it');
        headers[last] = `${headers[last]} ${line.trim()}`;
        continue;
      }
      const colon = line.indexOf(':');
      // Whitespace between the name and the colon is dropped, as curl and browsers do (RFC
      // 9112 §5.1 has proxies remove it): a broken proxy's `X-Bad : yes` is no reason to fail.
      let nameEnd = colon;
      while (nameEnd > 0 && (line.charCodeAt(nameEnd - 1) === 32 || line.charCodeAt(nameEnd - 1) === 9)) nameEnd--;
      if (nameEnd <= 0) throw new HttpParseError(`a header line without a name: ${JSON.stringify(line.slice(0, 80))}`);
      const name = line.slice(0, nameEnd).toLowerCase();
      if (!TOKEN.test(name)) throw new HttpParseError(`an invalid header name: ${JSON.stringify(name.slice(0, 80))}`);
      const value = line.slice(colon + 1).trim();
      const before = headers[name];
      if (before === undefined) headers[name] = value;
      else if (name === 'content-length') {
        if (before !== value) throw new HttpParseError('two different Content-Length headers');
      } else headers[name] = `${before}, ${value}`;
      last = name;
    }
    if (status >= 100 && status < 200) {
      // 100 Continue, 103 Early Hints, …: an interim response; the real one follows.
      return next;
    }
    this.frame(status, version, headers);
    this.sink.onHead({ status, statusText: match[3] ?? '', version, headers });
    return next;
  }

  /**
   * Throws as soon as the bytes from `at` cannot begin a response: while the status line
   * has not ended its bytes must begin like `HTTP/1.`, and once it has it must be one.
   */
  private checkStatusLine(buf: Buffer, at: number): void {
    const eol = buf.indexOf(LF, at);
    if (eol < 0) {
      const have = Math.min(buf.length - at, HTTP_PREFIX.length);
      for (let i = 0; i < have; i++) if (buf[at + i] !== HTTP_PREFIX[i]) throw notHttp(buf, at);
      if (buf.length - at > MAX_STATUS_LINE_BYTES) throw notHttp(buf, at);
      return;
    }
    const end = eol > at && buf[eol - 1] === CR ? eol - 1 : eol;
    if (end - at > MAX_STATUS_LINE_BYTES || !STATUS_LINE.test(buf.toString('latin1', at, end))) throw notHttp(buf, at);
    this.statusLineValid = true;
  }

  /** Decides how the body is delimited (RFC 9112 §6.3). */
  private frame(status: number, version: string, headers: Record<string, string>): void {
    const connection = headers.connection?.toLowerCase() ?? '';
    this.keepAlive = version === '1.1' ? !/(?:^|,)\s*close\s*(?:,|$)/.test(connection) : /(?:^|,)\s*keep-alive\s*(?:,|$)/.test(connection);
    if (status === 204 || status === 304) {
      this.state = 'done';
      return;
    }
    const transfer = headers['transfer-encoding'];
    if (transfer !== undefined) {
      if (/(?:^|,)\s*chunked\s*$/i.test(transfer)) this.state = 'chunk-size';
      else {
        this.state = 'until-close';
        this.keepAlive = false;
      }
      return;
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      if (!/^\d{1,15}$/.test(length)) throw new HttpParseError(`an invalid Content-Length: ${JSON.stringify(length.slice(0, 40))}`);
      this.remaining = Number(length);
      this.state = this.remaining === 0 ? 'done' : 'length';
      return;
    }
    this.state = 'until-close';
    this.keepAlive = false;
  }

  /** Hands the body bytes of this read to the sink in one piece. */
  private flushBody(): void {
    const { pieces } = this;
    if (pieces.length === 0) return;
    const body = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
    this.pieces = [];
    if (body.length > 0) this.sink.onBody(body);
  }
}

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
/** How every HTTP/1.x response begins. */
const HTTP_PREFIX = Buffer.from('HTTP/1.', 'latin1');

/** The error for bytes from `at` that are not an HTTP/1.x response, naming what arrived. */
function notHttp(buf: Buffer, at: number): HttpParseError {
  const received = quotedLine(buf, at);
  const guess = protocolGuess(buf, at);
  return new HttpParseError(`not an HTTP/1.x status line: ${received}${guess ? ` (${guess})` : ''}`, `${received}${guess ? ` (${guess})` : ''}`);
}

/** The first line of `buf` from `at`, quoted and cut to 80 characters (control bytes escaped). */
function quotedLine(buf: Buffer, at: number): string {
  let end = buf.indexOf(LF, at);
  if (end < 0 || end - at > 80) end = Math.min(buf.length, at + 80);
  if (end > at && buf[end - 1] === CR) end--;
  const text = JSON.stringify(buf.toString('latin1', at, end));
  return end < buf.length && buf[end] !== CR && buf[end] !== LF ? `${text}…` : text;
}

/** What bytes that are not HTTP/1.x most likely are, when their first bytes tell. */
function protocolGuess(buf: Buffer, at: number): string | undefined {
  const first = buf[at];
  // A TLS record (alert 0x15, handshake 0x16) of version 3.x: a TLS server on an http:// URL.
  if ((first === 0x15 || first === 0x16) && buf[at + 1] === 3) return 'a TLS record: the server expects https://';
  // An HTTP/2 frame header: 24-bit length, then type 4 (SETTINGS), the first frame an h2c server sends.
  if (buf.length - at >= 9 && buf[at + 3] === 4 && first === 0) return 'an HTTP/2 SETTINGS frame: the server speaks only HTTP/2, and rein speaks HTTP/1.1';
  if (buf.toString('latin1', at, at + 4) === 'SSH-') return 'an SSH server';
  return undefined;
}

/** A header field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

/** Where the text of the last head found by {@link headEnd} ends (before its line break). */
let headTextEnd = 0;

/**
 * Where the byte after the blank line that ends a head starting at `at` is, or -1 when it
 * has not arrived. Lines may end in CRLF or a bare LF. Sets {@link headTextEnd}.
 */
function headEnd(buf: Buffer, at: number): number {
  for (let i = buf.indexOf(LF, at); i >= 0; i = buf.indexOf(LF, i + 1)) {
    const blank = buf[i + 1] === LF ? i + 2 : buf[i + 1] === CR && buf[i + 2] === LF ? i + 3 : -1;
    if (blank >= 0) {
      headTextEnd = i > at && buf[i - 1] === CR ? i - 1 : i;
      return blank;
    }
  }
  return -1;
}

/** The size on a chunk-size line (hex, optional `;extensions`), from `at` to the LF at `eol`. */
function chunkSize(buf: Buffer, at: number, eol: number): number {
  let size = 0;
  let digits = 0;
  let i = at;
  for (; i < eol; i++) {
    const c = buf[i] as number;
    const v = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (v < 0) break;
    size = size * 16 + v;
    if (++digits > 12) throw new HttpParseError('a chunk size too large');
  }
  if (digits === 0) throw new HttpParseError(`an invalid chunk size line: ${JSON.stringify(buf.toString('latin1', at, Math.min(eol, at + 40)))}`);
  for (; i < eol; i++) {
    const c = buf[i] as number;
    if (c === 59) break; // `;` chunk extensions, ignored
    if (c !== 32 && c !== 9 && c !== CR) throw new HttpParseError(`an invalid chunk size line: ${JSON.stringify(buf.toString('latin1', at, Math.min(eol, at + 40)))}`);
  }
  return size;
}
