import { describe, expect, it } from 'vitest';
import { HttpParseError, MAX_HEAD_BYTES, ResponseParser, type ResponseHead, type ResponseSink } from '../../src/http/parser.js';

type Event = { type: 'head'; head: ResponseHead } | { type: 'body'; text: string } | { type: 'end'; reusable: boolean };

/** A sink that writes down everything the parser reports, in order. */
class Recorder implements ResponseSink {
  events: Event[] = [];
  onHead(head: ResponseHead): void {
    this.events.push({ type: 'head', head });
  }
  onBody(body: Buffer): void {
    this.events.push({ type: 'body', text: body.toString('latin1') });
  }
  onEnd(reusable: boolean): void {
    this.events.push({ type: 'end', reusable });
  }
  get heads(): ResponseHead[] {
    return this.events.flatMap((e) => (e.type === 'head' ? [e.head] : []));
  }
  get body(): string {
    return this.events.map((e) => (e.type === 'body' ? e.text : '')).join('');
  }
  get bodyCalls(): number {
    return this.events.filter((e) => e.type === 'body').length;
  }
  get ends(): boolean[] {
    return this.events.flatMap((e) => (e.type === 'end' ? [e.reusable] : []));
  }
}

/** Parses `pieces` as consecutive reads of one connection. */
function parse(...pieces: string[]): { sink: Recorder; parser: ResponseParser } {
  const sink = new Recorder();
  const parser = new ResponseParser(sink);
  for (const piece of pieces) parser.execute(Buffer.from(piece, 'latin1'));
  return { sink, parser };
}

/** What a parse amounts to, whatever the read boundaries were. */
function outcome(sink: Recorder): { heads: ResponseHead[]; body: string; ends: boolean[] } {
  return { heads: sink.heads, body: sink.body, ends: sink.ends };
}

function parseError(...pieces: string[]): HttpParseError {
  try {
    parse(...pieces);
  } catch (error) {
    expect(error).toBeInstanceOf(HttpParseError);
    expect(error).toMatchObject({ code: 'HPE_INVALID_RESPONSE' });
    return error as HttpParseError;
  }
  throw new Error('expected a parse error');
}

const CHUNKED =
  'HTTP/1.1 200 OK\r\n' +
  'Content-Type: text/event-stream\r\n' +
  'Transfer-Encoding: chunked\r\n' +
  '\r\n' +
  '5;ext=1\r\nhello\r\n' +
  '7\r\n, world\r\n' +
  'A; name="quoted"\r\n and more!\r\n' +
  '0\r\n' +
  'X-Trailer: done\r\n' +
  '\r\n';

describe('ResponseParser: framing the body', () => {
  it('a Content-Length body is read to its length, and the connection may carry another request', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world');
    expect(sink.heads).toEqual([
      { status: 200, statusText: 'OK', version: '1.1', headers: { 'content-type': 'text/plain', 'content-length': '11' } },
    ]);
    expect(sink.body).toBe('hello world');
    expect(sink.ends).toEqual([true]);
    expect(parser.complete).toBe(true);
  });

  it('a Content-Length body spread over reads ends only when the last byte arrives', () => {
    const sink = new Recorder();
    const parser = new ResponseParser(sink);
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc'));
    expect(sink.ends).toEqual([]);
    expect(parser.complete).toBe(false);
    parser.execute(Buffer.from('def'));
    expect(sink.body).toBe('abcdef');
    expect(sink.ends).toEqual([true]);
  });

  it('a chunked body is de-chunked, with chunk extensions ignored and trailers skipped', () => {
    const { sink } = parse(CHUNKED);
    expect(sink.heads).toHaveLength(1);
    expect(sink.heads[0]?.headers['transfer-encoding']).toBe('chunked');
    expect(sink.body).toBe('hello, world and more!');
    expect(sink.ends).toEqual([true]);
    // Trailer fields are not headers of the response.
    expect(sink.heads[0]?.headers).not.toHaveProperty('x-trailer');
  });

  it('a chunked response fed one byte at a time gives the same head, body and end', () => {
    const whole = outcome(parse(CHUNKED).sink);
    const sink = new Recorder();
    const parser = new ResponseParser(sink);
    for (let i = 0; i < CHUNKED.length; i++) parser.execute(Buffer.from(CHUNKED.slice(i, i + 1), 'latin1'));
    expect(outcome(sink)).toEqual(whole);
  });

  it('a chunked response split in two at every position gives the same head, body and end', () => {
    const whole = outcome(parse(CHUNKED).sink);
    for (let at = 0; at <= CHUNKED.length; at++) {
      const { sink } = parse(CHUNKED.slice(0, at), CHUNKED.slice(at));
      expect(outcome(sink), `split at ${at}`).toEqual(whole);
    }
  });

  it('a Content-Length response split in two at every position gives the same head, body and end', () => {
    const response = 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789';
    const whole = outcome(parse(response).sink);
    for (let at = 0; at <= response.length; at++) {
      expect(outcome(parse(response.slice(0, at), response.slice(at)).sink), `split at ${at}`).toEqual(whole);
    }
  });

  it('the body of one read is handed over in one call, however many chunks it holds', () => {
    const { sink } = parse(CHUNKED);
    expect(sink.bodyCalls).toBe(1);
    const many = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' + '1\r\nx\r\n'.repeat(50) + '0\r\n\r\n';
    const parsed = parse(many).sink;
    expect(parsed.bodyCalls).toBe(1);
    expect(parsed.body).toBe('x'.repeat(50));
  });

  it('a body spread over reads is handed over once per read that carried body bytes', () => {
    const { sink } = parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', '3\r\nabc\r\n', '3\r\ndef\r\n', '0\r\n\r\n');
    expect(sink.events.map((e) => e.type)).toEqual(['head', 'body', 'body', 'end']);
    expect(sink.body).toBe('abcdef');
  });

  it('without Content-Length or chunked, the body runs until the connection closes and the connection is not reused', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome', ' text');
    expect(sink.body).toBe('some text');
    expect(sink.ends).toEqual([]);
    expect(parser.complete).toBe(false);
    expect(parser.eof()).toBe(true);
    expect(sink.ends).toEqual([false]);
    expect(parser.complete).toBe(true);
  });

  it('a transfer coding other than chunked is read until close too', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nbytes');
    expect(parser.eof()).toBe(true);
    expect(sink.body).toBe('bytes');
    expect(sink.ends).toEqual([false]);
  });

  it('the connection closing before a Content-Length body is complete is a cut response', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b');
    expect(parser.eof()).toBe(false);
    expect(sink.ends).toEqual([]);
    expect(parser.complete).toBe(false);
  });

  it('the connection closing in the middle of a chunked body or before the head is a cut response', () => {
    expect(parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel').parser.eof()).toBe(false);
    expect(parse('HTTP/1.1 200 OK\r\nContent-').parser.eof()).toBe(false);
    expect(parse().parser.eof()).toBe(false);
  });

  it('after a complete response, eof() reports it complete without ending it twice', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    expect(parser.eof()).toBe(true);
    expect(sink.ends).toEqual([true]);
  });

  it('Content-Length: 0 ends the response at its head', () => {
    const { sink } = parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    expect(sink.events.map((e) => e.type)).toEqual(['head', 'end']);
    expect(sink.ends).toEqual([true]);
  });
});

describe('ResponseParser: status and interim responses', () => {
  it('100 Continue is skipped: the one head reported is the final 200', () => {
    const { sink } = parse('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    expect(sink.heads.map((h) => h.status)).toEqual([200]);
    expect(sink.body).toBe('ok');
    expect(sink.ends).toEqual([true]);
  });

  it('103 Early Hints with its own headers is skipped, and its headers do not leak into the final head', () => {
    const { sink } = parse(
      'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n',
      'HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n',
    );
    expect(sink.heads).toHaveLength(1);
    expect(sink.heads[0]).toMatchObject({ status: 201, statusText: 'Created' });
    expect(sink.heads[0]?.headers).not.toHaveProperty('link');
  });

  it('204 No Content ends at the head with no body, even with a Content-Length', () => {
    const { sink } = parse('HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n');
    expect(sink.events.map((e) => e.type)).toEqual(['head', 'end']);
    expect(sink.ends).toEqual([true]);
  });

  it('304 Not Modified has no body either', () => {
    const { sink } = parse('HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n');
    expect(sink.events.map((e) => e.type)).toEqual(['head', 'end']);
  });

  it('a status line without a reason phrase is accepted', () => {
    const { sink } = parse('HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n');
    expect(sink.heads[0]).toMatchObject({ status: 200, statusText: '' });
  });
});

describe('ResponseParser: whether the connection may be reused', () => {
  it('HTTP/1.0 without keep-alive is not reusable', () => {
    const { sink } = parse('HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok');
    expect(sink.heads[0]?.version).toBe('1.0');
    expect(sink.ends).toEqual([false]);
  });

  it('HTTP/1.0 with Connection: keep-alive and a length is reusable', () => {
    const { sink } = parse('HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok');
    expect(sink.ends).toEqual([true]);
  });

  it('Connection: close is not reusable, in any case and among other tokens', () => {
    expect(parse('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok').sink.ends).toEqual([false]);
    expect(parse('HTTP/1.1 200 OK\r\nConnection: Upgrade, Close\r\nContent-Length: 2\r\n\r\nok').sink.ends).toEqual([false]);
  });

  it('stray bytes after a complete response in the same read make it not reusable', () => {
    const { sink } = parse('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n');
    expect(sink.body).toBe('ok');
    expect(sink.ends).toEqual([false]);
    const chunked = parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nextra').sink;
    expect(chunked.body).toBe('ok');
    expect(chunked.ends).toEqual([false]);
  });

  it('bytes arriving after the response ended are ignored and do not end it again', () => {
    const { sink } = parse('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', 'garbage');
    expect(sink.ends).toEqual([true]);
    expect(sink.body).toBe('ok');
  });
});

describe('ResponseParser: head syntax', () => {
  it('a header sent more than once is joined with ", ", under its lower-case name', () => {
    const { sink } = parse(
      'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nX-Thing: one\r\nset-cookie: b=2\r\nX-THING: two\r\nContent-Length: 0\r\n\r\n',
    );
    expect(sink.heads[0]?.headers).toMatchObject({ 'set-cookie': 'a=1, b=2', 'x-thing': 'one, two' });
  });

  it('header values are trimmed of surrounding whitespace', () => {
    const { sink } = parse('HTTP/1.1 200 OK\r\nX-Padded:   spaced out \t\r\nContent-Length: 0\r\n\r\n');
    expect(sink.heads[0]?.headers['x-padded']).toBe('spaced out');
  });
});

describe('ResponseParser: responses that are not HTTP/1.1', () => {
  it('two different Content-Length headers', () => {
    expect(parseError('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk').message).toMatch(/Content-Length sent twice/);
  });

  it('a Content-Length that is not a number', () => {
    expect(parseError('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n').message).toMatch(/invalid Content-Length/);
  });

  it('a status line that is not HTTP/1.x (an SSH server on the port) names what arrived', () => {
    const error = parseError('SSH-2.0-OpenSSH_9.6\r\n\r\n');
    expect(error.message).toMatch(/not an HTTP\/1\.x status line/);
    expect(error.message).toContain('SSH-2.0-OpenSSH');
    expect(parseError('HTTP/2 200\r\n\r\n').message).toMatch(/status line/);
  });

  it('an invalid chunk size', () => {
    const error = parseError('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    expect(error.message).toMatch(/no size in the chunk-size line/);
    expect(error.message).toContain('zz');
    expect(parseError('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5x\r\nhello\r\n').message).toMatch(
      /an invalid character after the size in the chunk-size line/,
    );
  });

  it('a chunk carrying more data than its size says', () => {
    expect(parseError('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n').message).toMatch(
      /chunk is longer than its size/,
    );
  });

  it('a chunk size too large to be real', () => {
    expect(parseError('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n').message).toMatch(/chunk size too large/);
  });

  it('a head longer than the limit, arriving over several reads', () => {
    const sink = new Recorder();
    const parser = new ResponseParser(sink);
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\n'));
    const filler = `X-Filler: ${'a'.repeat(1000)}\r\n`;
    let error: unknown;
    try {
      for (let i = 0; i < 70; i++) parser.execute(Buffer.from(filler));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(HttpParseError);
    expect((error as Error).message).toMatch(new RegExp(`head is longer than ${MAX_HEAD_BYTES} bytes`));
    expect(sink.heads).toEqual([]);
  });

  it('a head longer than a smaller limit given to the parser', () => {
    const parser = new ResponseParser(new Recorder(), 64);
    expect(() => parser.execute(Buffer.from(`HTTP/1.1 200 OK\r\nX-Filler: ${'a'.repeat(100)}`))).toThrow(/head is longer than 64 bytes/);
  });

  it('a header line without a name, or with an invalid name', () => {
    expect(parseError('HTTP/1.1 200 OK\r\n: no name\r\n\r\n').message).toMatch(/header line without a name/);
    expect(parseError('HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n').message).toMatch(/invalid header name/);
  });

  it('a continuation line with no header before it', () => {
    expect(parseError('HTTP/1.1 200 OK\r\n folded\r\n\r\n').message).toMatch(/obs-fold/);
  });
});

describe('ResponseParser: another protocol on the port', () => {
  it('a first line that is not a status line fails as soon as it ends, without waiting for a blank line', () => {
    // An SSH server sends its banner line and waits: no blank line ever comes.
    const error = parseError('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n');
    expect(error.received).toBe('"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13" (an SSH server)');
    expect(error.message).toContain('not an HTTP/1.x status line');
  });

  it('bytes that cannot begin "HTTP/1." fail at once, before any line end', () => {
    // An h2c server's first frame (SETTINGS): nine bytes, no newline.
    expect(parseError('\x00\x00\x12\x04\x00\x00\x00\x00\x00').received).toMatch(
      /^"\\u0000\\u0000\\u0012\\u0004.*" \(an HTTP\/2 SETTINGS frame: the server speaks only HTTP\/2/,
    );
    // A TLS alert from an https server asked in plain http.
    expect(parseError('\x15\x03\x01\x00\x02\x02\x46').received).toContain('a TLS record: the server expects https://');
    expect(parseError('HTTX').received).toBe('"HTTX"');
  });

  it('the start of a real status line waits for the rest, over any number of reads', () => {
    const { sink } = parse('H', 'TTP/', '1.1 2', '00 OK\r\nContent-Length: 2\r', '\n\r\nok');
    expect(sink.heads.map((h) => h.status)).toEqual([200]);
    expect(sink.body).toBe('ok');
  });

  it('a first line longer than any status line fails without waiting for its end', () => {
    expect(parseError(`HTTP/1.1 200 ${'x'.repeat(2000)}`).message).toContain('not an HTTP/1.x status line');
  });

  it('blank lines before the status line are skipped', () => {
    const { sink } = parse('\r\n\r\n', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
    expect(sink.heads.map((h) => h.status)).toEqual([200]);
    expect(sink.body).toBe('ok');
  });

  it('a head cut short can be quoted: partialHead', () => {
    const { parser } = parse('HTTP/1.1 200 OK\r\nContent-Ty');
    expect(parser.partialHead).toBe('"HTTP/1.1 200 OK"');
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n').parser.partialHead).toBeUndefined();
  });
});

describe('ResponseParser: heads some servers and proxies send', () => {
  it("a 20 KB set-cookie header (more than Node's default 16 KB head) is read", () => {
    const cookie = `a=${'x'.repeat(20_000)}`;
    const { sink } = parse(`HTTP/1.1 200 OK\r\nSet-Cookie: ${cookie}\r\nContent-Length: 2\r\n\r\nok`);
    expect(sink.heads[0]?.headers['set-cookie']).toBe(cookie);
    expect(sink.body).toBe('ok');
    expect(MAX_HEAD_BYTES).toBeGreaterThanOrEqual(64 * 1024);
  });
});
