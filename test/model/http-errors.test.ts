import { describe, expect, it } from 'vitest';
import type { ReinError } from '../../src/errors.js';
import {
  errorFromNetwork,
  errorFromResponse,
  errorFromStreamPayload,
  parseRetryAfter,
  streamCutError,
} from '../../src/model/http-errors.js';
import type { ErrorContext } from '../../src/model/http-errors.js';
import { readFixture } from './fixture-server.js';

const ctx: ErrorContext = { provider: 'openai', model: 'gpt-4o', url: 'https://api.openai.com/v1/chat/completions' };

interface ObservedItem {
  provider: string;
  status: number | null;
  scenario: string;
  headers?: Record<string, string>;
  body: unknown;
}

const observed = (JSON.parse(readFixture('errors/observed-in-issue-reports.json')) as { items: ObservedItem[] }).items;

function classifyObserved(item: ObservedItem): ReinError {
  if (item.status === null) return errorFromStreamPayload(item.body, ctx);
  return errorFromResponse(item.status, item.headers ?? {}, item.body === null ? '' : JSON.stringify(item.body), ctx);
}

describe('error payloads observed in issue reports', () => {
  // [scenario substring, code, kind, retryAfterMs]
  const expected: Array<[string, string, string, number | undefined]> = [
    ['older message format', 'rate_limited', 'transient', 6],
    ['Limit/Used/Requested', 'rate_limited', 'transient', 26_604],
    ['rate limit delivered INSIDE a Responses stream', 'rate_limited', 'transient', 1574],
    ['server_error delivered as a Responses stream', 'server_error', 'transient', undefined],
    ['context_length_exceeded (messages only)', 'context_length', 'fatal', undefined],
    ['context_length_exceeded (messages + requested completion)', 'context_length', 'fatal', undefined],
    ['context length exceeded on an OpenAI-compatible provider', 'context_length', 'fatal', undefined],
    ['server_error', 'server_error', 'transient', undefined],
    ['rate_limit_error body', 'rate_limited', 'transient', undefined],
    ['429 response HEADERS', 'rate_limited', 'transient', undefined],
    ['overloaded_error (HTTP 529)', 'overloaded', 'transient', undefined],
    ['overloaded_error, newer shape', 'overloaded', 'transient', undefined],
    ['api_error with message "Overloaded"', 'overloaded', 'transient', undefined],
    ['prompt too long', 'context_length', 'fatal', undefined],
  ];

  it('has an expectation for every item', () => {
    expect(observed).toHaveLength(expected.length);
  });

  for (const [index, [scenario, code, kind, retryAfterMs]] of expected.entries()) {
    it(`${scenario} → ${code} (${kind})`, () => {
      const item = observed[index] as ObservedItem;
      expect(item.scenario).toContain(scenario);
      const error = classifyObserved(item);
      expect([error.code, error.kind, error.retryAfterMs]).toEqual([code, kind, retryAfterMs]);
      const said =
        (item.body as { error?: { message?: string }; message?: string } | null)?.error?.message ??
        (item.body as { message?: string } | null)?.message;
      if (said !== undefined) expect(error.message).toContain(said);
    });
  }
});

describe('errorFromResponse', () => {
  it('honours retry-after on a 429', () => {
    const error = errorFromResponse(429, { 'retry-after': '1' }, '{"error":{"message":"slow down"}}', ctx);
    expect([error.code, error.kind, error.retryAfterMs, error.status]).toEqual(['rate_limited', 'transient', 1000, 429]);
  });

  it('401 names the provider’s key variable', () => {
    const error = errorFromResponse(401, {}, '{"error":{"message":"No auth credentials found","code":401}}', {
      ...ctx,
      provider: 'openrouter',
    });
    expect([error.code, error.kind]).toEqual(['auth', 'fatal']);
    expect(error.message).toContain('OPENROUTER_API_KEY');
    expect(error.message).toContain('No auth credentials found');
  });

  it('407 from a proxy on the way says to put credentials in the proxy URL', () => {
    const error = errorFromResponse(407, { 'proxy-authenticate': 'Basic realm="corp"' }, 'Proxy Authentication Required', ctx);
    expect([error.code, error.kind]).toEqual(['auth', 'fatal']);
    expect(error.message).toContain('proxy');
    expect(error.message).toContain('http://user:password@host:port');
  });

  it('a FastAPI / pydantic 422 is read as each location and message, without the echoed request', () => {
    const body = JSON.stringify({
      detail: [{ type: 'missing', loc: ['body', 'messages', 0, 'content'], msg: 'Field required', input: { secret: 'sk-echoed' } }],
    });
    const error = errorFromResponse(422, {}, body, ctx);
    expect(error.message).toContain('messages.0.content: Field required');
    expect(error.message).not.toContain('sk-echoed');
  });

  it('a 3xx is a fatal config error quoting the absolute redirect target, or saying there is none', () => {
    const moved = errorFromResponse(301, { Location: 'https://api.example.com/v1/chat/completions' }, '<html>Moved</html>', {
      ...ctx,
      url: 'http://api.example.com/v1/chat/completions',
    });
    expect([moved.code, moved.kind, moved.status]).toEqual(['config', 'fatal', 301]);
    expect(moved.message).toContain('redirected the request to https://api.example.com/v1/chat/completions (HTTP 301)');
    expect(moved.message).toContain('set the base URL');
    expect(errorFromResponse(307, { location: 'completions/' }, '', ctx).message).toContain(
      'to https://api.openai.com/v1/chat/completions/ (HTTP 307)',
    );
    expect(errorFromResponse(302, {}, '', ctx).message).toContain('without saying where (no Location header)');
  });

  it('403 is auth as well', () => {
    expect(errorFromResponse(403, {}, '{"error":{"message":"forbidden"}}', ctx).code).toBe('auth');
  });

  it('404 without a model in the message is not_found, pointing at the base URL', () => {
    const error = errorFromResponse(404, {}, '404 page not found', ctx);
    expect([error.code, error.kind]).toEqual(['not_found', 'fatal']);
    expect(error.message).toContain('base URL');
    expect(error.message).toContain('404 page not found');
  });

  it('maps the other statuses', () => {
    const cases: Array<[number, string, string]> = [
      [408, 'timeout', 'transient'],
      [409, 'server_error', 'transient'],
      [422, 'bad_request', 'fatal'],
      [500, 'server_error', 'transient'],
      [502, 'server_error', 'transient'],
      [529, 'overloaded', 'transient'],
      [418, 'bad_request', 'fatal'],
    ];
    for (const [status, code, kind] of cases) {
      const error = errorFromResponse(status, {}, '', ctx);
      expect([status, error.code, error.kind]).toEqual([status, code, kind]);
      expect(error.message).toContain(`HTTP ${status} with an empty body`);
    }
  });

  it('an exhausted quota is a fatal 429: retrying cannot help', () => {
    const error = errorFromResponse(
      429,
      { 'retry-after': '1' },
      '{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}',
      ctx,
    );
    expect([error.code, error.kind, error.retryAfterMs]).toEqual(['rate_limited', 'fatal', undefined]);
    expect(error.message).toContain('You exceeded your current quota');
  });

  it('context size errors of llama.cpp (400, and 500 which is not retried) and TGI (422) are context_length', () => {
    const cases: Array<[number, string, string]> = [
      [
        400,
        '{"error":{"code":400,"message":"request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":4390,"n_ctx":4096}}',
        'exceeds the available context size (4096 tokens)',
      ],
      [
        500,
        '{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}',
        'Context size has been exceeded. Shorten',
      ],
      [
        422,
        '{"error":"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`","error_type":"validation"}',
        '`inputs` tokens + `max_new_tokens` must be <= 4096',
      ],
    ];
    for (const [status, body, said] of cases) {
      const error = errorFromResponse(status, {}, body, ctx);
      expect([status, error.code, error.kind]).toEqual([status, 'context_length', 'fatal']);
      expect(error.message).toContain(said);
    }
    // The same llama.cpp error inside a stream (its `error:` field) carries the status in the body.
    expect(
      errorFromStreamPayload(
        { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error' },
        ctx,
      ).code,
    ).toBe('context_length');
  });

  it('errors that only mention a size or a context are not context_length', () => {
    const cases: Array<[number, string, string]> = [
      [422, '{"error":"Input validation error: `max_new_tokens` must be <= 2048. Given: 4096","error_type":"validation"}', 'bad_request'],
      [400, '{"error":{"message":"Invalid \'max_tokens\': integer below minimum value.","type":"invalid_request_error"}}', 'bad_request'],
      [500, '{"error":{"code":500,"message":"failed to allocate the context","type":"server_error"}}', 'server_error'],
      [
        429,
        '{"error":{"message":"Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.","type":"tokens","code":"rate_limit_exceeded"}}',
        'rate_limited',
      ],
    ];
    for (const [status, body, code] of cases) expect([status, errorFromResponse(status, {}, body, ctx).code]).toEqual([status, code]);
  });

  it('an unknown model refused with 400 (OpenRouter, DeepSeek) is model_not_found with its hint', () => {
    const openrouter = errorFromResponse(400, {}, '{"error":{"message":"test is not a valid model ID","code":400},"user_id":"user_x"}', {
      ...ctx,
      provider: 'openrouter',
      model: 'test',
    });
    expect([openrouter.code, openrouter.kind]).toEqual(['model_not_found', 'fatal']);
    expect(openrouter.message).toContain('test is not a valid model ID. Check the model id ("openrouter/test")');
    const deepseek = errorFromResponse(
      400,
      {},
      '{"error":{"message":"Model Not Exist","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}',
      ctx,
    );
    expect([deepseek.code, deepseek.kind]).toEqual(['model_not_found', 'fatal']);
    for (const message of ['The model `x` does not exist', 'Unknown model: x', 'no such model: x', 'Invalid model id x']) {
      expect([message, errorFromResponse(400, {}, JSON.stringify({ error: { message } }), ctx).code]).toEqual([message, 'model_not_found']);
    }
  });

  it('a 400 about what a model does not support is not model_not_found', () => {
    for (const message of [
      'model qwen2.5 does not support tools',
      'registry.ollama.ai/library/gemma:2b does not support tools',
      'This model does not support the temperature parameter',
      'invalid model output: expected a tool call',
      'The model produced invalid content',
    ]) {
      expect([message, errorFromResponse(400, {}, JSON.stringify({ error: { message } }), ctx).code]).toEqual([message, 'bad_request']);
    }
  });

  it('quotes a provider message that ends with a period with exactly one period after it', () => {
    const error = errorFromResponse(
      404,
      {},
      '{"object":"error","message":"The model `test` does not exist.","type":"NotFoundError","param":null,"code":404}',
      ctx,
    );
    expect(error.message).toContain('does not exist. Check the model id');
    expect(error.message).not.toContain('..');
    const limited = errorFromResponse(
      429,
      { 'retry-after': '120' },
      '{"error":{"message":"Rate limit reached. Please try again in 2m0s.","type":"tokens","code":"rate_limit_exceeded"}}',
      ctx,
    );
    expect(limited.message).toContain('Please try again in 2m0s. Lower the concurrency');
    expect(limited.message).not.toContain('Retried');
  });

  it('quotes a long non-JSON body only in part', () => {
    const error = errorFromResponse(502, {}, `<html>${'x'.repeat(5000)}</html>`, ctx);
    expect(error.message.length).toBeLessThan(1000);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it('reads seconds, fractions, HTTP dates and retry-after-ms (which wins)', () => {
    expect(parseRetryAfter({ 'retry-after': '2' }, undefined, now)).toBe(2000);
    expect(parseRetryAfter({ 'retry-after': '1.5' }, undefined, now)).toBe(1500);
    expect(parseRetryAfter({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }, undefined, now)).toBe(30_000);
    expect(parseRetryAfter({ 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' }, undefined, now)).toBe(0);
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }, undefined, now)).toBe(250);
    expect(parseRetryAfter({ 'Retry-After': '3' }, undefined, now)).toBe(3000);
  });

  it('falls back to the "try again in" hint in the message', () => {
    expect(parseRetryAfter({}, 'Please try again in 1.5s.')).toBe(1500);
    expect(parseRetryAfter({}, 'Please try again in 20ms.')).toBe(20);
    expect(parseRetryAfter({}, 'Please try again in 1m30s.')).toBe(90_000);
    expect(parseRetryAfter({}, 'no hint here')).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'soon' })).toBeUndefined();
  });
});

describe('errorFromNetwork', () => {
  const errno = (code: string, message: string): Error => Object.assign(new Error(message), { code });

  it('connection refused, reset, DNS failures and hang-ups are transient and name the URL', () => {
    for (const [code, message] of [
      ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'],
      ['ECONNRESET', 'socket hang up'],
      ['ENOTFOUND', 'getaddrinfo ENOTFOUND api.example'],
    ] as const) {
      const error = errorFromNetwork(errno(code, message), ctx);
      expect([code, error.code, error.kind]).toEqual([code, 'network', 'transient']);
      expect(error.message).toContain(ctx.url);
    }
    const timedOut = errorFromNetwork(errno('ETIMEDOUT', 'connect ETIMEDOUT'), ctx);
    expect([timedOut.code, timedOut.kind]).toEqual(['timeout', 'transient']);
    expect(timedOut.message).toContain(ctx.url);
  });

  it('an error that is not from the socket is not a network error, and is not retried', () => {
    const bug = errorFromNetwork(new TypeError('x is not a function'), ctx);
    expect([bug.code, bug.kind]).toEqual(['internal', 'fatal']);
    const invalid = errorFromNetwork(errno('ERR_INVALID_CHAR', 'Invalid character in header content ["authorization"]'), ctx);
    expect([invalid.code, invalid.kind]).toEqual(['config', 'fatal']);
    expect(invalid.message).toContain(ctx.url);
  });

  it('an abort is aborted; a TLS failure is fatal', () => {
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(errorFromNetwork(abort, ctx).code).toBe('aborted');
    const tls = errorFromNetwork(errno('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'), ctx);
    expect([tls.code, tls.kind]).toEqual(['network', 'fatal']);
  });

  it('streamCutError is transient', () => {
    expect(streamCutError(ctx)).toMatchObject({ code: 'stream_cut', kind: 'transient' });
  });
});

describe('error shapes replayed from real servers', () => {
  it("reads the first entry of an array body (Gemini's OpenAI-compatible endpoint) instead of quoting the JSON", () => {
    const message = 'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly.';
    const body = JSON.stringify([{ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }], null, 2);
    const error = errorFromResponse(400, {}, body, ctx);
    expect([error.code, error.kind, error.status]).toEqual(['bad_request', 'fatal', 400]);
    expect(error.message).toContain(`(HTTP 400): ${message.slice(0, -1)}. Fix the request`);
    expect(error.message).not.toContain('"error"');
    expect(error.details).toEqual({ type: 'INVALID_ARGUMENT' });
    // The same list inside a stream, and a list whose first entry is not an error.
    expect(errorFromStreamPayload([{ error: { code: 429, message: 'Resource has been exhausted' } }], ctx)).toMatchObject({
      code: 'rate_limited',
      kind: 'transient',
      status: 429,
    });
    expect(errorFromResponse(400, {}, '[]', ctx).message).toContain('(HTTP 400): []');
  });

  it('HTTP 402 (OpenRouter, DeepSeek) is a used-up credit like insufficient_quota: fatal, never retried', () => {
    const openrouter = errorFromResponse(
      402,
      { 'retry-after': '1' },
      '{"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits"}}',
      ctx,
    );
    const deepseek = errorFromResponse(
      402,
      {},
      '{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}',
      ctx,
    );
    for (const error of [openrouter, deepseek]) {
      expect([error.code, error.kind, error.retryAfterMs, error.status]).toEqual(['rate_limited', 'fatal', undefined, 402]);
      expect(error.message).toContain('credit or quota of this API key is used up (HTTP 402)');
      expect(error.message).toContain('Add credit or check the plan of the key; retrying will not help');
      expect(error.message).not.toContain('Fix the request');
    }
    expect(deepseek.message).toContain(': Insufficient Balance. Add credit');
    // OpenRouter's 402 for an output budget the credit left cannot pay for says to ask for less.
    const afford = errorFromResponse(
      402,
      {},
      '{"error":{"code":402,"message":"This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens, but can only afford 1000."}}',
      ctx,
    );
    expect(afford.message).toContain('or ask for fewer output tokens (--max-output-tokens); retrying will not help');
    // The same in a stream chunk (OpenRouter puts the status in `code`).
    expect(errorFromStreamPayload({ code: 402, message: 'Insufficient credits' }, ctx)).toMatchObject({
      code: 'rate_limited',
      kind: 'fatal',
    });
  });

  it('a 413 counted in tokens (Groq TPM) is context_length, never retried, and says to shorten or lower --max-output-tokens', () => {
    const body =
      '{"error":{"message":"Request too large for model `llama-3.3-70b-versatile` in organization `org_x` service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 19764, please reduce your message size and try again.","type":"tokens","code":"rate_limit_exceeded"}}';
    const error = errorFromResponse(413, { 'retry-after': '7' }, body, ctx);
    expect([error.code, error.kind, error.retryAfterMs, error.status]).toEqual(['context_length', 'fatal', undefined, 413]);
    expect(error.message).toContain('refused the request as too large for gpt-4o or for the token limit of this account (HTTP 413)');
    expect(error.message).toContain('Limit 12000, Requested 19764');
    expect(error.message).toContain('Shorten the conversation');
    expect(error.message).toContain('lower --max-output-tokens (modelOptions.maxTokens)');
    expect(error.message).not.toContain('Rate limited');
    // A context-window message with 413 goes the same way.
    expect(errorFromResponse(413, {}, '{"error":{"message":"maximum context length exceeded"}}', ctx)).toMatchObject({
      code: 'context_length',
      kind: 'fatal',
    });
  });

  it("a 413 with an HTML or empty body (a proxy's body size limit) is a fatal bad_request naming that limit", () => {
    const nginx =
      '<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
    const html = errorFromResponse(413, {}, nginx, ctx);
    expect([html.code, html.kind, html.status]).toEqual(['bad_request', 'fatal', 413]);
    expect(html.message).toContain(
      'refused the request as too large (HTTP 413): 413 Request Entity Too Large (nginx). The server, or a reverse proxy in front of it, limits the size of a request body',
    );
    expect(html.message).not.toContain('<');
    expect(html.message).not.toContain('remove the option');
    // Anthropic's own 413 counts bytes, not tokens.
    const bytes = errorFromResponse(
      413,
      {},
      '{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
      ctx,
    );
    expect([bytes.code, bytes.kind]).toEqual(['bad_request', 'fatal']);
    const empty = errorFromResponse(413, {}, '', ctx);
    expect([empty.code, empty.kind]).toEqual(['bad_request', 'fatal']);
    expect(empty.message).toContain('limits the size of a request body');
  });

  it("Azure's content-filter 400 is content_filter, fatal, saying to rephrase (not to remove an option)", () => {
    const body =
      '{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI\'s content management policy. Please modify your prompt and retry.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"}}}}}';
    const error = errorFromResponse(400, {}, body, { ...ctx, provider: 'azure' });
    expect([error.code, error.kind, error.status]).toEqual(['content_filter', 'fatal', 400]);
    expect(error.message).toContain('The content filter of azure');
    expect(error.message).toContain('refused the prompt (HTTP 400)');
    expect(error.message).toContain('Rephrase the task');
    expect(error.message).not.toContain('Fix the request');
    expect(error.details).toEqual({ code: 'content_filter', param: 'prompt' });
  });

  it('a status code written as a string in a stream payload (LiteLLM "429") counts as the status', () => {
    const payload = {
      error: {
        message: 'litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for gpt-4o. Please try again in 1s.',
        type: 'None',
        param: 'None',
        code: '429',
      },
    };
    const error = errorFromStreamPayload(payload, ctx);
    expect([error.code, error.kind, error.retryAfterMs, error.status]).toEqual(['rate_limited', 'transient', 1000, 429]);
    expect(error.message).toContain('(in the stream, status 429)');
    // Python's None written as a string is no type or parameter.
    expect(error.details).toBeUndefined();
    expect(errorFromStreamPayload({ error: { message: 'boom', code: '503' } }, ctx)).toMatchObject({
      code: 'server_error',
      kind: 'transient',
      status: 503,
    });
    // A word is still a code, not a status.
    expect(errorFromStreamPayload({ error: { message: 'slow down', code: 'rate_limit_exceeded' } }, ctx).details).toEqual({
      code: 'rate_limit_exceeded',
    });
  });

  it('whole error frames of vLLM and FastAPI servers inside a 200 stream', () => {
    const vllm = {
      object: 'error',
      message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
      type: 'BadRequestError',
      param: null,
      code: 400,
    };
    const overflow = errorFromStreamPayload(vllm, ctx);
    expect([overflow.code, overflow.kind, overflow.status]).toEqual(['context_length', 'fatal', 400]);
    expect(overflow.message).toContain("(in the stream, status 400): This model's maximum context length is 4096 tokens");
    const other = errorFromStreamPayload(
      { object: 'error', message: 'tool_choice "required" is not supported', type: 'BadRequestError', param: null, code: 400 },
      ctx,
    );
    expect([other.code, other.kind]).toEqual(['bad_request', 'fatal']);
    const crashed = errorFromStreamPayload(
      { object: 'error', message: 'Internal error', type: 'InternalServerError', param: null, code: 500 },
      ctx,
    );
    expect([crashed.code, crashed.kind]).toEqual(['server_error', 'transient']);

    const detail = errorFromStreamPayload({ detail: 'Internal server error: CUDA out of memory' }, ctx);
    expect([detail.code, detail.kind]).toEqual(['server_error', 'transient']);
    expect(detail.message).toContain('(in the stream): Internal server error: CUDA out of memory');
    // A validation list refuses the request's shape: retrying the same request cannot pass it.
    const invalid = errorFromStreamPayload(
      { detail: [{ type: 'missing', loc: ['body', 'messages', 0, 'content'], msg: 'Field required', input: { secret: 'sk-echoed' } }] },
      ctx,
    );
    expect([invalid.code, invalid.kind]).toEqual(['bad_request', 'fatal']);
    expect(invalid.message).toContain('messages.0.content: Field required');
    expect(invalid.message).not.toContain('sk-echoed');
    // An HTTPException raised with a dict.
    expect(errorFromStreamPayload({ detail: { error: { message: 'Rate limit exceeded', code: 429 } } }, ctx)).toMatchObject({
      code: 'rate_limited',
      kind: 'transient',
    });
  });
});

describe('errors relayed by gateways', () => {
  it('a 404 that echoes a path with /models/ in it is a wrong base URL, not an unknown model', () => {
    const body = JSON.stringify({
      status: 'failure',
      message: 'google error: Invalid URL (POST /v1beta/v1beta/models/scripted:streamGenerateContent)',
    });
    expect(errorFromResponse(404, {}, body, ctx).code).toBe('not_found');
    // A message about the model itself still is one.
    expect(errorFromResponse(404, {}, JSON.stringify({ error: { message: 'The model `gpt-5x` does not exist' } }), ctx).code).toBe(
      'model_not_found',
    );
  });

  it('a required field the request lacks gets a hint to send it, not to remove an option', () => {
    const body = JSON.stringify({ status: 'failure', message: 'anthropic error: max_tokens: Field required' });
    const error = errorFromResponse(400, {}, body, ctx);
    expect(error.code).toBe('bad_request');
    expect(error.message).toContain(
      'The server requires "max_tokens", which the request did not carry: set the output limit (--max-output-tokens; modelOptions.maxTokens)',
    );
    expect(error.message).not.toContain('remove the option');
  });
});
