import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRedactor, defaultRedactor } from '../../src/security/redact.js';
import { isSecretEnvName } from '../../src/security/secret-env.js';
import { fake } from './fake-secrets.js';

const patterns = createRedactor({ env: {} });

describe('known key and token formats', () => {
  it.each([
    ['OpenAI legacy key', fake.openaiLegacy, 'openai_key'],
    ['OpenAI project key', fake.openaiProject, 'openai_key'],
    ['Anthropic key', fake.anthropic, 'anthropic_key'],
    ['AWS access key id', fake.awsAccessKey, 'aws_access_key'],
    ['AWS temporary access key id', fake.awsSessionKey, 'aws_access_key'],
    ['GitHub classic token', fake.githubClassic, 'github_token'],
    ['GitHub OAuth token', fake.githubOauth, 'github_token'],
    ['GitHub app token', fake.githubApp, 'github_token'],
    ['GitHub fine-grained token', fake.githubFine, 'github_token'],
    ['GitLab token', fake.gitlab, 'gitlab_token'],
    ['Slack bot token', fake.slackBot, 'slack_token'],
    ['Slack user token', fake.slackUser, 'slack_token'],
    ['Slack webhook', fake.slackWebhook, 'slack_webhook'],
    ['Google API key', fake.google, 'google_api_key'],
    ['Stripe live key', fake.stripeLive, 'stripe_key'],
    ['Stripe restricted key', fake.stripeRestricted, 'stripe_key'],
    ['npm token', fake.npm, 'npm_token'],
    ['Hugging Face token', fake.huggingface, 'huggingface_token'],
    ['JWT', fake.jwt, 'jwt'],
    ['PEM private key', fake.pem, 'private_key'],
  ])('%s', (_what, secret, kind) => {
    for (const around of [
      ['', ''],
      ['key: ', '\n'],
      ['"', '"'],
      ['(', ')'],
      ['export X=', ' # set'],
    ]) {
      const text = `${around[0]}${secret}${around[1]}`;
      expect(patterns.redactText(text)).toBe(`${around[0]}[REDACTED:${kind}]${around[1]}`);
    }
  });

  it('a PEM block cut before its end is redacted to the end of the base64', () => {
    const cut = fake.pem.slice(0, 120);
    expect(patterns.redactText(`key:\n${cut}\n\nnext paragraph`)).toBe('key:\n[REDACTED:private_key]\n\nnext paragraph');
  });

  it('a PEM block inside JSON text (escaped newlines) is redacted', () => {
    const json = JSON.stringify({ key: fake.pem });
    expect(patterns.redactText(json)).toBe('{"key":"[REDACTED:private_key]"}');
  });
});

describe('credentials in assignments, headers and URLs', () => {
  it.each([
    ['Bearer header', 'Authorization: Bearer abc123def456ghi789jkl', 'Authorization: Bearer [REDACTED:bearer_token]'],
    [
      'Bearer in curl',
      `curl -H "Authorization: bearer ${fake.bearer}" https://x`,
      'curl -H "Authorization: bearer [REDACTED:bearer_token]" https://x',
    ],
    ['Basic auth header', 'Authorization: Basic dXNlcjpodW50ZXIy', 'Authorization: Basic [REDACTED:basic_auth]'],
    ['curl -u', 'curl -u admin:hunter22 https://x', 'curl -u admin:[REDACTED:password] https://x'],
    ['AWS secret in a credentials file', `aws_secret_access_key = ${fake.awsSecret}`, 'aws_secret_access_key = [REDACTED:aws_secret_key]'],
    ['AWS secret in env', `AWS_SECRET_ACCESS_KEY=${fake.awsSecret}`, 'AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]'],
    ['AWS secret in JSON', `{"SecretAccessKey": "${fake.awsSecret}"}`, '{"SecretAccessKey": "[REDACTED:aws_secret_key]"}'],
    ['URL password', 'postgres://rein:s3cret-pass@db:5432/rein', 'postgres://rein:[REDACTED:url_password]@db:5432/rein'],
    ['URL password, empty user', 'redis://:hunter22@cache:6379', 'redis://:[REDACTED:url_password]@cache:6379'],
    ['env line', 'DB_PASSWORD=hunter22', 'DB_PASSWORD=[REDACTED:password]'],
    ['short password in env line', 'PGPASSWORD=abcd', 'PGPASSWORD=[REDACTED:password]'],
    [
      'query token',
      'https://api.example.com/v1?access_token=9f8e7d6c5b4a3f2e&x=1',
      'https://api.example.com/v1?access_token=[REDACTED:token]&x=1',
    ],
    ['query api key', 'GET /search?q=x&apikey=abcd1234efgh5678', 'GET /search?q=x&apikey=[REDACTED:api_key]'],
    ['CLI flag', 'deploy --api-key=abcd1234efgh5678 --force', 'deploy --api-key=[REDACTED:api_key] --force'],
    ['JSON', '{"client_secret": "9f8e7d6c5b4a3f2e", "id": 1}', '{"client_secret": "[REDACTED:secret]", "id": 1}'],
    ['code with quotes', "const apiKey = 'abcd1234efgh5678';", "const apiKey = '[REDACTED:api_key]';"],
    ['YAML', 'db:\n  password: hunter22\n  host: x', 'db:\n  password: [REDACTED:password]\n  host: x'],
    ['YAML with comment', 'auth_token: abcdef123456 # rotate monthly', 'auth_token: [REDACTED:token] # rotate monthly'],
    ['header', "curl -H 'X-Api-Key: abcd1234efgh5678' https://x", "curl -H 'X-Api-Key: [REDACTED:api_key]' https://x"],
    ['private key assignment', 'PRIVATE_KEY="Zm9vYmFyYmF6cXV4MTIz"', 'PRIVATE_KEY="[REDACTED:api_key]"'],
  ])('%s', (_what, text, expected) => {
    expect(patterns.redactText(text)).toBe(expected);
  });
});

describe('what must not be redacted', () => {
  /** Deterministic bytes, so a failure can be reproduced. */
  function bytes(n: number): Buffer {
    const chunks: Buffer[] = [];
    let seed = Buffer.from('rein');
    for (let size = 0; size < n; size += 32) {
      seed = createHash('sha256').update(seed).digest();
      chunks.push(seed);
    }
    return Buffer.concat(chunks).subarray(0, n);
  }

  it.each([
    ['a git sha', 'commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 (HEAD -> main)'],
    ['a short sha', 'fixed in 1a2b3c4'],
    ['a UUID', 'run 123e4567-e89b-12d3-a456-426614174000 finished'],
    ['a sha256 digest', 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['sk- words', 'sk-learn is a library; the task-runner-for-everything-else; disk-usage-report-summary'],
    ['a kebab identifier after sk-', 'sk-this-is-not-any-kind-of-key'],
    ['token counts', 'max_tokens=4096 and "input_tokens": 1234, tokens: 5678, MAX_TOKEN=100000'],
    ['paging tokens', 'nextPageToken=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA2 and "page_token": "abcdef0123456789"'],
    ['prose about passwords', 'Password: must be at least 8 characters long.\nThe token: see the docs.'],
    ['prose about bearer tokens', 'Bearer tokens are described in RFC 6750; the bearer of bad news.'],
    ['basic as a word', 'basic usage: run the basic example'],
    [
      'placeholders',
      'password=$DB_PASSWORD token="${TOKEN}" api_key: "<your-key>" secret=changeme PASSWORD=******** token: ${{ secrets.GITHUB_TOKEN }}',
    ],
    ['env references in code', 'api_key = os.environ["OPENAI_API_KEY"]; const token = process.env.TOKEN;'],
    ['a URL without password', 'https://user@example.com/path and https://example.com:8080/x'],
    ['an email and a port', 'mail ada@example.com at host:8080'],
    ['a slack-like word without digits', 'xoxb-not-a-real-token-here'],
    ['an AWS-like id that is too short', 'AKIAIOSFODNN7EXAMP'],
    ['a JSON schema', '{"password": {"type": "string", "minLength": 8}}'],
    ['a file path', 'read /home/ada/.ssh/config and src/secrets/loader.ts'],
    ['a function name', 'call get_secret_token() then check_password(x)'],
    ['base64 text', bytes(3000).toString('base64')],
    ['hex text', bytes(2000).toString('hex')],
  ])('%s', (_what, text) => {
    expect(patterns.redactText(text)).toBe(text);
  });

  it('megabytes of base64 image data stay as they are, in text and as image content', () => {
    const data = bytes(1 << 20).toString('base64');
    expect(patterns.redactText(data)).toBe(data);
    const message = { role: 'tool', content: [{ type: 'image', data, mimeType: 'image/png' }] };
    expect(patterns.redactValue(message)).toBe(message);
  });

  it('text already redacted is not redacted again', () => {
    const once = patterns.redactText(`OPENAI_API_KEY=${fake.openaiProject}`);
    expect(once).toBe('OPENAI_API_KEY=[REDACTED:openai_key]');
    expect(patterns.redactText(once)).toBe(once);
  });
});

describe('environment values', () => {
  const env = {
    OPENAI_API_KEY: 'custom-gateway-key-1234',
    GITHUB_TOKEN: 'opaque-token-value-5678',
    PGPASSWORD: 'pg-pass-9012',
    NEXTAUTH_SECRET: 'next-auth-secret-3456',
    DEPLOY_HOOK: 'hook-7890',
    KEYBOARD_LAYOUT: 'us-intl-altgr',
    TOKENIZERS_PARALLELISM: 'false-but-long',
    GIT_AUTHOR_NAME: 'Ada Lovelace Byron',
    SSH_AUTH_SOCK: '/tmp/ssh-XYZ/agent.123',
    GOOGLE_APPLICATION_CREDENTIALS: '/home/ada/gcp-key.json',
    PWD: '/home/ada/project',
    API_KEY_SHORT: 'abc',
    MAX_TOKENS: '4096',
    HOME: '/home/ada',
  };
  const redactor = createRedactor({ env, envNames: ['DEPLOY_HOOK'], values: ['literal-secret', 'abc'], patterns: false });

  it('secret-named variables are redacted by name', () => {
    expect(redactor.redactText('key custom-gateway-key-1234, token opaque-token-value-5678.')).toBe(
      'key [REDACTED:env:OPENAI_API_KEY], token [REDACTED:env:GITHUB_TOKEN].',
    );
    expect(redactor.redactText('psql with pg-pass-9012 and next-auth-secret-3456')).toBe(
      'psql with [REDACTED:env:PGPASSWORD] and [REDACTED:env:NEXTAUTH_SECRET]',
    );
  });

  it('envNames and values are redacted whatever their names, from 4 characters', () => {
    expect(redactor.redactText('POST hook-7890 with literal-secret')).toBe('POST [REDACTED:env:DEPLOY_HOOK] with [REDACTED:value]');
    expect(redactor.redactText('abc is too short to redact')).toBe('abc is too short to redact');
  });

  it('variables whose names only look secret, paths and short values are left alone', () => {
    const text = Object.entries(env)
      .filter(([name]) => !['OPENAI_API_KEY', 'GITHUB_TOKEN', 'PGPASSWORD', 'NEXTAUTH_SECRET', 'DEPLOY_HOOK'].includes(name))
      .map(([, value]) => value)
      .join(' | ');
    expect(redactor.redactText(text)).toBe(text);
  });

  it('a value is also found as JSON or a URL spells it', () => {
    const quoted = createRedactor({ env: { DB_PASSWORD: 'p@ss "word" 1/2' }, patterns: false });
    expect(quoted.redactText(JSON.stringify({ line: 'pw=p@ss "word" 1/2' }))).toBe('{"line":"pw=[REDACTED:env:DB_PASSWORD]"}');
    expect(quoted.redactText(`postgres://u:${encodeURIComponent('p@ss "word" 1/2')}@h/db`)).toBe(
      'postgres://u:[REDACTED:env:DB_PASSWORD]@h/db',
    );
  });

  it('the longest value wins where values overlap, and the env kind beats the pattern kind', () => {
    const both = createRedactor({ env: { SHORT_TOKEN: 'abcdefgh', LONG_TOKEN: 'abcdefgh-ijklmnop', OPENAI_API_KEY: fake.openaiProject } });
    expect(both.redactText('abcdefgh-ijklmnop abcdefgh')).toBe('[REDACTED:env:LONG_TOKEN] [REDACTED:env:SHORT_TOKEN]');
    expect(both.redactText(`Bearer ${fake.openaiProject}`)).toBe('Bearer [REDACTED:env:OPENAI_API_KEY]');
  });

  it('values with regular-expression characters are literal', () => {
    const odd = createRedactor({ env: { APP_SECRET: 'a.b*c+d?(e)[f]{g}|h\\i^j$' }, patterns: false });
    expect(odd.redactText('x a.b*c+d?(e)[f]{g}|h\\i^j$ y')).toBe('x [REDACTED:env:APP_SECRET] y');
    expect(odd.redactText('aXb*c+d?(e)[f]{g}|h\\i^j$')).toBe('aXb*c+d?(e)[f]{g}|h\\i^j$');
  });

  it('reads process.env by default', () => {
    const name = 'REIN_TEST_SECRET_TOKEN';
    process.env[name] = 'from-process-env-4242';
    try {
      expect(createRedactor({ patterns: false }).redactText('x from-process-env-4242 y')).toBe(`x [REDACTED:env:${name}] y`);
    } finally {
      delete process.env[name];
    }
  });

  it.each([
    ['OPENAI_API_KEY', true],
    ['ANTHROPIC_API_KEY', true],
    ['GITHUB_TOKEN', true],
    ['HF_TOKEN', true],
    ['AWS_SECRET_ACCESS_KEY', true],
    ['AWS_SESSION_TOKEN', true],
    ['PGPASSWORD', true],
    ['DB_PASS', true],
    ['NPM_AUTH', true],
    ['SENTRY_DSN', true],
    ['SESSION_COOKIE', true],
    ['gh_pat', true],
    ['KEYBOARD', false],
    ['TOKENIZERS_PARALLELISM', false],
    ['GIT_AUTHOR_NAME', false],
    ['SSH_AUTH_SOCK', false],
    ['AWS_ACCESS_KEY_ID', false],
    ['GPG_KEY_FILE', false],
    ['MAX_TOKENS', false],
    ['TOKEN_LIMIT', false],
    ['PWD', false],
    ['OLDPWD', false],
    ['PATH', false],
    ['HOME', false],
  ])('isSecretEnvName(%j) is %s', (name, secret) => {
    expect(isSecretEnvName(name)).toBe(secret);
  });
});

describe('redactValue', () => {
  const redactor = createRedactor({ env: {}, values: ['hunter2-secret'] });

  it('returns the very same reference when nothing needs redacting', () => {
    const value = { a: 'clean', b: [1, 'two', { c: null, d: true }], e: { f: 'also clean' } };
    expect(redactor.redactValue(value)).toBe(value);
    const list = ['a', 'b'];
    expect(redactor.redactValue(list)).toBe(list);
  });

  it('copies only the path to a change, sharing every clean part, and never mutates', () => {
    const clean = { deep: ['untouched'] };
    const value = Object.freeze({
      clean,
      list: Object.freeze(['ok', Object.freeze({ secret: 'the hunter2-secret here' }), 'ok']),
      n: 1,
    });
    const before = structuredClone(value);
    const out = redactor.redactValue(value);
    expect(out).not.toBe(value);
    expect(out).toEqual({ clean: { deep: ['untouched'] }, list: ['ok', { secret: 'the [REDACTED:value] here' }, 'ok'], n: 1 });
    expect(out.clean).toBe(clean);
    expect(value).toEqual(before);
  });

  it('redacts strings at any depth, and top-level strings', () => {
    expect(redactor.redactValue([[['x hunter2-secret']]])).toEqual([[['x [REDACTED:value]']]]);
    expect(redactor.redactValue('hunter2-secret')).toBe('[REDACTED:value]');
  });

  it('leaves numbers, booleans, null, undefined, keys and non-plain objects alone', () => {
    const date = new Date(0);
    const map = new Map([['k', 'hunter2-secret']]);
    expect(redactor.redactValue(42)).toBe(42);
    expect(redactor.redactValue(null)).toBe(null);
    expect(redactor.redactValue(undefined)).toBe(undefined);
    expect(redactor.redactValue(date)).toBe(date);
    expect(redactor.redactValue(map)).toBe(map);
    const keyed = { 'hunter2-secret': 1 };
    expect(redactor.redactValue(keyed)).toBe(keyed);
  });

  it('objects without prototype are walked', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { s: 'hunter2-secret' });
    expect(redactor.redactValue(bare)).toEqual({ s: '[REDACTED:value]' });
  });
});

describe('cost', () => {
  it('clean text costs a scan; a megabyte is quick', () => {
    const text = 'The quick brown fox jumps over the lazy dog; tokens: 1234, commit a94a8fe5. '.repeat(14_000);
    const redactor = createRedactor({ env: { OPENAI_API_KEY: 'custom-gateway-key-1234' } });
    const started = performance.now();
    for (let i = 0; i < 3; i++) expect(redactor.redactText(text)).toBe(text);
    expect(performance.now() - started).toBeLessThan(3000);
  });
});

describe('texts seen before', () => {
  it('a short text is redacted every time it comes, and a clean one stays clean', () => {
    const redactor = createRedactor({ env: { DEPLOY_TOKEN: 'deploy-secret-1234' } });
    for (let i = 0; i < 3; i++) {
      expect(redactor.redactText('state_changed')).toBe('state_changed');
      expect(redactor.redactText('deploy-secret-1234')).toBe('[REDACTED:env:DEPLOY_TOKEN]');
      expect(redactor.redactValue({ type: 'tool_started', arguments: { token: 'deploy-secret-1234' } })).toEqual({
        type: 'tool_started',
        arguments: { token: '[REDACTED:env:DEPLOY_TOKEN]' },
      });
    }
  });

  it('stays right past the number of texts it remembers', () => {
    const redactor = createRedactor({ env: {} });
    const key = fake.openaiLegacy;
    for (let i = 0; i < 5000; i++) expect(redactor.redactText(`text number ${i}`)).toBe(`text number ${i}`);
    expect(redactor.redactText(`key ${key}`)).toBe('key [REDACTED:openai_key]');
    expect(redactor.redactText('text number 4999')).toBe('text number 4999');
  });
});

describe('defaultRedactor', () => {
  it('is built once per process: every agent without its own redactor shares it', () => {
    expect(defaultRedactor()).toBe(defaultRedactor());
    expect(defaultRedactor().redactText('key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789')).toContain('[REDACTED:');
  });
});
