// The response parser is as strict on framing as llhttp (Node's own parser): each of these
// malformed responses, most taken from llhttp's test suite (test/response/*.md), is a
// protocol error, never retried, and the connection it came on is never used again.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpPost } from '../../src/http/client.js';
import { errorFromNetwork } from '../../src/model/http-errors.js';
import { HttpParseError, ResponseParser, type ResponseSink } from '../../src/http/parser.js';

const sink = (): ResponseSink & { body: string; ended: boolean[] } => {
  const s = {
    body: '',
    ended: [] as boolean[],
    onHead: () => {},
    onBody: (b: Buffer) => void (s.body += b.toString('latin1')),
    onEnd: (r: boolean) => void s.ended.push(r),
  };
  return s;
};
const OK = 'HTTP/1.1 200 OK\r\n';

/** [what, the response bytes, what the error says] */
const MALFORMED: Array<[string, string, RegExp]> = [
  // llhttp test/response/invalid.md
  ['incomplete protocol (HTP/1.1)', 'HTP/1.1 200 OK\r\n\r\n', /not an HTTP\/1.x status line/],
  ['extra digit in the major version', 'HTTP/01.1 200 OK\r\n\r\n', /not an HTTP\/1.x status line/],
  ['extra digit in the major version #2', 'HTTP/11.1 200 OK\r\n\r\n', /not an HTTP\/1.x status line/],
  ['extra digit in the minor version', 'HTTP/1.01 200 OK\r\n\r\n', /not an HTTP\/1.x status line/],
  ['tab after the version', 'HTTP/1.1\t200 OK\r\n\r\n', /not an HTTP\/1.x status line/],
  ['invalid HTTP version', 'HTTP/5.6 200 OK\r\n\r\n', /not an HTTP\/1.x status line/],
  ['extra space before the status code', 'HTTP/1.1  200 OK\r\n\r\n', /not an HTTP\/1.x status line/],
  ['one-digit status code', 'HTTP/1.1 2 OK\r\n\r\n', /not an HTTP\/1.x status line/],
  ['headers separated by a bare CR', `${OK}Foo: 1\rBar: 2\r\n\r\n`, /control byte/],
  ['space after the start line', `${OK} Host: foo\r\n\r\n`, /obs-fold/],
  ['only LFs, no body', 'HTTP/1.1 200 OK\nContent-Length: 0\n\n', /bare LF/],
  ['only LFs', 'HTTP/1.1 200 OK\nFoo: abc\nBar: def\n\nBODY\n', /bare LF/],
  // llhttp test/response/transfer-encoding.md
  [
    'empty Transfer-Encoding with Content-Length',
    `${OK}Transfer-Encoding:\r\nContent-Length: 5\r\n\r\nhello`,
    /both Transfer-Encoding and Content-Length/,
  ],
  [
    'trailing space after a chunk size',
    `${OK}Transfer-Encoding: chunked\r\n\r\n25  \r\nThis is the data in the first chunk\r\n0\r\n\r\n`,
    /whitespace at the end/,
  ],
  [
    'no semicolon before chunk extensions',
    `${OK}Transfer-encoding: chunked\r\n\r\n2 erfrferferf\r\naa\r\n0 rrrr\r\n\r\n`,
    /invalid character after the size/,
  ],
  ['no extension after the semicolon', `${OK}Transfer-encoding: chunked\r\n\r\n2;\r\naa\r\n0\r\n\r\n`, /chunk extension without a name/],
  [
    'unbalanced quoting in a chunk extension',
    `${OK}Transfer-Encoding: chunked\r\n\r\n5;ilovew3="abc";somuchlove="def; ghi\r\nhello\r\n0\r\n\r\n`,
    /unclosed quoted/,
  ],
  // The request smuggling cases of the issue.
  [
    'Transfer-Encoding: chunked with Content-Length',
    `${OK}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`,
    /both Transfer-Encoding and Content-Length/,
  ],
  [
    'Content-Length before Transfer-Encoding: chunked',
    `${OK}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    /both Transfer-Encoding and Content-Length/,
  ],
  ['whitespace before a header colon', `${OK}Content-Length : 2\r\n\r\nok`, /invalid header name/],
  ['a tab before a header colon', `${OK}Transfer-Encoding\t: chunked\r\n\r\n0\r\n\r\n`, /invalid header name/],
  ['a bare LF line ending in the head', `${OK}Content-Length: 2\n\r\nok`, /bare LF/],
  ['an obs-fold continuation line', `${OK}X-Long: first\r\n  second\r\nContent-Length: 0\r\n\r\n`, /obs-fold/],
  ['a bare CR inside a header value', `${OK}X-A: a\rb\r\nContent-Length: 0\r\n\r\n`, /control byte/],
  ['a NUL inside a header value', `${OK}X-A: a\u0000b\r\nContent-Length: 0\r\n\r\n`, /control byte/],
  ['a bare LF after chunk data', `${OK}Transfer-Encoding: chunked\r\n\r\n2\r\nok\n0\r\n\r\n`, /chunk's data ends in a bare LF/],
  [
    'a bare LF after a chunk extension',
    `${OK}Transfer-Encoding: chunked\r\n\r\n2;a=b\nok\r\n0\r\n\r\n`,
    /chunk-size line ends in a bare LF/,
  ],
  ['a bare LF after a chunk size', `${OK}Transfer-Encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n`, /chunk-size line ends in a bare LF/],
  ['Content-Length twice', `${OK}Content-Length: 2\r\nContent-Length: 2\r\n\r\nok`, /Content-Length sent twice/],
  ['chunked twice', `${OK}Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n`, /chunked twice/],
  ['a bare LF in a trailer', `${OK}Transfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\n\r\n`, /trailer line ends in a bare LF/],
  ['a header without a colon', `${OK}Content-Length 2\r\n\r\nok`, /without a name and a colon/],
];

describe('malformed responses are protocol errors', () => {
  it.each(MALFORMED)('%s', (_what, response, reason) => {
    const parser = new ResponseParser(sink());
    let error: unknown;
    try {
      parser.execute(Buffer.from(response, 'latin1'));
      parser.eof();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HttpParseError);
    expect((error as Error).message).toMatch(reason);
    // Fatal: the same bytes would come again, so it is not retried.
    const classified = errorFromNetwork(error as Error, { provider: 'openai', model: 'm', url: 'http://127.0.0.1:1/v1' });
    expect([classified.code, classified.kind]).toEqual(['invalid_response', 'fatal']);
  });

  it('byte by byte they fail the same way', () => {
    for (const [, response, reason] of MALFORMED) {
      const parser = new ResponseParser(sink());
      let error: unknown;
      try {
        for (const byte of Buffer.from(response, 'latin1')) parser.execute(Buffer.from([byte]));
        parser.eof();
      } catch (e) {
        error = e;
      }
      expect((error as Error | undefined)?.message, response).toMatch(reason);
    }
  });
});

/** [what, response, body] — well-formed responses of llhttp's suite that stay readable. */
const WELL_FORMED: Array<[string, string, string]> = [
  [
    'chunk extensions',
    `${OK}Transfer-encoding: chunked\r\n\r\n5;ilovew3;somuchlove=aretheseparametersfor\r\nhello\r\n6;blahblah;blah\r\n world\r\n0\r\n\r\n`,
    'hello world',
  ],
  [
    'quoted chunk extensions',
    `${OK}Transfer-Encoding: chunked\r\n\r\n5;ilovew3="I love; extensions";somuchlove="aretheseparametersfor";blah;foo=bar\r\nhello\r\n6;blahblah;blah\r\n world\r\n0\r\n\r\n`,
    'hello world',
  ],
  ['BWS around an extension', `${OK}Transfer-Encoding: chunked\r\n\r\n5 ; a = b\r\nhello\r\n0\r\n\r\n`, 'hello'],
  ['extra space between status code and reason', 'HTTP/1.1 200  OK\r\nContent-Length: 2\r\n\r\nok', 'ok'],
  ['trailers', `${OK}Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n`, 'ok'],
];

describe('well-formed responses stay readable', () => {
  it.each(WELL_FORMED)('%s', (_what, response, body) => {
    const s = sink();
    new ResponseParser(s).execute(Buffer.from(response, 'latin1'));
    expect(s.body).toBe(body);
    expect(s.ended).toEqual([true]);
  });

  it('chunked not last, or chunkedchunked, is read until the connection closes (as llhttp does)', () => {
    for (const te of ['chunked, deflate', 'chunkedchunked']) {
      const s = sink();
      const parser = new ResponseParser(s);
      parser.execute(Buffer.from(`${OK}Transfer-Encoding: ${te}\r\n\r\n2\r\nOK\r\n`, 'latin1'));
      expect(parser.eof()).toBe(true);
      expect(s.ended).toEqual([false]);
    }
  });
});

describe('through the client: a malformed response ends its connection', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it('the request fails as invalid_response, once, and the next request opens a new connection', async () => {
    let connections = 0;
    let requests = 0;
    const sockets: Socket[] = [];
    server = createServer((socket) => {
      connections++;
      sockets.push(socket);
      socket.on('data', () => {
        requests++;
        // The first answer smuggles a second response behind an ambiguous framing.
        socket.write(
          requests === 1
            ? `${OK}Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nevil!`
            : `${OK}Content-Length: 2\r\nConnection: keep-alive\r\n\r\nok`,
        );
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/v1/chat/completions`);
    await expect(httpPost(url, { 'content-type': 'application/json' }, '{}')).rejects.toThrow(/both Transfer-Encoding and Content-Length/);
    const res = await httpPost(url, { 'content-type': 'application/json' }, '{}');
    expect(await res.text(Number.POSITIVE_INFINITY)).toBe('ok');
    expect(requests).toBe(2);
    expect(connections).toBe(2);
    for (const socket of sockets) socket.destroy();
  });
});
