import { describe, expect, it } from 'vitest';
import { apiTarget, displayUrl } from '../../src/model/base-url.js';

const chat = (base: string): string => `${base}/chat/completions`;

describe('apiTarget', () => {
  it('puts the API path at the end of the base path and keeps the base query after it (Azure OpenAI)', () => {
    const target = apiTarget('https://x.openai.azure.com/openai/deployments/gpt4?api-version=2024-10-21', chat);
    expect(target.href).toBe('https://x.openai.azure.com/openai/deployments/gpt4/chat/completions?api-version=2024-10-21');
    expect(target.url.href).toBe(target.href);
    expect(apiTarget('http://h/v1/?a=1&b=x%2Fy', chat).href).toBe('http://h/v1/chat/completions?a=1&b=x%2Fy');
    expect(apiTarget('http://h', chat).href).toBe('http://h/chat/completions');
    expect(apiTarget('http://h/', chat).href).toBe('http://h/chat/completions');
  });

  it('drops a fragment: HTTP never sends one', () => {
    expect(apiTarget('http://h/v1#frag', chat).href).toBe('http://h/v1/chat/completions');
    expect(apiTarget('http://h/v1?a=1#frag', chat).href).toBe('http://h/v1/chat/completions?a=1');
  });

  it('merges its own parameters into the query, replacing those of the same name and leaving the others as written', () => {
    const sse = (base: string): string => apiTarget(base, (path) => `${path}/models/m:streamGenerateContent`, { alt: 'sse' }).href;
    expect(sse('https://g.example')).toBe('https://g.example/models/m:streamGenerateContent?alt=sse');
    expect(sse('https://g.example?key=k1&x=a+b%20c')).toBe('https://g.example/models/m:streamGenerateContent?key=k1&x=a+b%20c&alt=sse');
    expect(sse('https://g.example?alt=json&key=k1')).toBe('https://g.example/models/m:streamGenerateContent?key=k1&alt=sse');
  });

  it('keeps the user and password in the URL sent, never in the text errors quote', () => {
    const target = apiTarget('http://alice:s3cret@gw.example/v1?api-version=1&api-key=k-123', chat);
    expect(target.href).toBe('http://alice:s3cret@gw.example/v1/chat/completions?api-version=1&api-key=k-123');
    expect(target.errorUrl).toBe('http://gw.example/v1/chat/completions?api-version=1');
  });

  it('throws on a base that is not a URL', () => {
    expect(() => apiTarget('not a url', chat)).toThrow(TypeError);
  });
});

describe('displayUrl', () => {
  it('drops the user and password', () => {
    expect(displayUrl('http://alice:s3cret@host:8080/v1')).toBe('http://host:8080/v1');
    expect(displayUrl('https://tok_abc@host/v1')).toBe('https://host/v1');
    expect(displayUrl(new URL('http://alice:p%40ss@host/v1'))).toBe('http://host/v1');
  });

  it('drops query parameters named like secrets, keeps the rest', () => {
    expect(
      displayUrl(
        'https://h/v1?api-version=2024-10-21&api-key=k1&key=k2&api_key=k3&token=t&access_token=t2&sig=s&X-Amz-Signature=s2&password=p&secret=x&code=c',
      ),
    ).toBe('https://h/v1?api-version=2024-10-21');
    expect(displayUrl('https://h/v1?key=k1')).toBe('https://h/v1');
    expect(displayUrl('https://h/v1?%6Bey=k1&a=1')).toBe('https://h/v1?a=1');
  });

  it('drops the fragment', () => {
    expect(displayUrl('https://h/v1#frag')).toBe('https://h/v1');
  });

  it('text that is not an http(s) URL keeps nothing up to its last @, nor its query', () => {
    expect(displayUrl('http://alice:pa/ss@host/v1')).toBe('http://…@host/v1');
    expect(displayUrl('alice:s3cret@host/v1')).toBe('…@host/v1');
    expect(displayUrl('ftp://alice:s3cret@host/v1?key=k')).toBe('ftp://…@host/v1');
    expect(displayUrl('not a url?token=t')).toBe('not a url');
    expect(displayUrl('localhost:8080/v1')).toBe('localhost:8080/v1');
  });
});
