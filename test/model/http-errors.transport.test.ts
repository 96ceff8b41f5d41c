/**
 * How http-errors.ts words failures of the connection itself (TLS, a response that is not
 * HTTP, a body rein cannot decode), and that no message it makes shows the password of a
 * URL's `user:password@`.
 */
import { describe, expect, it } from 'vitest';
import {
  emptyResponseError,
  errorFromNetwork,
  errorFromResponse,
  errorFromStreamPayload,
  streamCutError,
  withoutUserinfo,
} from '../../src/model/http-errors.js';
import type { ErrorContext } from '../../src/model/http-errors.js';
import { HttpParseError } from '../../src/http/parser.js';
import { UndecodableBodyError } from '../../src/http/inflate.js';

const ctx: ErrorContext = { provider: 'openai', model: 'm', url: 'https://127.0.0.1:8443/v1/chat/completions' };

/** An error as Node's TLS socket reports a failed handshake. */
function eproto(reason: string): Error {
  return Object.assign(
    new Error(
      `write EPROTO 801CEBE0437F0000:error:0A00010B:SSL routines:ssl3_get_record:${reason}:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n`,
    ),
    { code: 'EPROTO' },
  );
}

describe('errorFromNetwork: TLS', () => {
  it('an https:// URL at a plain-HTTP server ("wrong version number") is fatal and says to use http://', () => {
    const error = errorFromNetwork(eproto('wrong version number'), ctx);
    expect([error.code, error.kind]).toEqual(['config', 'fatal']);
    expect(error.message).toBe(
      'The server at https://127.0.0.1:8443/v1/chat/completions (openai/m) does not speak TLS (it answered the TLS handshake with something else, most likely plain HTTP): use http:// instead of https:// in the base URL',
    );
  });

  it('a server that speaks only HTTP/2 (ALPN refused: "no application protocol") is fatal and says so', () => {
    const error = errorFromNetwork(
      Object.assign(
        new Error(
          'write EPROTO 808C0B80747F0000:error:0A000460:SSL routines:ssl3_read_bytes:tlsv1 alert no application protocol:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 120\n',
        ),
        { code: 'EPROTO' },
      ),
      ctx,
    );
    expect([error.code, error.kind]).toEqual(['config', 'fatal']);
    expect(error.message).toContain('speaks only HTTP/2');
    expect(error.message).toContain('use an HTTP/1.1 endpoint');
  });

  it("another handshake failure is fatal and quotes OpenSSL's reason, not its whole text", () => {
    const error = errorFromNetwork(eproto('sslv3 alert handshake failure'), ctx);
    expect([error.code, error.kind]).toEqual(['network', 'fatal']);
    expect(error.message).toContain('failed: sslv3 alert handshake failure [EPROTO]');
    expect(error.message).not.toContain('deps/openssl');
  });

  it('an EPROTO that is not from OpenSSL stays a transient network error', () => {
    const error = errorFromNetwork(Object.assign(new Error('read EPROTO'), { code: 'EPROTO' }), ctx);
    expect([error.code, error.kind]).toEqual(['network', 'transient']);
  });
});

describe('errorFromNetwork: responses rein cannot read', () => {
  it('something that is not HTTP is fatal invalid_response quoting what arrived', () => {
    const parse = new HttpParseError(
      'not an HTTP/1.x status line: "SSH-2.0-OpenSSH_9.6" (an SSH server)',
      '"SSH-2.0-OpenSSH_9.6" (an SSH server)',
    );
    const error = errorFromNetwork(parse, ctx);
    expect([error.code, error.kind]).toEqual(['invalid_response', 'fatal']);
    expect(error.message).toMatch(
      /^https:\/\/127\.0\.0\.1:8443\/v1\/chat\/completions \(openai\/m\) answered with something that is not HTTP: "SSH-2\.0-OpenSSH_9\.6" \(an SSH server\)\. Check the base URL/,
    );
  });

  it('a malformed head is fatal invalid_response naming the problem: it would repeat', () => {
    const error = errorFromNetwork(new HttpParseError('two different Content-Length headers'), ctx);
    expect([error.code, error.kind]).toEqual(['invalid_response', 'fatal']);
    expect(error.message).toContain('rein cannot read as HTTP/1.1 (two different Content-Length headers)');
    expect(error.message).not.toContain('Parse Error');
  });

  it('a body coding rein cannot decode is a fatal invalid_response naming it and the server or proxy setting', () => {
    const content = errorFromNetwork(new UndecodableBodyError('content-encoding', 'zstd'), ctx);
    expect([content.code, content.kind]).toEqual(['invalid_response', 'fatal']);
    expect(content.message).toContain('answered with its body encoded as "zstd" (Content-Encoding), which rein cannot decode');
    expect(content.message).toContain('Turn off response compression for this endpoint in the server or the proxy in front of it');
    expect(content.message).not.toContain('invalid request');
    const transfer = errorFromNetwork(new UndecodableBodyError('transfer-encoding', 'compress, chunked'), ctx);
    expect([transfer.code, transfer.kind]).toEqual(['invalid_response', 'fatal']);
    expect(transfer.message).toContain('a transfer coding rein cannot decode (Transfer-Encoding: compress, chunked)');
  });
});

describe('a user and password in the URL never reach a message', () => {
  const secret = { ...ctx, url: 'http://alice:s3cret@127.0.0.1:11434/v1/chat/completions' };

  it('withoutUserinfo drops them, and leaves other text as it is', () => {
    expect(withoutUserinfo('http://alice:s3cret@host:1/v1')).toBe('http://host:1/v1');
    // The host starts after the last @ of the authority.
    expect(withoutUserinfo('https://a:b@c@host/v1?x=@')).toBe('https://host/v1?x=@');
    expect(withoutUserinfo('http://host/v1/a@b')).toBe('http://host/v1/a@b');
    expect(withoutUserinfo('http://host:1')).toBe('http://host:1');
    expect(withoutUserinfo('not a url')).toBe('not a url');
  });

  it('in every message: network, response, stream, cut and empty answers', () => {
    const errors = [
      errorFromNetwork(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), secret),
      errorFromNetwork(eproto('wrong version number'), secret),
      errorFromNetwork(new Error('a bug'), secret),
      errorFromResponse(401, {}, '401 Authorization Required', secret),
      errorFromResponse(404, {}, '{"detail":"Not Found"}', secret),
      errorFromResponse(500, {}, '', secret),
      errorFromStreamPayload({ message: 'boom' }, secret),
      streamCutError(secret),
      emptyResponseError(secret),
    ];
    for (const error of errors) {
      expect(error.message).not.toContain('s3cret');
      expect(error.message).not.toContain('alice');
    }
    expect(errors[0]?.message).toContain('http://127.0.0.1:11434/v1/chat/completions');
  });

  it('in a redirect target, relative (resolved against the URL) or absolute', () => {
    const relative = errorFromResponse(308, { location: '/v1/chat/completions/' }, '', secret);
    expect(relative.message).toContain('redirected the request to http://127.0.0.1:11434/v1/chat/completions/ (HTTP 308)');
    const absolute = errorFromResponse(307, { location: 'https://bob:hunter2@example.com/v1' }, '', secret);
    expect(absolute.message).toContain('to https://example.com/v1 (HTTP 307)');
    expect(absolute.message).not.toContain('hunter2');
  });

  it("a 401 says when the URL's user and password were not sent because the API key took the Authorization header", () => {
    const error = errorFromResponse(401, {}, '401 Authorization Required', {
      ...ctx,
      url: 'http://127.0.0.1:11434/v1/chat/completions',
      urlCredentialsNotSent: true,
    });
    expect([error.code, error.kind]).toEqual(['auth', 'fatal']);
    expect(error.message).toContain('The user and password in the base URL were not sent: the API key takes the Authorization header');
    expect(error.message).toContain('leave OPENAI_API_KEY');
    expect(errorFromResponse(401, {}, 'no', ctx).message).not.toContain('base URL were not sent');
  });
});
