import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { call, makeSandbox, type Sandbox } from './helpers.js';

let box: Sandbox;
beforeEach(async () => {
  box = await makeSandbox();
  await box.write({ 'notes.md': 'one\ntwo\nthree\n', 'src/main.py': 'def main():\n    print("hi")\n' });
});
afterEach(() => box.remove());

const file = (path: string) => readFile(join(box.root, path), 'utf8');

describe('write_file', () => {
  it('creates a file with its parent directories and reports it', async () => {
    const r = await call(box.tools().write_file, { path: 'a/b/c.txt', content: 'x\ny\n' });
    expect(r.text).toBe('Created a/b/c.txt (4 bytes, 2 lines).');
    expect(r.details).toEqual({ path: 'a/b/c.txt', created: true, bytes: 4 });
    expect(await file('a/b/c.txt')).toBe('x\ny\n');
  });

  it('replaces an existing file and says what it had', async () => {
    const r = await call(box.tools().write_file, { path: 'notes.md', content: 'new\n' });
    expect(r.text).toBe('Replaced notes.md (4 bytes, 1 lines; it had 14 B).');
    expect(await file('notes.md')).toBe('new\n');
  });

  it('previews the change as a diff, against /dev/null for a new file', async () => {
    const tool = box.tools().write_file!;
    expect(await tool.preview!({ path: 'notes.md', content: 'one\n2\nthree\n' })).toBe(
      '--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n',
    );
    expect(await tool.preview!({ path: 'new.txt', content: 'hi\n' })).toBe('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n');
    expect(await tool.preview!({ path: 'notes.md', content: 'one\ntwo\nthree\n' })).toContain('no change');
    await box.write({ 'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0]) });
    expect(await tool.preview!({ path: 'logo.png', content: 'text' })).toBe('logo.png: PNG image (6 B) would be replaced by 4 B of text');
  });

  it('refuses a directory and paths outside the workspace, writing nothing there', async () => {
    expect((await call(box.tools().write_file, { path: 'src', content: 'x' })).text).toContain('src is a directory');
    expect((await call(box.tools().write_file, { path: '.', content: 'x' })).text).toContain('is a directory');
    for (const path of ['../outside/new.txt', join(box.outside, 'new.txt')]) {
      expect((await call(box.tools().write_file, { path, content: 'x' })).thrown?.code).toBe('path_refused');
    }
    expect(await readdir(box.outside)).toEqual(['secret.txt']);
  });
});

describe('edit_file', () => {
  it('replaces exact text and returns the diff', async () => {
    const r = await call(box.tools().edit_file, { path: 'src/main.py', old_text: 'print("hi")', new_text: 'print("hello")' });
    expect(r.isError).toBe(false);
    expect(r.text).toBe(
      'Edited src/main.py: replaced 1 occurrence (at line 2).\n--- a/src/main.py\n+++ b/src/main.py\n@@ -1,2 +1,2 @@\n def main():\n-    print("hi")\n+    print("hello")\n',
    );
    expect(await file('src/main.py')).toBe('def main():\n    print("hello")\n');
  });

  it('answers a missing old text with the closest region, changing nothing', async () => {
    const r = await call(box.tools().edit_file, { path: 'src/main.py', old_text: 'def main():\n  print("hi")', new_text: 'x' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('The closest match is lines 1–2');
    expect(r.text).toContain('differ only in whitespace');
    expect(await file('src/main.py')).toBe('def main():\n    print("hi")\n');
  });

  it('answers an ambiguous old text with the lines of each occurrence', async () => {
    await box.write({ 'dup.txt': 'x = 1\ny = 2\nx = 1\n' });
    const r = await call(box.tools().edit_file, { path: 'dup.txt', old_text: 'x = 1', new_text: 'x = 3' });
    expect(r.text).toContain('occurs 2 times in dup.txt (starting at lines 1, 3)');
    const all = await call(box.tools().edit_file, { path: 'dup.txt', old_text: 'x = 1', new_text: 'x = 3', replace_all: true });
    expect(all.text).toContain('replaced 2 occurrences (at lines 1, 3)');
    expect(await file('dup.txt')).toBe('x = 3\ny = 2\nx = 3\n');
  });

  it('keeps CRLF line endings', async () => {
    await writeFile(join(box.root, 'win.txt'), 'a\r\nb\r\n');
    await call(box.tools().edit_file, { path: 'win.txt', old_text: 'a\nb', new_text: 'a\nB\nc' });
    expect(await file('win.txt')).toBe('a\r\nB\r\nc\r\n');
  });

  it('keeps a byte-order mark', async () => {
    await box.write({ 'bom.txt': '\uFEFFfirst\nsecond\n' });
    const r = await call(box.tools().edit_file, { path: 'bom.txt', old_text: 'first', new_text: 'one' });
    expect(r.isError).toBe(false);
    expect(await readFile(join(box.root, 'bom.txt'))).toEqual(Buffer.from('\uFEFFone\nsecond\n'));
  });

  it('refuses binary and non-UTF-8 files, and missing ones with a hint', async () => {
    // One stray Latin-1 byte in a long file still reads as text, but an edit must not rewrite it.
    const mostlyText = Buffer.concat([Buffer.from('plain text\n'.repeat(50)), Buffer.from('caf\xe9\n', 'latin1')]);
    await box.write({ 'bin.dat': Buffer.from([0, 1, 2]), 'latin.txt': Buffer.from('caf\xe9\n', 'latin1'), 'mixed.txt': mostlyText });
    expect((await call(box.tools().edit_file, { path: 'bin.dat', old_text: 'a', new_text: 'b' })).text).toContain('not UTF-8 text');
    expect((await call(box.tools().edit_file, { path: 'latin.txt', old_text: 'caf', new_text: 'b' })).text).toContain('not UTF-8 text');
    const mixed = await call(box.tools().edit_file, { path: 'mixed.txt', old_text: 'caf', new_text: 'b' });
    expect(mixed.text).toContain('it has bytes that are not valid UTF-8');
    expect(await readFile(join(box.root, 'mixed.txt'))).toEqual(mostlyText);
    const missing = await call(box.tools().edit_file, { path: 'note.md', old_text: 'a', new_text: 'b' });
    expect(missing.thrown?.code).toBe('not_found');
    expect(missing.text).toContain('Did you mean notes.md?');
  });

  it('previews the diff it would make, and fails the preview when the edit would fail', async () => {
    const tool = box.tools().edit_file!;
    expect(await tool.preview!({ path: 'notes.md', old_text: 'two', new_text: 'TWO' })).toBe(
      '--- a/notes.md\n+++ b/notes.md\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n',
    );
    await expect(tool.preview!({ path: 'notes.md', old_text: 'four', new_text: 'x' })).rejects.toThrow('not found');
    expect(await file('notes.md')).toBe('one\ntwo\nthree\n');
  });

  it('applies parallel edits of one file, every one of them', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => `value ${i} = old`);
    await box.write({ 'many.txt': `${lines.join('\n')}\n` });
    const dispatcher = createDispatcher(new ToolRegistry([box.tools().edit_file!]));
    const ctx = { signal: new AbortController().signal, runId: 'r', idempotencyKey: 'k' };
    const outcomes = await Promise.all(
      lines.map((line, i) =>
        dispatcher.dispatch(
          {
            type: 'tool_call',
            id: `c${i}`,
            name: 'edit_file',
            arguments: {},
            rawArguments: JSON.stringify({ path: 'many.txt', old_text: line, new_text: `value ${i} = new` }),
          },
          ctx,
        ),
      ),
    );
    expect(outcomes.map((o) => o.result.isError)).toEqual(lines.map(() => false));
    expect(await file('many.txt')).toBe(`${lines.map((_, i) => `value ${i} = new`).join('\n')}\n`);
  });

  it('serializes a parallel edit and write of one file: the edit sees the write or the write sees the edit', async () => {
    const tools = box.tools();
    const [edit, write] = await Promise.all([
      call(tools.edit_file, { path: 'notes.md', old_text: 'two', new_text: 'TWO' }),
      call(tools.write_file, { path: 'notes.md', content: 'one\ntwo\nthree\nfour\n' }),
    ]);
    expect(edit.isError).toBe(false);
    expect(write.isError).toBe(false);
    // The edit asked first, so it ran first and the write replaced its result.
    expect(await file('notes.md')).toBe('one\ntwo\nthree\nfour\n');
  });
});
