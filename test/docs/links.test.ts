// The docs hold together: every relative link in the project's markdown (the README,
// docs/, examples/) reaches a file that exists, and a `#anchor` a heading of that file;
// the README links every page of docs/.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { headingsOf, linksOf } from './markdown.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The project's own markdown files (not dependencies, not build output). */
function markdownFiles(): string[] {
  const inFolder = (folder: string) =>
    readdirSync(join(root, folder))
      .filter((name) => name.endsWith('.md'))
      .map((name) => join(root, folder, name));
  return [join(root, 'README.md'), ...inFolder('docs'), ...inFolder('examples')];
}

const anchorsCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorsCache.get(file);
  if (!anchors) {
    anchors = new Set(headingsOf(readFileSync(file, 'utf8')).map((h) => h.anchor));
    anchorsCache.set(file, anchors);
  }
  return anchors;
}

/** What is wrong with one link of `file`, or undefined when it resolves. */
function problemOf(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: …: not checked offline
  const hash = target.indexOf('#');
  const path = hash === -1 ? target : target.slice(0, hash);
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const destination = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
  if (!existsSync(destination)) return `${relative(root, destination)} does not exist`;
  if (relative(root, destination).startsWith('..')) return 'it leads out of the repository';
  if (anchor === undefined) return undefined;
  if (statSync(destination).isDirectory() || !destination.endsWith('.md')) return `#${anchor} on a file that is not markdown`;
  return anchorsOf(destination).has(anchor) ? undefined : `${relative(root, destination)} has no heading #${anchor}`;
}

describe('the docs', () => {
  const files = markdownFiles();

  it('are found where the links expect them', () => {
    expect(files.map((f) => relative(root, f))).toEqual(
      expect.arrayContaining(['README.md', 'docs/cli.md', 'docs/events.md', 'examples/README.md']),
    );
  });

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const { target, number } of linksOf(readFileSync(file, 'utf8'))) {
        checked++;
        const problem = problemOf(file, target);
        if (problem) broken.push(`${relative(root, file)}:${number}: ${target}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('are all linked from the README', () => {
    const readme = join(root, 'README.md');
    const linked = new Set(linksOf(readFileSync(readme, 'utf8')).map(({ target }) => resolve(root, target.split('#')[0] as string)));
    const pages = files.filter((f) => f !== readme);
    expect(pages.filter((page) => !linked.has(page)).map((page) => relative(root, page))).toEqual([]);
  });

  it('the link checker itself catches a missing file, a missing heading and a link into a code span it must skip', () => {
    const file = join(root, 'docs/cli.md');
    expect(problemOf(file, 'nope.md')).toMatch(/does not exist/);
    expect(problemOf(file, 'events.md#no-such-heading')).toMatch(/has no heading/);
    expect(problemOf(file, 'events.md#run_started')).toBeUndefined();
    expect(problemOf(file, '#rein-run')).toBeUndefined();
    expect(linksOf('see `[a](missing.md)` and [b](x.md)\n```\n[c](y.md)\n```').map((l) => l.target)).toEqual(['x.md']);
  });
});
