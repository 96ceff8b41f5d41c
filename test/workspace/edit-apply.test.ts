import { describe, expect, it } from 'vitest';
import { applyEdit, type EditResult } from '../../src/workspace/edit-apply.js';

function message(result: EditResult): string {
  if (result.ok) throw new Error('expected the edit to fail');
  return result.message;
}

const code = ['function add(a, b) {', '    return a + b;', '}', '', 'function sub(a, b) {', '    return a - b;', '}', ''].join('\n');

describe('applyEdit', () => {
  it('replaces the one exact occurrence and says on which line it was', () => {
    expect(applyEdit(code, { oldText: 'return a - b;', newText: 'return a - b - 0;' }, 'm.js')).toEqual({
      ok: true,
      content: code.replace('return a - b;', 'return a - b - 0;'),
      replacements: 1,
      lines: [6],
    });
  });

  it('inserts replacement text literally ($& and $1 are not patterns)', () => {
    const result = applyEdit('price = 1\n', { oldText: '1', newText: '$& $1 $$' }, 'p');
    expect(result).toMatchObject({ ok: true, content: 'price = $& $1 $$\n' });
  });

  it('refuses an ambiguous old text, listing where each occurrence starts', () => {
    const text = message(applyEdit(code, { oldText: '(a, b) {', newText: '(x, y) {' }, 'm.js'));
    expect(text).toBe(
      'old_text occurs 2 times in m.js (starting at lines 1, 5). Include more surrounding lines in old_text so that it matches exactly one place, or set replace_all: true to replace all 2.',
    );
  });

  it('replaces every occurrence with replace_all', () => {
    const result = applyEdit(code, { oldText: '(a, b)', newText: '(x, y)', replaceAll: true }, 'm.js');
    expect(result).toMatchObject({ ok: true, replacements: 2, lines: [1, 5] });
    expect(result.ok && result.content.includes('(a, b)')).toBe(false);
  });

  it('shows the closest region and the first differing line when the old text is missing (whitespace)', () => {
    const text = message(applyEdit(code, { oldText: 'function sub(a, b) {\n\treturn a - b;\n}', newText: 'x' }, 'm.js'));
    expect(text).toContain('old_text was not found in m.js. The closest match is lines 5–7:');
    expect(text).toContain('     5\tfunction sub(a, b) {\n     6\t    return a - b;\n     7\t}');
    expect(text).toContain(
      'First difference, line 6: the file has "    return a - b;" but old_text has "\\treturn a - b;" (they differ only in whitespace',
    );
  });

  it('points at a changed line when the text differs in more than whitespace', () => {
    const text = message(applyEdit(code, { oldText: 'function sub(a, b) {\n    return b - a;', newText: 'x' }, 'm.js'));
    expect(text).toContain('The closest match is lines 5–6');
    expect(text).toContain('First difference, line 6: the file has "    return a - b;" but old_text has "    return b - a;".');
  });

  it('notices line numbers copied from read_file', () => {
    const text = message(applyEdit(code, { oldText: '     2\t    return a + b;', newText: 'x' }, 'm.js'));
    expect(text).toContain('start with line numbers and a tab');
  });

  it('says so when nothing is similar', () => {
    expect(message(applyEdit(code, { oldText: 'zebra quokka', newText: 'x' }, 'm.js'))).toContain('Nothing similar is in the file');
  });

  it('refuses an empty old text and a no-op', () => {
    expect(message(applyEdit(code, { oldText: '', newText: 'x' }, 'm.js'))).toContain('use write_file');
    expect(message(applyEdit(code, { oldText: '}', newText: '}', replaceAll: true }, 'm.js'))).toContain('identical');
  });

  it('keeps a CRLF file CRLF when the model sends LF text', () => {
    const crlf = 'one\r\ntwo\r\nthree\r\n';
    const result = applyEdit(crlf, { oldText: 'one\ntwo\n', newText: 'one\n2\n' }, 'w.txt');
    expect(result).toMatchObject({ ok: true, content: 'one\r\n2\r\nthree\r\n' });
  });

  it('reads CRLF sent for an LF file as LF', () => {
    const result = applyEdit('a\nb\nc\n', { oldText: 'a\r\nb', newText: 'a\r\nB' }, 'l.txt');
    expect(result).toMatchObject({ ok: true, content: 'a\nB\nc\n' });
  });

  it('keeps a byte-order mark at the start of the file', () => {
    const result = applyEdit('\uFEFFfirst\nsecond\n', { oldText: 'first', newText: 'one' }, 'b.txt');
    expect(result).toMatchObject({ ok: true, content: '\uFEFFone\nsecond\n' });
  });
});
