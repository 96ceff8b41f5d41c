import { describe, expect, it } from 'vitest';
import { cutToolOutput, textLength, truncateText } from '../../src/tools/truncate.js';

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

describe('cutToolOutput', () => {
  it('shares the budget across text parts, keeps images, and keeps the whole text', () => {
    const image = { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' };
    const parts = [{ type: 'text' as const, text: 'a'.repeat(300) }, image, { type: 'text' as const, text: 'b'.repeat(100) }];
    expect(textLength(parts)).toBe(400);
    const { content, fullOutput } = cutToolOutput(parts, 100);
    expect(content[1]).toBe(image);
    expect(content[0]).toMatchObject({ text: expect.stringContaining('[truncated: 225 of 300 characters removed]') });
    expect(content[2]).toMatchObject({ text: expect.stringContaining('[truncated: 75 of 100 characters removed]') });
    expect(fullOutput.chars).toBe(fullOutput.text.length);
    expect(fullOutput.text).toContain('a'.repeat(300));
    expect(fullOutput.text).toContain('b'.repeat(100));
  });
});
