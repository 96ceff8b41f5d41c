import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeSandbox, type Sandbox } from './helpers.js';

let box: Sandbox;
const hundred = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
beforeAll(async () => {
  box = await makeSandbox();
  await box.write({
    'small.txt': 'alpha\nbeta\ngamma',
    'hundred.txt': hundred,
    'crlf.txt': 'one\r\ntwo\r\n',
    'bom.txt': '\uFEFFhello\n',
    'empty.txt': '',
    'long-line.txt': `${'x'.repeat(5000)}\nshort\n`,
    'image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
    'data.bin': Buffer.from([1, 2, 3, 0, 4, 5]),
    'latin1.txt': Buffer.from('caf\xe9 \xe0 la cr\xe8me br\xfbl\xe9e '.repeat(20), 'latin1'),
    'src/app.ts': 'export const app = 1;\n',
  });
  await box.link('../outside/secret.txt', 'leak.txt');
});
afterAll(() => box.remove());

const read = (args: Record<string, unknown>, options = {}) => call(box.tools(options).read_file, args);

describe('read_file', () => {
  it('returns a whole small file numbered like cat -n, without a footer', async () => {
    const r = await read({ path: 'small.txt' });
    expect(r.text).toBe('     1\talpha\n     2\tbeta\n     3\tgamma');
    expect(r.isError).toBe(false);
    expect(r.details).toMatchObject({ path: 'small.txt', startLine: 1, endLine: 3, totalLines: 3 });
  });

  it('reads a range with offset and limit and says how to continue', async () => {
    const r = await read({ path: 'hundred.txt', offset: 10, limit: 3 });
    expect(r.text).toBe(
      '    10\tline 10\n    11\tline 11\n    12\tline 12\n\n[hundred.txt: showing lines 10–12 of 100; to read on, call read_file with offset=13]',
    );
  });

  it('marks the end of the file when a range reaches it', async () => {
    const r = await read({ path: 'hundred.txt', offset: 99 });
    expect(r.text).toBe('    99\tline 99\n   100\tline 100\n\n[lines 99–100 of 100: end of file]');
  });

  it('stops at the byte cap and gives the offset to read on', async () => {
    const r = await read({ path: 'hundred.txt' }, { maxReadBytes: 200 });
    const shown = r.text.split('\n').filter((line) => /^\s+\d+\t/.test(line));
    expect(shown.length).toBeGreaterThan(5);
    expect(shown.length).toBeLessThan(20);
    expect(r.text).toContain(
      `showing lines 1–${shown.length} of 100 (the 200-byte limit of one read); to read on, call read_file with offset=${shown.length + 1}`,
    );
  });

  it('refuses an offset past the end, saying how long the file is', async () => {
    const r = await read({ path: 'small.txt', offset: 10 });
    expect(r.thrown?.code).toBe('invalid_arguments');
    expect(r.text).toContain('offset 10 is past the end of small.txt, which has 3 lines');
  });

  it('shows CRLF lines without the \\r and hides a byte-order mark', async () => {
    expect((await read({ path: 'crlf.txt' })).text).toBe('     1\tone\n     2\ttwo');
    expect((await read({ path: 'bom.txt' })).text).toBe('     1\thello');
  });

  it('cuts very long lines with a note', async () => {
    const r = await read({ path: 'long-line.txt' });
    expect(r.text).toContain('… [line cut: 5,000 characters]\n     2\tshort');
  });

  it('answers binary files with what they look like instead of bytes', async () => {
    const png = await read({ path: 'image.png' });
    expect(png.isError).toBe(true);
    expect(png.text).toContain('image.png is not a text file: it looks like PNG image (12 B)');
    expect((await read({ path: 'data.bin' })).text).toContain('NUL bytes');
    expect((await read({ path: 'latin1.txt' })).text).toContain('non-UTF-8');
  });

  it('says a file is empty, a directory is for list_dir, and a missing file has a near name', async () => {
    expect((await read({ path: 'empty.txt' })).text).toBe('empty.txt is empty (0 bytes).');
    expect((await read({ path: 'src' })).text).toContain('src is a directory: use list_dir');
    const missing = await read({ path: 'src/ap.ts' });
    expect(missing.thrown?.code).toBe('not_found');
    expect(missing.text).toContain('Did you mean src/app.ts?');
  });

  it('refuses paths outside the workspace', async () => {
    for (const path of ['../outside/secret.txt', `${box.outside}/secret.txt`, 'leak.txt']) {
      const r = await read({ path });
      expect(r.thrown?.code).toBe('path_refused');
      expect(r.text).not.toContain('top secret');
    }
  });
});
