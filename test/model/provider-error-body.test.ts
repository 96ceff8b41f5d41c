import { describe, expect, it } from 'vitest';
import { bodyText, readProviderError } from '../../src/model/provider-error-body.js';

describe('readProviderError', () => {
  it("reads the first entry of a list body (Gemini's OpenAI-compatible endpoint)", () => {
    expect(
      readProviderError([
        { error: { code: 400, message: 'missing a thought_signature', status: 'INVALID_ARGUMENT' } },
        { error: { message: 'second' } },
      ]),
    ).toEqual({
      message: 'missing a thought_signature',
      status: 400,
      type: 'INVALID_ARGUMENT',
    });
    expect(readProviderError([])).toBeUndefined();
  });

  it("takes a status from a numeric or digit-string code, Azure's numeric status, or status_code", () => {
    expect(readProviderError({ error: { message: 'x', code: '429' } })).toEqual({ message: 'x', status: 429 });
    expect(readProviderError({ error: { message: 'x', code: 402 } })).toEqual({ message: 'x', status: 402 });
    expect(readProviderError({ error: { message: 'x', code: 'content_filter', status: 400 } })).toEqual({
      message: 'x',
      code: 'content_filter',
      status: 400,
    });
    expect(readProviderError({ error: { message: 'x', code: '42' } })).toEqual({ message: 'x', code: '42' });
    expect(readProviderError({ error: { message: 'x', status_code: 413 } })).toEqual({ message: 'x', status: 413 });
  });

  it('drops the "None" a Python server writes for a missing type or param', () => {
    expect(readProviderError({ error: { message: 'x', type: 'None', param: 'None' } })).toEqual({ message: 'x' });
  });

  it('reads whole frames: vLLM\'s {"object":"error"}, FastAPI\'s detail text, list and dict', () => {
    expect(readProviderError({ object: 'error', message: 'bad', type: 'BadRequestError', param: null, code: 400 })).toEqual({
      message: 'bad',
      type: 'BadRequestError',
      status: 400,
    });
    expect(readProviderError({ detail: 'oops' })).toEqual({ message: 'oops' });
    expect(readProviderError({ detail: [{ loc: ['body', 'stream_options'], msg: 'Extra inputs are not permitted' }] })).toEqual({
      message: 'stream_options: Extra inputs are not permitted',
      param: 'stream_options',
      validation: true,
    });
    expect(readProviderError({ detail: { message: 'no', code: 401 } })).toEqual({ message: 'no', status: 401 });
  });
});

describe('bodyText', () => {
  it('an HTML error page is its title and text, said once, without markup', () => {
    const nginx =
      '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
    expect(bodyText(nginx)).toBe('413 Request Entity Too Large (nginx)');
    expect(bodyText('<html><body><h1>Payload Too Large</h1></body></html>')).toBe('Payload Too Large');
    expect(bodyText('<html><title>Login</title></html>')).toBe('Login');
  });

  it('other text is kept as it is, cut when long', () => {
    expect(bodyText('  404 page not found\n')).toBe('404 page not found');
    expect(bodyText('')).toBe('');
    expect(bodyText('x'.repeat(2000)).length).toBeLessThan(600);
  });
});
