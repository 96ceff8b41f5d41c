/** `rein models`: the offline catalog as a table or JSON, filtered by an argument. */
import { describe, expect, it } from 'vitest';
import { listModels } from '../../src/model/catalog.js';
import { rein } from './spawn.js';

describe('rein models', () => {
  it('prints every known model as a table with prices and the date they were taken', async () => {
    const out = await rein(['models']);
    expect(out.code).toBe(0);
    const lines = out.stdout.split('\n');
    expect(lines[0]).toMatch(/^MODEL\s+CONTEXT\s+MAX OUT\s+REASONING\s+IN \$\/M\s+OUT \$\/M\s+CACHE R \$\/M\s+CACHE W \$\/M$/);
    expect(out.stdout).toMatch(/^openai\/gpt-4o\s+128,000\s+16,384\s+no\s+2\.50\s+10\.00\s+1\.25\s+2\.50$/m);
    expect(out.stdout).toMatch(/^anthropic\/claude-sonnet-4-5\s+200,000\s+64,000\s+yes\s+3\.00\s+15\.00\s+0\.30\s+3\.75$/m);
    expect(out.stdout).toMatch(/^gemini\/gemini-2\.5-pro\s+1,048,576\s+65,536\s+yes\s+1\.25\s+10\.00\s+0\.125\s+1\.25$/m);
    expect(out.stdout).toMatch(/List prices as of \d{4}-\d{2}-\d{2}/);
    expect(out.stdout).toMatch(/gemini\/gemini-2\.5-pro: prompts over 200k tokens/);
    expect(out.stderr).toBe('');
  });

  it('keeps the rows whose provider/model contains the filter', async () => {
    const out = await rein(['models', 'anthropic']);
    expect(out.code).toBe(0);
    const rows = out.stdout.split('\n').filter((line) => /^\w+\//.test(line));
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.every((row) => row.startsWith('anthropic/'))).toBe(true);
  });

  it('--json prints the rows as one JSON array, the catalog as the library returns it', async () => {
    const out = await rein(['models', '--json', 'gpt-5']);
    expect(out.code).toBe(0);
    const rows = JSON.parse(out.stdout) as Array<{ provider: string; id: string }>;
    expect(rows.map((r) => `${r.provider}/${r.id}`)).toEqual(['openai/gpt-5', 'openai/gpt-5-mini', 'openai/gpt-5-nano']);
    expect(rows).toEqual(listModels().filter((m) => m.id.startsWith('gpt-5')));
  });

  it('a whole provider/model the catalog knows under another row shows that model as rein prices it', async () => {
    for (const spec of ['openai-responses/gpt-5', 'openrouter/anthropic/claude-sonnet-4.5', 'anthropic/claude-sonnet-4-5-20250929']) {
      const out = await rein(['models', '--json', spec]);
      expect(out.code, spec).toBe(0);
      const rows = JSON.parse(out.stdout) as Array<{ provider: string; id: string; catalogId?: string; pricing?: unknown }>;
      expect(rows, spec).toHaveLength(1);
      expect(`${rows[0]!.provider}/${rows[0]!.id}`).toBe(spec);
      expect(rows[0]!.pricing, spec).toBeDefined();
    }
    expect((await rein(['models', 'openrouter/nobody/nothing'])).code).toBe(1);
  });

  it('says so when nothing matches, and rejects unknown flags with a usage error', async () => {
    const none = await rein(['models', 'no-such-model']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no known model matches "no-such-model"/);
    const bad = await rein(['models', '--price']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Unknown option '--price'/);
  });

  it('is listed in rein --help and has its own --help', async () => {
    expect((await rein(['--help'])).stdout).toMatch(/models/);
    const help = await rein(['models', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^rein models \[--json\] \[filter\]/);
  });
});
