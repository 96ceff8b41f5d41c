// Error classification as an ordered table: each refusal takes the first rule that holds.
import { describe, expect, it } from 'vitest';
import { errorRules, type Refusal } from '../../src/model/error-rules.js';
import { errorFromResponse } from '../../src/model/http-errors.js';

const rules = errorRules({
  apiKeyEnvName: (p) => `${p.toUpperCase()}_API_KEY`,
  redirectTarget: (l) => l,
  header: (h, n) => h[n] as string | undefined,
  apiPath: (u) => u,
});
const ctx = { provider: 'openai', model: 'gpt-4o', url: 'https://api.example/v1/chat/completions' };

function refusal(status: number | undefined, message: string, code = ''): Refusal {
  return {
    info: { message, ...(code ? { code } : {}) },
    message,
    code,
    type: '',
    status,
    headers: {},
    ctx,
    statusText: status === undefined ? 'in the stream' : `HTTP ${status}`,
    said: `: ${message}`,
    at: 'openai (url)',
  };
}
const first = (r: Refusal) => rules.find((rule) => rule.when(r));

describe('the error rules', () => {
  it('have one name each, and the last holds for anything', () => {
    expect(new Set(rules.map((r) => r.name)).size).toBe(rules.length);
    expect(rules.at(-1)?.when(refusal(418, 'teapot'))).toBe(true);
  });

  it('are read in order: the first that holds decides the code, the kind and the advice', () => {
    // A 413 is never retried, even when its code says rate limit (Groq's TPM refusal).
    expect(first(refusal(413, 'Request too large on tokens per minute (TPM)', 'rate_limit_exceeded'))).toMatchObject({
      code: 'context_length',
      kind: 'fatal',
    });
    expect(first(refusal(429, 'slow down', 'rate_limit_exceeded'))).toMatchObject({ name: 'rate limited', kind: 'transient' });
    expect(first(refusal(404, 'The model `gpt-9` does not exist'))?.name).toBe('unknown model');
    expect(first(refusal(404, 'Invalid URL (POST /v1/chat/completion)'))?.name).toBe('wrong path');
    expect(first(refusal(400, 'llama3 does not support tools'))?.name).toBe('request refused');
  });

  it('are what errorFromResponse answers with', () => {
    const error = errorFromResponse(
      400,
      {},
      JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } }),
      ctx,
    );
    expect([error.code, error.kind]).toEqual(['context_length', 'fatal']);
    expect(error.message).toBe(
      first(refusal(400, "This model's maximum context length is 8192 tokens", 'context_length_exceeded'))?.advice({
        ...refusal(400, "This model's maximum context length is 8192 tokens", 'context_length_exceeded'),
        at: `openai (${ctx.url})`,
      }),
    );
  });
});
