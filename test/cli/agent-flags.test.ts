/** The flags of `rein run` / `rein chat` turned into agent options: what is refused, and in whose words. */
import { describe, expect, it } from 'vitest';
import { agentOptionsFromFlags, limitsFromFlags, outputLimitWarning, type AgentFlagValues } from '../../src/cli/agent-flags.js';
import { ReinError } from '../../src/errors.js';
import { resolveModel } from '../../src/model/resolve.js';

const env = { OPENAI_API_KEY: 'x' };

/** The message of the `config` error `build` throws. */
function refusal(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ReinError);
    expect((error as ReinError).code).toBe('config');
    return (error as Error).message;
  }
  throw new Error('accepted');
}

const options = (values: AgentFlagValues, environment: NodeJS.ProcessEnv = env) =>
  refusal(() => agentOptionsFromFlags(values, environment));

describe('number flags take plain decimal digits', () => {
  it.each([
    ['max-steps', '0x10'],
    ['max-steps', '1e1'],
    ['max-steps', ' 3 '],
    ['max-steps', ''],
    ['max-steps', '0'],
    ['max-steps', '-1'],
    ['max-steps', '+3'],
    ['max-output-tokens', '0x100'],
    ['max-output-tokens', '4k'],
  ] as const)('--%s %j is refused, saying what it takes', (flag, value) => {
    const escaped = value.replace(/[.+]/g, '\\$&');
    expect(refusal(() => limitsFromFlags({ [flag]: value }))).toMatch(
      new RegExp(`^--${flag} expects a positive number, got "${escaped}" \\(a whole number of .* in plain digits, e\\.g\\. \\d+\\)$`),
    );
  });

  it('a fraction for a whole-number flag is refused as not whole', () => {
    expect(refusal(() => limitsFromFlags({ 'max-steps': '2.5' }))).toBe(
      '--max-steps expects a whole number, got "2.5" (a whole number of model calls in plain digits, e.g. 20)',
    );
  });

  it.each([
    ['timeout', '1e-9', /^--timeout expects a positive number of seconds, got "1e-9" \(in plain digits, e\.g\. 300 or 1\.5\)$/],
    ['timeout', 'Infinity', /^--timeout expects a positive number of seconds/],
    ['timeout', '0x10', /^--timeout expects a positive number of seconds/],
    ['timeout', '0', /^--timeout expects a positive number of seconds/],
    ['max-cost', '1e3', /^--max-cost expects a positive number of US dollars, got "1e3" \(in plain digits, e\.g\. 0\.50\)$/],
    ['max-cost', ' 1', /^--max-cost expects a positive number of US dollars/],
    ['max-cost', '$1', /^--max-cost expects a positive number of US dollars/],
  ] as const)('--%s %j is refused, saying what it takes', (flag, value, message) => {
    expect(refusal(() => limitsFromFlags({ [flag]: value }))).toMatch(message);
  });

  it('a whole number too large to be exact is refused, not rounded', () => {
    expect(refusal(() => limitsFromFlags({ 'max-steps': '99999999999999999999' }))).toBe(
      '--max-steps 99999999999999999999 is too large (at most 9007199254740991)',
    );
  });

  it('plain numbers are read as written', () => {
    expect(limitsFromFlags({ 'max-steps': '016', timeout: '1.5', 'max-cost': '.25', 'max-output-tokens': '4096' })).toEqual({
      limits: { maxSteps: 16, timeoutMs: 1500, maxCostUsd: 0.25, finalAnswerOnStop: true },
      modelOptions: { maxTokens: 4096 },
    });
  });
});

describe('--timeout', () => {
  it('takes up to 2147483 seconds, the longest a Node timer waits', () => {
    expect(limitsFromFlags({ timeout: '2147483' }).limits).toEqual({ timeoutMs: 2_147_483_000, finalAnswerOnStop: true });
    expect(limitsFromFlags({ 'no-final-answer': true }).limits).toEqual({ finalAnswerOnStop: false });
  });

  it('none means no limit, as leaving it out does for the library', () => {
    expect(limitsFromFlags({ timeout: 'none' }).limits).toEqual({ finalAnswerOnStop: true });
  });

  it('above that, is refused with the maximum and what leaving it out means', () => {
    expect(refusal(() => limitsFromFlags({ timeout: '2147484' }))).toBe(
      '--timeout 2147484 is too long: at most 2147483 seconds (about 24.8 days). Use --timeout none for no time limit',
    );
    expect(refusal(() => limitsFromFlags({ timeout: '99999999' }))).toMatch(/^--timeout 99999999 is too long/);
  });

  it('a time that rounds to 0 ms is refused as a CLI flag, not as limits.timeoutMs', () => {
    expect(refusal(() => limitsFromFlags({ timeout: '0.0000001' }))).toBe(
      '--timeout expects a positive number of seconds, got "0.0000001" (at least 0.001: 1 ms)',
    );
  });
});

describe('flags that contradict each other', () => {
  it('--store with --no-store is refused, naming both', () => {
    expect(options({ store: 'x.db', 'no-store': true })).toMatch(/^--store and --no-store cannot be used together/);
  });

  it('--tools with --no-tools is refused, naming both', () => {
    expect(options({ tools: 'calculate', 'no-tools': true })).toMatch(/^--tools and --no-tools cannot be used together/);
  });

  it('each alone is fine', () => {
    expect(agentOptionsFromFlags({ 'no-store': true, 'no-tools': true }, env).tools).toEqual([]);
    expect(() => agentOptionsFromFlags({ store: 'x.db', tools: 'calculate' }, env)).not.toThrow();
  });
});

describe('limits the model cannot keep are refused in CLI terms', () => {
  it('--max-cost for a model without a price says so and names the budget flags the CLI has', () => {
    const message = options({ model: 'openai/scripted', 'max-cost': '0.01' });
    expect(message).toBe(
      '--max-cost cannot be enforced: rein has no price for openai/scripted (rein models lists the models it has prices for). Limit the run with --max-steps or --timeout instead',
    );
    expect(message).not.toMatch(/limits\.|modelInfo/);
    expect(agentOptionsFromFlags({ model: 'openai/gpt-4o-mini', 'max-cost': '0.01' }, env).limits).toEqual({
      maxCostUsd: 0.01,
      finalAnswerOnStop: true,
    });
  });

  it('--max-output-tokens over the window the catalog gives the model is refused before any request', () => {
    expect(options({ model: 'openai/gpt-4o-mini', 'max-output-tokens': '200000' })).toBe(
      '--max-output-tokens 200000 is more than the 128000-token window of openai/gpt-4o-mini: the request needs room in it too. Lower --max-output-tokens',
    );
    expect(options({ model: 'openai/gpt-4o-mini', 'max-output-tokens': '128000' })).toMatch(
      /^--max-output-tokens 128000 is all of the 128000-token window/,
    );
  });

  it('for a model the catalog does not know, the window is the one rein assumes, and the message says so', () => {
    expect(options({ model: 'ollama/some-local-model', 'max-output-tokens': '200000' })).toMatch(
      /^--max-output-tokens 200000 is more than the 128000-token window rein assumes for ollama\/some-local-model \(a model its catalog does not know\)/,
    );
  });

  it('--max-output-tokens above the catalog output limit is a warning, not an error (the catalog may be behind)', () => {
    const model = resolveModel('openai/gpt-4o-mini', {}, env);
    expect(outputLimitWarning(model, 20_000)).toBe(
      "--max-output-tokens 20000 is more than the 16384 tokens rein's catalog gives openai/gpt-4o-mini for an answer; the provider may refuse the request",
    );
    expect(outputLimitWarning(model, 16_384)).toBeUndefined();
    expect(outputLimitWarning(model, undefined)).toBeUndefined();
    expect(outputLimitWarning(resolveModel('ollama/some-local-model', {}, env), 100_000)).toBeUndefined();
  });
});

describe('the model and its server, in CLI terms', () => {
  it('an unknown provider in REIN_MODEL says it came from REIN_MODEL, and suggests what a CLI user can do', () => {
    const message = options({}, { ...env, REIN_MODEL: 'bogus/x' });
    expect(message).toMatch(
      /^unknown provider "bogus" in REIN_MODEL=bogus\/x: rein knows openai, .*For another OpenAI-compatible server, use --model openai\/<model> with --base-url <url>$/,
    );
    expect(message).not.toMatch(/providers: \{/);
    expect(options({ model: 'bogus/x' })).toMatch(/^unknown provider "bogus" in "bogus\/x"/);
  });

  it("another error about REIN_MODEL's model says where the model came from", () => {
    expect(options({}, { REIN_MODEL: 'openai/gpt-4o' })).toMatch(
      /^OPENAI_API_KEY is not set.*\(the model is REIN_MODEL=openai\/gpt-4o; --model overrides it\)$/,
    );
    expect(options({ model: 'openai/gpt-4o' }, {})).not.toMatch(/REIN_MODEL/);
  });

  it('an empty REIN_MODEL is as good as unset', () => {
    expect(agentOptionsFromFlags({}, { ...env, REIN_MODEL: '' }).model).toMatchObject({ provider: 'openai', id: 'gpt-4o-mini' });
  });

  it('--base-url that is not an http(s) URL names the flag, not config.baseUrl, and does not echo the value', () => {
    expect(options({ 'base-url': 'ftp://user:secret@x' })).toBe(
      '--base-url must be an http:// or https:// URL up to the API version, e.g. http://127.0.0.1:11434/v1 (got a URL of scheme ftp)',
    );
    expect(options({ 'base-url': 'not a url' })).toMatch(/\(got something that is not a URL\)$/);
  });
});

describe('--header', () => {
  it('sends each header with every model request, and they are not kept with the run', () => {
    const built = agentOptionsFromFlags({ 'base-url': 'https://gw.example/v1', header: ['api-key: k-1', 'x-portkey-provider:openai'] }, {});
    expect(built.model).toMatchObject({ baseUrl: 'https://gw.example/v1', headers: { 'api-key': 'k-1', 'x-portkey-provider': 'openai' } });
    expect(JSON.stringify(built.metadata ?? {})).not.toContain('k-1');
  });

  it('is refused without a colon, with a name HTTP does not allow, or with a line break in the value, without quoting the value', () => {
    expect(options({ header: ['api-key k-1'] })).toBe(
      `--header takes "name: value", e.g. --header 'api-key: …' (got no ":" between name and value)`,
    );
    expect(options({ header: ['bad name: v'] })).toMatch(/the name "bad name" is not a header name/);
    const message = options({ header: ['x-key: se\ncret'] });
    expect(message).toMatch(/^--header x-key: the value holds a line break/);
    expect(message).not.toContain('cret');
  });
});
