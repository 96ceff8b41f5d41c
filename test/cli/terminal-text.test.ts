import { describe, expect, it } from 'vitest';
import { TerminalAnswer, terminalLine, visibleControls, visibleLabel } from '../../src/cli/terminal-text.js';

const ESC = '\x1b';

describe('visibleControls', () => {
  it('shows ESC, BEL, DEL and the other C0 controls as control pictures, and C1 controls as ESC and their character', () => {
    expect(visibleControls(`${ESC}[2J${ESC}]0;title\x07${ESC}]52;c;aGk=\x07`)).toBe('␛[2J␛]0;title␇␛]52;c;aGk=␇');
    expect(visibleControls('\x00\x08\x0b\x0c\x7f')).toBe('␀␈␋␌␡');
    // 0x9b is CSI (ESC [), 0x9d is OSC (ESC ]): a terminal would obey them as such.
    expect(visibleControls('\x9b2J\x9d0;t\x07')).toBe('␛[2J␛]0;t␇');
  });

  it('keeps newlines, tabs and CRLF; shows a carriage return that does not end a line', () => {
    expect(visibleControls('a\tb\r\nc\n')).toBe('a\tb\r\nc\n');
    expect(visibleControls('over\rwritten\r')).toBe('over␍written␍');
  });

  it('returns the very same string when there is nothing to show', () => {
    const text = 'héllo 世界 🎉 — plain text\n';
    expect(visibleControls(text)).toBe(text);
  });
});

describe('TerminalAnswer', () => {
  it('disarms an escape sequence split across streamed pieces', () => {
    const answer = new TerminalAnswer();
    const shown = ['before', ESC, '[2', 'J after', `${ESC}]`, '0;x', '\x07'].map((p) => answer.write(p)).join('') + answer.flush();
    expect(shown).toBe('before␛[2J after␛]0;x␇');
  });

  it('keeps a CRLF split across pieces, and shows a bare CR held at the end of a piece', () => {
    const answer = new TerminalAnswer();
    expect(answer.write('line1\r')).toBe('line1');
    expect(answer.write('\nline2\r')).toBe('\r\nline2');
    expect(answer.write('over')).toBe('␍over');
    expect(answer.write('end\r')).toBe('end');
    expect(answer.flush()).toBe('␍');
    expect(answer.flush()).toBe('');
  });
});

describe('visibleLabel and terminalLine', () => {
  it('a spinner label is one line with its control characters shown', () => {
    expect(visibleLabel(`writing a call to x${ESC}]0;T\x07\nnext`)).toBe('writing a call to x␛]0;T␇ next');
  });

  it('a line for stderr has its URL passwords redacted and its control characters shown', () => {
    expect(terminalLine(`cannot reach http://alice:s3cret@host/v1 ${ESC}[2J`)).toBe(
      'cannot reach http://alice:[REDACTED:url_password]@host/v1 ␛[2J',
    );
  });
});
