import { describe, expect, it } from 'vitest';
import { OutputBuffer } from '../../src/workspace/output-buffer.js';

describe('OutputBuffer', () => {
  it('keeps everything within the budget', () => {
    const buffer = new OutputBuffer(100);
    buffer.push('hello ');
    buffer.push('world');
    expect(buffer.text()).toBe('hello world');
    expect(buffer.omittedChars).toBe(0);
  });

  it('keeps the head and the tail of a long stream, noting what was cut', () => {
    const buffer = new OutputBuffer(10);
    for (let i = 0; i < 10_000; i++) buffer.push(`${i % 10}`);
    buffer.push('END');
    expect(buffer.receivedChars).toBe(10_003);
    expect(buffer.omittedChars).toBe(9993);
    expect(buffer.text()).toBe('01234\n… [output cut: 9,993 of 10,003 characters omitted from the middle] …\n89END');
  });

  it('cuts inside one large chunk too', () => {
    const buffer = new OutputBuffer(4);
    buffer.push('abcdefghij');
    expect(buffer.text()).toContain('ab\n… [output cut: 6 of 10');
    expect(buffer.text().endsWith('ij')).toBe(true);
  });

  it('removes colour and title escape sequences', () => {
    const buffer = new OutputBuffer(1000);
    buffer.push('\u001b[1;32mok\u001b[0m \u001b]0;title\u0007done');
    expect(buffer.text()).toBe('ok done');
  });
});
