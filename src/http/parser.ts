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
          if (this.carry.length > this.maxHeadBytes)
            throw new HttpParseError(
              `${this.state === 'head' ? 'the response head' : 'a chunk-size or trailer line'} is longer than ${this.maxHeadBytes} bytes`,
            );
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
        if (eol === at || buf[eol - 1] !== CR) throw new HttpParseError('a chunk-size line ends in a bare LF (it must end in CRLF)');
        const size = chunkSize(buf, at, eol - 1);
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
        // The CRLF after a chunk's data; a bare LF is refused, as llhttp does (a proxy that
        // reads it otherwise would frame the rest differently).
        if (buf[at] === LF) throw new HttpParseError("a chunk's data ends in a bare LF (it must end in CRLF)");
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
        if (eol === at || buf[eol - 1] !== CR) throw new HttpParseError('a trailer line ends in a bare LF (it must end in CRLF)');
        if (eol === at + 1) this.state = 'done';
        else checkFieldLine(buf.toString('latin1', at, eol - 1));
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
    const statusLine = text.slice(0, eol - 1);
    const match = STATUS_LINE.exec(statusLine) as RegExpExecArray; // checked by checkStatusLine
    this.statusLineValid = false; // the next head (after an interim one) is checked again
    const status = Number(match[2]);
    const version = `1.${match[1]}`;
    const headers: Record<string, string> = {};
    // Strict as llhttp (RFC 9112 §2.2, §5): every line ends in CRLF, no obs-fold, no space
    // before a colon, no bare CR or other control byte in a value. A gateway that reads such
    // a head another way frames the response differently: the connection cannot be trusted.
    for (let from = eol + 1; from < text.length; from = eol + 1) {
      eol = text.indexOf('\n', from);
      if (eol < 0) eol = text.length;
      const line = text.slice(from, eol - 1);
      const first = line.charCodeAt(0);
      if (first === 32 || first === 9)
        throw new HttpParseError(
          `a header line that begins with whitespace (obs-fold, refused by RFC 9112 §5.2 in a response): ${JSON.stringify(line.slice(0, 80))}`,
        );
      const colon = line.indexOf(':');
      if (colon <= 0) throw new HttpParseError(`a header line without a name and a colon: ${JSON.stringify(line.slice(0, 80))}`);
      const name = line.slice(0, colon).toLowerCase();
      if (!TOKEN.test(name))
        throw new HttpParseError(
          `an invalid header name (whitespace or another byte a name cannot hold): ${JSON.stringify(name.slice(0, 80))}`,
        );
      const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
      if (FIELD_VALUE_CONTROL.test(value)) throw new HttpParseError(`a control byte (CR, NUL, …) in the value of ${name}`);
      const before = headers[name];
      if (before === undefined) headers[name] = value;
      else if (name === 'content-length') throw new HttpParseError('Content-Length sent twice');
      else headers[name] = `${before}, ${value}`;
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
    if (end === eol) throw new HttpParseError('the status line ends in a bare LF (it must end in CRLF)');
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
      // Both framings at once is the classic desync (RFC 9112 §6.1): refused, never guessed.
      if (headers['content-length'] !== undefined) throw new HttpParseError('both Transfer-Encoding and Content-Length');
      const codings = transfer
        .toLowerCase()
        .split(',')
        .map((c) => c.trim());
      if (codings.some((c) => c === ''))
        throw new HttpParseError(`an empty transfer coding in Transfer-Encoding: ${JSON.stringify(transfer.slice(0, 40))}`);
      if (codings.filter((c) => c === 'chunked').length > 1) throw new HttpParseError('chunked twice in Transfer-Encoding');
      if (codings[codings.length - 1] === 'chunked') this.state = 'chunk-size';
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
  return new HttpParseError(
    `not an HTTP/1.x status line: ${received}${guess ? ` (${guess})` : ''}`,
    `${received}${guess ? ` (${guess})` : ''}`,
  );
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
  if (buf.length - at >= 9 && buf[at + 3] === 4 && first === 0)
    return 'an HTTP/2 SETTINGS frame: the server speaks only HTTP/2, and rein speaks HTTP/1.1';
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
    if (i === at || buf[i - 1] !== CR) throw new HttpParseError('a line of the response head ends in a bare LF (it must end in CRLF)');
    if (buf[i + 1] === CR) {
      if (i + 2 >= buf.length) return -1;
      if (buf[i + 2] !== LF) throw new HttpParseError('a bare CR in the response head');
      headTextEnd = i;
      return i + 3;
    }
  }
  return -1;
}

/** Bytes a field value may not hold (RFC 9110 §5.5): controls other than HTAB, and DEL. */
const FIELD_VALUE_CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/** A trailer line, checked as a header line is (its content is not used). */
function checkFieldLine(line: string): void {
  const colon = line.indexOf(':');
  if (colon <= 0 || !TOKEN.test(line.slice(0, colon).toLowerCase()) || FIELD_VALUE_CONTROL.test(line.slice(colon + 1))) {
    throw new HttpParseError(`an invalid trailer line: ${JSON.stringify(line.slice(0, 80))}`);
  }
}

/**
 * The size on a chunk-size line (hex, then `;name[=token|"quoted"]` extensions, which are
 * ignored), from `at` to `end` (the CR). Anything else — a space after the size, an
 * extension without a name, a bare CR — is refused, as llhttp does.
 */
function chunkSize(buf: Buffer, at: number, end: number): number {
  let size = 0;
  let digits = 0;
  let i = at;
  const invalid = (what: string) =>
    new HttpParseError(`${what} in the chunk-size line ${JSON.stringify(buf.toString('latin1', at, Math.min(end, at + 40)))}`);
  for (; i < end; i++) {
    const c = buf[i] as number;
    const v = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (v < 0) break;
    size = size * 16 + v;
    if (++digits > 12) throw new HttpParseError('a chunk size too large');
  }
  if (digits === 0) throw invalid('no size');
  // BWS (RFC 9112 §7.1.1) is allowed around `;` and `=` between extensions, never at the end.
  const skipBws = (): void => {
    while (i < end && (buf[i] === 32 || buf[i] === 9)) i++;
  };
  while (i < end) {
    if (digits > 0 && i > at && (buf[i] === 32 || buf[i] === 9)) {
      skipBws();
      if (i >= end) throw invalid('whitespace at the end');
    }
    if (buf[i] !== 59) throw invalid('an invalid character after the size');
    i++;
    skipBws();
    const nameStart = i;
    while (i < end && isTokenByte(buf[i] as number)) i++;
    if (i === nameStart) throw invalid('a chunk extension without a name');
    const afterName = i;
    skipBws();
    if (i < end && buf[i] !== 61) i = afterName;
    if (i < end && buf[i] === 61) {
      i++;
      skipBws();
      if (buf[i] === 34) {
        // A quoted-string: `\` escapes the next byte; it must close before the line ends.
        for (i++; i < end && buf[i] !== 34; i++) if (buf[i] === 92) i++;
        if (i >= end) throw invalid('an unclosed quoted chunk extension value');
        i++;
      } else {
        const valueStart = i;
        while (i < end && isTokenByte(buf[i] as number)) i++;
        if (i === valueStart) throw invalid('an empty chunk extension value');
      }
    }
  }
  return size;
}

function isTokenByte(c: number): boolean {
  return c < 128 && TOKEN_BYTES[c] === 1;
}

/** tchar (RFC 9110 §5.6.2), by byte. */
const TOKEN_BYTES = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TOKEN_BYTES[c.charCodeAt(0)] = 1;
