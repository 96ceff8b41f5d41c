import { describe, expect, it } from 'vitest';
import { cutToolOutput, textLength, truncateText } from '../../src/tools/truncate.js';

const LONE_HIGH = /[\ud800-\udbff](?![\udc00-\udfff])/;
const LONE_LOW = /(?<![\ud800-\udbff])[\udc00-\udfff]/;

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
    expect(out).not.toMatch(LONE_HIGH);
    expect(out).not.toMatch(LONE_LOW);
  });

  it('moves the head cut before an emoji the cut falls inside', () => {
    // Keep 4: the head would end after the high half of the first emoji (index 1).
    const out = truncateText('a' + '😀'.repeat(10), 4, { toolCallId: 'c', base: 0 });
    expect(out.startsWith('a\n… [truncated: 18 of 21 characters removed;')).toBe(true);
    expect(out).toContain('offset 1 to read more');
    expect(out.endsWith('…\n😀')).toBe(true);
  });

  it('moves the tail cut after an emoji the cut falls inside', () => {
    // Keep 4: the tail would start at the low half of the last emoji (index 19).
    const out = truncateText('😀'.repeat(10) + 'b', 4);
    expect(out.startsWith('😀\n… [truncated: 18 of 21 characters removed] …\n')).toBe(true);
    expect(out.endsWith('…\nb')).toBe(true);
  });

  it('moves both cuts when both fall inside an emoji', () => {
    const out = truncateText('a' + '😀'.repeat(10) + 'b', 4);
    expect(out).toBe('a\n… [truncated: 20 of 22 characters removed] …\nb');
  });

  it('leaves no lone surrogate of the text itself at either side of the marker', () => {
    // A lone high half ends the head, a lone low half starts the tail; both go.
    expect(truncateText('ab\ud83d' + 'x'.repeat(10) + '\ude00cd', 6)).toBe('ab\n… [truncated: 12 of 16 characters removed] …\ncd');
    // The other way round: a lone low half ending the head, a lone high half starting the tail.
    expect(truncateText('a\ude00' + 'x'.repeat(10) + '\ud83dc', 4)).toBe('a\n… [truncated: 12 of 14 characters removed] …\nc');
  });

  it('keeps head and tail whole characters for every limit', () => {
    const text = 'é😀x😀😀日\ud83d😀y\ude00😀'.repeat(3);
    for (let max = 0; max < text.length; max++) {
      const out = truncateText(text, max);
      const [head, tail] = out.split(/\n… \[truncated: .*\] …\n/) as [string, string];
      expect(text.startsWith(head) && text.endsWith(tail)).toBe(true);
      expect(head.length + tail.length).toBeLessThanOrEqual(max);
      expect(out).toContain(`[truncated: ${text.length - head.length - tail.length} of`);
      // The text has lone halves of its own inside; at the cuts, only whole characters.
      expect(head).not.toMatch(/(?:[\ud800-\udbff]|(?<![\ud800-\udbff])[\udc00-\udfff])$/);
      expect(tail).not.toMatch(/^(?:[\udc00-\udfff]|[\ud800-\udbff](?![\udc00-\udfff]))/);
    }
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

  it('cuts emoji-only parts without splitting an emoji in any part', () => {
    const parts = [
      { type: 'text' as const, text: 'a' + '😀'.repeat(9_000) },
      { type: 'text' as const, text: '😀'.repeat(9_001) },
    ];
    for (const max of [7, 9_999, 16_000, 16_001]) {
      for (const part of cutToolOutput(parts, max).content) {
        const text = (part as { text: string }).text;
        expect(text).not.toMatch(LONE_HIGH);
        expect(text).not.toMatch(LONE_LOW);
      }
    }
  });
});
