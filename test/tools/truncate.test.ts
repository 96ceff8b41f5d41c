import { describe, expect, it } from 'vitest';
import { truncateContent, truncateText } from '../../src/tools/truncate.js';

describe('truncateText', () => {
  it('leaves text within the limit unchanged', () => {
    expect(truncateText('hello', 5)).toBe('hello');
  });

  it('keeps head and tail and says how much was cut', () => {
    const text = 'H'.repeat(40_000) + 'M'.repeat(8_213) + 'T'.repeat(16_000);
    const out = truncateText(text, 16_000);
    expect(out).toContain('\n… [truncated: 48,213 of 64,213 characters removed] …\n');
    expect(out.startsWith('H'.repeat(8_000) + '\n…')).toBe(true);
    expect(out.endsWith('…\n' + 'T'.repeat(8_000))).toBe(true);
  });

  it('defaults to 16,000 characters', () => {
    const out = truncateText('x'.repeat(20_000));
    expect(out).toContain('[truncated: 4,000 of 20,000 characters removed]');
  });

  it('never splits a surrogate pair', () => {
    const out = truncateText('😀'.repeat(10), 5);
    expect(out).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(out).not.toMatch(/(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});

describe('truncateContent', () => {
  it('returns the same parts when the total fits', () => {
    const parts = [{ type: 'text' as const, text: 'a' }];
    expect(truncateContent(parts, 10)).toBe(parts);
  });

  it('shares the budget across text parts and keeps images', () => {
    const image = { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' };
    const out = truncateContent([{ type: 'text', text: 'a'.repeat(300) }, image, { type: 'text', text: 'b'.repeat(100) }], 100);
    expect(out[1]).toBe(image);
    expect(out[0]).toMatchObject({ text: expect.stringContaining('[truncated: 225 of 300 characters removed]') });
    expect(out[2]).toMatchObject({ text: expect.stringContaining('[truncated: 75 of 100 characters removed]') });
  });
});
