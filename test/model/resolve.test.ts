import { describe, expect, it } from 'vitest';
import { ReinError } from '../../src/errors.js';
import { apiKeyEnvName, resolveModel } from '../../src/model/resolve.js';

function configError(fn: () => unknown): ReinError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ReinError);
    expect((error as ReinError).code).toBe('config');
    expect((error as ReinError).kind).toBe('fatal');
    return error as ReinError;
  }
  throw new Error('expected a config error');
}

describe('resolveModel', () => {
  it('openai/<id> reads OPENAI_API_KEY and the default base URL', () => {
    expect(resolveModel('openai/gpt-4o', {}, { OPENAI_API_KEY: 'sk-1' })).toEqual({
      provider: 'openai',
      id: 'gpt-4o',
      api: 'openai-chat',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-1',
    });
  });

  it('a bare id means openai/<id>', () => {
    expect(resolveModel('gpt-4o-mini', {}, { OPENAI_API_KEY: 'sk-1' })).toMatchObject({ provider: 'openai', id: 'gpt-4o-mini' });
  });

  it('a missing OPENAI_API_KEY says how to fix it', () => {
    const error = configError(() => resolveModel('openai/gpt-4o', {}, {}));
    expect(error.message).toBe('OPENAI_API_KEY is not set: export it, or point OPENAI_BASE_URL at a server that needs no key');
    configError(() => resolveModel('openai/gpt-4o', {}, { OPENAI_API_KEY: '  ' }));
    // Unless requests never reach the provider (an agent's own streamFn).
    expect(resolveModel('openai/gpt-4o', { keyOptional: true }, {}).apiKey).toBeUndefined();
  });

  it('OPENAI_BASE_URL pointing elsewhere makes the key optional (local servers)', () => {
    const model = resolveModel('openai/qwen', {}, { OPENAI_BASE_URL: 'http://localhost:8080/v1/' });
    expect(model).toEqual({ provider: 'openai', id: 'qwen', api: 'openai-chat', baseUrl: 'http://localhost:8080/v1' });
  });

  it('local providers need no key', () => {
    expect(resolveModel('ollama/llama3.1', {}, {})).toMatchObject({
      provider: 'ollama',
      id: 'llama3.1',
      baseUrl: 'http://127.0.0.1:11434/v1',
    });
    expect(resolveModel('ollama/llama3.1', {}, { OLLAMA_BASE_URL: 'http://gpu-box:11434/v1' }).baseUrl).toBe('http://gpu-box:11434/v1');
    expect(resolveModel('vllm/Qwen/Qwen2.5-7B-Instruct', {}, {})).toMatchObject({
      id: 'Qwen/Qwen2.5-7B-Instruct',
      baseUrl: 'http://127.0.0.1:8000/v1',
    });
    expect(resolveModel('vllm/m', {}, { VLLM_BASE_URL: 'http://h:9000/v1', VLLM_API_KEY: 'k' })).toMatchObject({
      baseUrl: 'http://h:9000/v1',
      apiKey: 'k',
    });
    expect(resolveModel('lmstudio/qwen3-8b', {}, {})).toMatchObject({ baseUrl: 'http://127.0.0.1:1234/v1' });
    expect(resolveModel('ollama/llama3.1', {}, {})).not.toHaveProperty('apiKey');
  });

  it('openrouter keeps the slashes of the model id and needs OPENROUTER_API_KEY', () => {
    expect(resolveModel('openrouter/anthropic/claude-sonnet-4.5', {}, { OPENROUTER_API_KEY: 'or-1' })).toEqual({
      provider: 'openrouter',
      id: 'anthropic/claude-sonnet-4.5',
      api: 'openai-chat',
      baseUrl: 'https://openrouter.ai/api/v1',
      apiKey: 'or-1',
    });
    expect(configError(() => resolveModel('openrouter/x/y', {}, {})).message).toContain('OPENROUTER_API_KEY is not set');
  });

  it('config overrides base URL, key and headers', () => {
    const model = resolveModel(
      'openai/gpt-4o',
      { baseUrl: 'https://proxy.example/v1', apiKey: 'sk-cfg', headers: { 'x-a': '1' } },
      { OPENAI_API_KEY: 'sk-env' },
    );
    expect(model).toMatchObject({ baseUrl: 'https://proxy.example/v1', apiKey: 'sk-cfg', headers: { 'x-a': '1' } });
  });

  it('an unknown prefix uses a configured provider', () => {
    const providers = { together: { baseUrl: 'https://api.together.xyz/v1', apiKeyEnv: 'TOGETHER_API_KEY', headers: { 'x-p': 'p' } } };
    expect(resolveModel('together/meta-llama/Llama-3-70b', { providers }, { TOGETHER_API_KEY: 't-1' })).toEqual({
      provider: 'together',
      id: 'meta-llama/Llama-3-70b',
      api: 'openai-chat',
      baseUrl: 'https://api.together.xyz/v1',
      apiKey: 't-1',
      headers: { 'x-p': 'p' },
    });
    expect(configError(() => resolveModel('together/x', { providers }, {})).message).toContain('TOGETHER_API_KEY is not set');
    expect(resolveModel('local/x', { providers: { local: { baseUrl: 'http://127.0.0.1:5000/v1' } } }, {})).not.toHaveProperty('apiKey');
  });

  it('an unknown provider lists the known ones and says how to add one', () => {
    const error = configError(() => resolveModel('acme/model-1', {}, {}));
    expect(error.message).toContain('Unknown model provider "acme"');
    expect(error.message).toContain('openai, openai-responses, anthropic, gemini, ollama, vllm, lmstudio, openrouter');
    expect(error.message).toContain('providers: { "acme": { baseUrl:');
  });

  it('an invalid base URL is a config error naming it and where it came from', () => {
    const error = configError(() => resolveModel('openai/gpt-4o', {}, { OPENAI_BASE_URL: 'localhost:8080' }));
    expect(error.message).toContain('"localhost:8080"');
    expect(error.message).toContain('OPENAI_BASE_URL');
    configError(() => resolveModel('x/y', { providers: { x: { baseUrl: 'not a url' } } }, {}));
  });

  it('an invalid base URL is quoted without what may be a user or password', () => {
    for (const value of [
      'ftp://alice:s3cret@host/v1',
      'alice:s3cret@host/v1',
      'http://alice:s3/cret@host/v1',
      'ftp://host/v1?token=s3cret',
    ]) {
      const error = configError(() => resolveModel('openai/gpt-4o', {}, { OPENAI_BASE_URL: value }));
      expect(error.message).toContain('OPENAI_BASE_URL');
      expect(error.message).not.toContain('s3');
      expect(error.message).not.toContain('alice');
    }
    const custom = configError(() => resolveModel('x/y', { providers: { x: { baseUrl: 'ftp://alice:s3cret@host/v1' } } }, {}));
    expect(custom.message).toContain('"ftp://…@host/v1" (from providers.x.baseUrl)');
    expect(configError(() => resolveModel('openai/m', {}, { OPENAI_BASE_URL: 'http://alice:s3/cret@host/v1' })).message).toContain(
      'must be %-encoded',
    );
  });

  it('accepts a user and password in the base URL and keeps them for the request', () => {
    expect(resolveModel('openai/m', {}, { OPENAI_BASE_URL: 'http://alice:s3cret@gw.example/v1/' }).baseUrl).toBe(
      'http://alice:s3cret@gw.example/v1',
    );
  });

  it('drops the trailing slashes of the path only, keeping the query as written', () => {
    const azure = 'https://x.openai.azure.com/openai/deployments/gpt4?api-version=2024-10-21';
    expect(resolveModel('openai/m', {}, { OPENAI_BASE_URL: azure }).baseUrl).toBe(azure);
    expect(resolveModel('openai/m', {}, { OPENAI_BASE_URL: 'https://gw.example/v1/?path=a/' }).baseUrl).toBe(
      'https://gw.example/v1?path=a/',
    );
  });

  it('rejects empty halves', () => {
    configError(() => resolveModel('openai/', {}, {}));
    configError(() => resolveModel('/gpt-4o', {}, {}));
    configError(() => resolveModel('', {}, {}));
  });

  it('apiKeyEnvName derives the variable of any provider', () => {
    expect(apiKeyEnvName('openai')).toBe('OPENAI_API_KEY');
    expect(apiKeyEnvName('my-host')).toBe('MY_HOST_API_KEY');
  });
});

describe('providers with their own wire API', () => {
  it('anthropic, openai-responses and gemini resolve to their APIs, bases and keys', () => {
    expect(resolveModel('anthropic/claude-sonnet-4-5', {}, { ANTHROPIC_API_KEY: 'k' })).toMatchObject({
      api: 'anthropic-messages',
      baseUrl: 'https://api.anthropic.com',
      apiKey: 'k',
    });
    expect(resolveModel('openai-responses/gpt-5', {}, { OPENAI_API_KEY: 'k' })).toMatchObject({
      api: 'openai-responses',
      baseUrl: 'https://api.openai.com/v1',
    });
    expect(resolveModel('gemini/gemini-2.5-flash', {}, { GEMINI_API_KEY: 'k', GEMINI_BASE_URL: 'http://127.0.0.1:9/' })).toMatchObject({
      api: 'gemini',
      baseUrl: 'http://127.0.0.1:9',
    });
    expect(() => resolveModel('anthropic/claude-sonnet-4-5', {}, {})).toThrow(/ANTHROPIC_API_KEY is not set/);
    expect(resolveModel('x/y', { providers: { x: { baseUrl: 'http://h', api: 'anthropic-messages' } } }, {}).api).toBe(
      'anthropic-messages',
    );
  });
});
