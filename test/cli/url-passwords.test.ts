import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { redactUrlPasswords, urlPasswordRedacting } from '../../src/cli/url-passwords.js';
import { createRedactor } from '../../src/security/redact.js';

describe('redactUrlPasswords', () => {
  it('redacts a URL password exactly as the run store does', () => {
    const store = createRedactor({ env: {} });
    for (const text of [
      'http://alice:s3cret@127.0.0.1:8000/v1',
      '{"baseUrl":"https://bob:p%40ss@proxy.example/v1"}',
      'connect ECONNREFUSED for postgres://rein:hunter22@db/rein and HTTP://carol:Xyz12345@host',
    ]) {
      expect(redactUrlPasswords(text)).toBe(store.redactText(text));
      expect(redactUrlPasswords(text)).toContain('[REDACTED:url_password]@');
    }
  });

  it('leaves a URL without a password, a placeholder and text without URLs as they are', () => {
    for (const text of ['http://127.0.0.1:8000/v1', 'http://user@host/v1', 'http://user:${PASSWORD}@host', 'no url here: a:b@c']) {
      expect(redactUrlPasswords(text)).toBe(text);
    }
  });
});

describe('urlPasswordRedacting', () => {
  it('writes every chunk to its target with URL passwords redacted', () => {
    let written = '';
    const target = new Writable({
      write(chunk: Buffer, _encoding, done) {
        written += chunk.toString();
        done();
      },
    });
    const out = urlPasswordRedacting(target);
    out.write('{"type":"run_started","model":{"baseUrl":"http://alice:s3cret@host/v1"}}\n');
    out.write('{"type":"text_delta","delta":"hi"}\n');
    expect(written).toBe(
      '{"type":"run_started","model":{"baseUrl":"http://alice:[REDACTED:url_password]@host/v1"}}\n{"type":"text_delta","delta":"hi"}\n',
    );
  });
});
