/**
 * The line the CLI prints for the provider errors http-errors.ts classifies: the hint under
 * it must fit the error (no --no-tools hint for a content filter, no "wait" for used-up credit).
 */
import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/cli/render.js';
import { errorFromResponse } from '../../src/model/http-errors.js';
import type { ErrorContext } from '../../src/model/http-errors.js';

const ctx: ErrorContext = { provider: 'openai', model: 'm', url: 'http://127.0.0.1:1/v1/chat/completions' };
const line = (status: number, body: string): string =>
  describeError(errorFromResponse(status, {}, body, ctx).toJSON(), { provider: 'openai', retries: 0 });

describe('CLI hints for provider errors', () => {
  it('used-up credit (402) says to add credit, not to wait', () => {
    const text = line(
      402,
      '{"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}}',
    );
    expect(text).toMatch(/^error \(rate_limited\): .*Insufficient Balance/);
    expect(text).toMatch(/\nThe credit or quota of the API key is used up; add credit or change the plan \(retrying will not help\)\.$/);
    expect(text).not.toMatch(/--no-tools|wait/);
  });

  it('a content-filter refusal says to rephrase, without the --no-tools hint', () => {
    const text = line(
      400,
      '{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI\'s content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}',
    );
    expect(text).toMatch(/^error \(content_filter\): /);
    expect(text).toMatch(/\nThe provider's content filter refused the prompt; rephrase the task\.$/);
    expect(text).not.toContain('--no-tools');
  });

  it('a 413 says the request is too large: --max-output-tokens for tokens, the body size limit for bytes', () => {
    const tokens = line(
      413,
      '{"error":{"message":"Request too large for model `x` on tokens per minute (TPM): Limit 12000, Requested 19764","type":"tokens","code":"rate_limit_exceeded"}}',
    );
    expect(tokens).toMatch(
      /\nThe request is larger than the provider accepts for this model or account; shorten the task or lower --max-output-tokens\.$/,
    );
    const bytes = line(413, '<html><head><title>413 Request Entity Too Large</title></head></html>');
    expect(bytes).toMatch(
      /\nThe request is larger than the server or a proxy in front of it accepts; shorten the task or raise its body size limit\.$/,
    );
    for (const text of [tokens, bytes]) expect(text).not.toMatch(/--no-tools|rate-limit/);
  });

  it('other 400s keep the --no-tools hint', () => {
    expect(line(400, '{"error":{"message":"model x does not support tools"}}')).toContain('run with --no-tools');
  });
});
