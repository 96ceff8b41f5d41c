// Keys of Groq, xAI and SendGrid are redacted, and a key glued to a name by `-` or `_` is
// still a key. The fake keys are assembled at run time (no secret scanner trips on them).
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/security/redact.js';
import { fake } from './fake-secrets.js';

const join = (...parts: string[]) => parts.join('');
const mixed = (n: number) => 'aB3dE5fG7h'.repeat(Math.ceil(n / 10)).slice(0, n);
const redactor = createRedactor({ env: {} });

const KEYS: Array<[string, string, string]> = [
  ['groq', join('gs', 'k_', mixed(52)), 'groq_key'],
  ['xai', join('xa', 'i-', mixed(80)), 'xai_key'],
  ['sendgrid', join('S', 'G.', mixed(22), '.', mixed(43)), 'sendgrid_key'],
  ['github', fake.githubClassic, 'github_token'],
  ['openai', fake.openaiLegacy, 'openai_key'],
  ['gitlab', fake.gitlab, 'gitlab_token'],
  ['npm', fake.npm, 'npm_token'],
  ['huggingface', fake.huggingface, 'huggingface_token'],
  ['anthropic', fake.anthropic, 'anthropic_key'],
];

describe('provider keys', () => {
  it.each(KEYS)('%s alone, after "-", after "_", in a sentence and quoted', (_name, key, kind) => {
    for (const text of [key, `nope-${key}`, `TOKEN_${key}`, `the key is ${key}.`, `"${key}"`, `x=${key}`]) {
      const out = redactor.redactText(text);
      expect(out, text).not.toContain(key);
      expect(out, text).toContain(`[REDACTED:${kind}]`);
    }
  });

  it('a letter or digit glued before the prefix is no key (a word that happens to contain it)', () => {
    const almost = join('x', 'gs', 'k_', mixed(52));
    expect(redactor.redactText(almost)).toBe(almost);
    expect(redactor.redactText('risk-assessment-for-the-quarterly-report')).toBe('risk-assessment-for-the-quarterly-report');
  });
});
