// The layering rules of DESIGN.md and STYLE.md, checked on the source itself.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

const files = sources(src).map((path) => ({ path: relative(src, path), text: readFileSync(path, 'utf8') }));

/** The top folder of every relative import of a file, resolved against the file's folder. */
function importedLayers(file: { path: string; text: string }): string[] {
  const layers: string[] = [];
  for (const match of file.text.matchAll(/from '(\.{1,2}\/[^']+)'|import\('(\.{1,2}\/[^']+)'\)/g)) {
    const spec = match[1] ?? match[2]!;
    const target = relative(src, join(src, file.path, '..', spec));
    layers.push(target.includes('/') ? target.split('/')[0]! : '(root)');
  }
  return layers;
}

describe('architecture', () => {
  it('nothing below the loop imports the loop', () => {
    const offenders = files.filter((f) => /^(model|tools)\//.test(f.path) && importedLayers(f).includes('loop'));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it('nothing outside the CLI imports the CLI', () => {
    const offenders = files.filter((f) => !f.path.startsWith('cli/') && importedLayers(f).includes('cli'));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it('only the CLI imports the server, and hono is imported only inside the server', () => {
    const offenders = files.filter((f) => !f.path.startsWith('cli/') && !f.path.startsWith('server/') && importedLayers(f).includes('server'));
    expect(offenders.map((f) => f.path)).toEqual([]);
    const hono = files.filter((f) => !f.path.startsWith('server/') && /from '(hono|@hono\/[^']+)'|import\('(hono|@hono\/[^']+)'\)/.test(f.text));
    expect(hono.map((f) => f.path)).toEqual([]);
    // The CLI loads the server only when `rein serve` runs: by import(), never statically.
    const eager = files.filter((f) => f.path.startsWith('cli/') && /^import (?!type )[^;]*from '\.\.?\/(\.\.\/)*server\//m.test(f.text));
    expect(eager.map((f) => f.path)).toEqual([]);
  });

  it('the model layer knows nothing of tools implementations', () => {
    const offenders = files.filter((f) => f.path.startsWith('model/') && importedLayers(f).includes('tools'));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it('no barrels: no `export *`', () => {
    expect(files.filter((f) => /export \*/.test(f.text)).map((f) => f.path)).toEqual([]);
  });

  it('no model text is ever run as code: no eval, no new Function', () => {
    expect(files.filter((f) => /(^|[^.\w])eval\(|new Function\(/.test(f.text)).map((f) => f.path)).toEqual([]);
  });

  it('only the CLI entry touches process.exit and process.argv', () => {
    const offenders = files.filter((f) => f.path !== 'cli/main.ts' && !f.path.startsWith('model/scripted/cli') && /process\.(exit|argv)/.test(f.text));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });
});
