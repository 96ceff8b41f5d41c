import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeSandbox, type Sandbox } from './helpers.js';

let box: Sandbox;
beforeAll(async () => {
  box = await makeSandbox();
  await box.write({
    '.gitignore': 'node_modules/\n*.log\nbuild\n!keep.log\n',
    'README.md': '# Demo\nTODO: write docs\n',
    'keep.log': 'kept TODO\n',
    'debug.log': 'ignored TODO\n',
    'src/index.ts': 'import { helper } from "./util/helper";\n// TODO: remove\nexport const main = () => helper();\n',
    'src/util/helper.ts': 'export function helper() {\n  return 42;\n}\n',
    'src/util/.gitignore': 'generated.ts\n',
    'src/util/generated.ts': 'TODO generated\n',
    'src/.hidden.ts': 'TODO hidden but not ignored\n',
    'node_modules/pkg/index.js': 'TODO in a dependency\n',
    'build/out.js': 'TODO build output\n',
    'assets/logo.bin': Buffer.from([0, 84, 79, 68, 79]),
    'docs/guide.md': 'Intro\nline two\nTODO: guide\nline four\nline five\nline six\nline seven\nTODO again\n',
    '.git/config': 'TODO inside git\n',
  });
  await box.link('../outside', 'outside-link');
  await box.link('src/index.ts', 'index-link.ts');
  await mkdir(join(box.root, 'empty-dir'));
});
afterAll(() => box.remove());

describe('list_dir', () => {
  it('lists directories first, files with sizes, symlinks with targets', async () => {
    const r = await call(box.tools().list_dir, {});
    expect(r.text).toBe(
      [
        'the workspace root (13 entries):',
        '.git/',
        'assets/',
        'build/',
        'docs/',
        'empty-dir/',
        'node_modules/',
        'src/',
        '.gitignore  (36 B)',
        'README.md  (24 B)',
        'debug.log  (13 B)',
        'index-link.ts -> src/index.ts',
        'keep.log  (10 B)',
        'outside-link -> ../outside (outside the workspace)',
      ].join('\n'),
    );
  });

  it('lists a subdirectory, an empty one, and caps long listings', async () => {
    expect((await call(box.tools().list_dir, { path: 'src/util' })).text).toBe(
      'src/util (3 entries):\n.gitignore  (13 B)\ngenerated.ts  (15 B)\nhelper.ts  (42 B)',
    );
    expect((await call(box.tools().list_dir, { path: 'empty-dir' })).text).toBe('empty-dir is empty.');
    const capped = await call(box.tools({ maxResults: 2 }).list_dir, {});
    expect(capped.text).toContain('… and 11 more entries not shown');
  });

  it('refuses files, and directories outside', async () => {
    expect((await call(box.tools().list_dir, { path: 'README.md' })).text).toContain('use read_file');
    expect((await call(box.tools().list_dir, { path: 'outside-link' })).thrown?.code).toBe('path_refused');
    expect((await call(box.tools().list_dir, { path: '..' })).thrown?.code).toBe('path_refused');
  });
});

describe('glob', () => {
  it('matches at any depth with **, skipping .git and gitignored paths (nested .gitignore too), sorted', async () => {
    const r = await call(box.tools().glob, { pattern: '**/*.ts' });
    expect(r.text).toBe('index-link.ts\nsrc/.hidden.ts\nsrc/index.ts\nsrc/util/helper.ts');
  });

  it('honours negations and directory-only patterns', async () => {
    expect((await call(box.tools().glob, { pattern: '*.log' })).text).toBe('keep.log');
    expect((await call(box.tools().glob, { pattern: '**/out.js' })).text).toContain('No paths match');
  });

  it('is relative to path, reports paths from the root, and marks directories', async () => {
    expect((await call(box.tools().glob, { pattern: '*', path: 'src' })).text).toBe('src/.hidden.ts\nsrc/index.ts\nsrc/util/');
    expect((await call(box.tools().glob, { pattern: 'src/util/*.ts' })).text).toBe('src/util/helper.ts');
    expect((await call(box.tools().glob, { pattern: './README.md' })).text).toBe('README.md');
    expect((await call(box.tools().glob, { pattern: '{docs,src}/*.md' })).text).toBe('docs/guide.md');
  });

  it('hints at ** when a top-level pattern finds nothing', async () => {
    const r = await call(box.tools().glob, { pattern: '*.py' });
    expect(r.text).toBe(
      'No paths match "*.py" in the workspace ("*.py" matches only directly in the workspace; use "**/*.py" for any depth).',
    );
  });

  it('caps results and says how many there were', async () => {
    const r = await call(box.tools({ maxResults: 2 }).glob, { pattern: '**/*' });
    expect(r.text.split('\n').slice(0, 2)).toHaveLength(2);
    expect(r.text).toMatch(/\[2 of \d+ matches shown: narrow the pattern or set path\]/);
  });

  it('refuses patterns that leave the workspace and does not follow symlinked directories', async () => {
    expect((await call(box.tools().glob, { pattern: '../outside/*' })).thrown?.code).toBe('path_refused');
    expect((await call(box.tools().glob, { pattern: '/etc/*' })).thrown?.code).toBe('path_refused');
    expect((await call(box.tools().glob, { pattern: '**/secret.txt' })).text).toContain('No paths match');
  });
});

describe('grep', () => {
  it('finds matching lines as path:line: text, skipping .git, ignored, binary files and symlinks', async () => {
    const r = await call(box.tools().grep, { pattern: 'TODO' });
    expect(r.text).toBe(
      [
        'README.md:2: TODO: write docs',
        'keep.log:1: kept TODO',
        'docs/guide.md:3: TODO: guide',
        'docs/guide.md:8: TODO again',
        'src/.hidden.ts:1: TODO hidden but not ignored',
        'src/index.ts:2: // TODO: remove',
      ].join('\n'),
    );
    expect(r.details).toMatchObject({ matches: 6, files: 5 });
  });

  it('filters by glob (file names at any depth without a slash), path and case', async () => {
    expect((await call(box.tools().grep, { pattern: 'todo', glob: '*.md', ignore_case: true })).text).toBe(
      'README.md:2: TODO: write docs\ndocs/guide.md:3: TODO: guide\ndocs/guide.md:8: TODO again',
    );
    expect((await call(box.tools().grep, { pattern: 'return \\d+', path: 'src' })).text).toBe('src/util/helper.ts:2:   return 42;');
    expect((await call(box.tools().grep, { pattern: 'TODO', path: 'src/index.ts' })).text).toBe('src/index.ts:2: // TODO: remove');
    expect((await call(box.tools().grep, { pattern: 'todo' })).text).toContain('No matches for "todo" in the workspace');
  });

  it('searches an ignored file when it is named explicitly', async () => {
    expect((await call(box.tools().grep, { pattern: 'TODO', path: 'debug.log' })).text).toBe('debug.log:1: ignored TODO');
  });

  it('shows context lines and separates groups with --', async () => {
    const r = await call(box.tools().grep, { pattern: 'TODO', path: 'docs', context: 1 });
    expect(r.text).toBe(
      [
        'docs/guide.md-2- line two',
        'docs/guide.md:3: TODO: guide',
        'docs/guide.md-4- line four',
        '--',
        'docs/guide.md-7- line seven',
        'docs/guide.md:8: TODO again',
      ].join('\n'),
    );
  });

  it('lists only file names with files_only, and stops at the cap saying there are more', async () => {
    expect((await call(box.tools().grep, { pattern: 'TODO', files_only: true, path: 'docs' })).text).toBe('docs/guide.md');
    const capped = await call(box.tools({ maxResults: 2 }).grep, { pattern: 'TODO' });
    expect(capped.text.split('\n')).toHaveLength(3);
    expect(capped.text).toContain('[stopped at 2 matching lines: there are more');
  });

  it('explains a bad regular expression', async () => {
    const r = await call(box.tools().grep, { pattern: 'foo(' });
    expect(r.thrown?.code).toBe('invalid_arguments');
    expect(r.text).toContain('invalid regular expression "foo(":');
    expect(r.text).toContain('escape special characters');
  });

  it('runs a catastrophic-backtracking pattern in linear time (RE2): ^(a+)+$ over long lines of a', async () => {
    // V8's engine takes about 2^n steps here and cannot be interrupted: the process would hang.
    await box.write({ 'redos/a.txt': `${'a'.repeat(37)}!\n${'a'.repeat(50_000)}b\n${'a'.repeat(40)}\n` });
    expect((await call(box.tools().grep, { pattern: '^(a+)+$', path: 'redos' })).text).toBe(`redos/a.txt:3: ${'a'.repeat(40)}`);
    expect((await call(box.tools().grep, { pattern: '(x+x+)+y', path: 'redos' })).text).toContain('No matches');
  });

  it('refuses lookaround and backreferences, saying RE2 does not have them', async () => {
    const look = await call(box.tools().grep, { pattern: 'foo(?=bar)' });
    expect(look.thrown?.code).toBe('invalid_arguments');
    expect(look.text).toContain('Lookahead and lookbehind');
    const back = await call(box.tools().grep, { pattern: '(a)\\1' });
    expect(back.text).toContain('Backreferences (\\1) are not supported');
  });

  it('supports named groups, \\u escapes and case folding beyond ASCII', async () => {
    await box.write({ 'unicode/more.txt': 'ÉCOLE\nid=42\n' });
    expect((await call(box.tools().grep, { pattern: '\\u00e9cole', path: 'unicode/more.txt', ignore_case: true })).text).toBe(
      'unicode/more.txt:1: ÉCOLE',
    );
    expect((await call(box.tools().grep, { pattern: 'id=(?<n>\\d+)', path: 'unicode/more.txt' })).text).toBe('unicode/more.txt:2: id=42');
  });

  it('supports Unicode property escapes', async () => {
    await box.write({ 'unicode/names.txt': 'Zoë\nplain\n' });
    expect((await call(box.tools().grep, { pattern: '\\p{Ll}ë', path: 'unicode' })).text).toBe('unicode/names.txt:1: Zoë');
  });

  it('refuses to search outside', async () => {
    expect((await call(box.tools().grep, { pattern: 'secret', path: 'outside-link' })).thrown?.code).toBe('path_refused');
    expect((await call(box.tools().grep, { pattern: 'secret', path: '../outside' })).thrown?.code).toBe('path_refused');
  });
});
