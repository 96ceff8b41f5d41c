// The package as users get it: package.json's exports resolve to the bundled entry points
// (dist/bundle/, built by `npm run build`, which `npm test` runs first), each exporting
// what its source entry point exports, with every source module in exactly one file.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../', import.meta.url));
const bundle = join(root, 'dist/bundle');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  main: string;
  bin: Record<string, string>;
  exports: Record<string, string | { types: string; import: string }>;
};

/** Each export subpath ('.', './store', …) with its bundled file and its tsc counterpart. */
const entries = Object.entries(pkg.exports).flatMap(([subpath, target]) =>
  typeof target === 'string' ? [] : [{ subpath, file: target.import, perFile: target.types.replace(/\.d\.ts$/, '.js') }],
);

/** Runs an ES module snippet in a fresh Node process in the repository and parses its JSON output. */
function inNode<T>(code: string): T {
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' })) as T;
}

describe('the package', () => {
  it('is built', () => {
    expect(existsSync(bundle), 'dist/bundle/ is missing: run `npm run build` (npm test does)').toBe(true);
  });

  it('resolves every export to a bundled file that exports what its source entry point does', () => {
    expect(entries.length).toBeGreaterThanOrEqual(8);
    const specifiers = entries.map((e) => ({
      name: e.subpath === '.' ? 'rein' : `rein/${e.subpath.slice(2)}`,
      perFile: `./${e.perFile.slice(2)}`,
    }));
    const seen = inNode<{ name: string; resolved: string; names: string[]; expected: string[] }[]>(`
      const out = [];
      for (const { name, perFile } of ${JSON.stringify(specifiers)}) {
        const names = Object.keys(await import(name)).sort();
        const expected = Object.keys(await import(perFile)).sort();
        out.push({ name, resolved: import.meta.resolve(name), names, expected });
      }
      console.log(JSON.stringify(out));
    `);
    for (const entry of seen) {
      expect(entry.resolved, entry.name).toContain('/dist/bundle/');
      expect(entry.names, `${entry.name} exports`).toEqual(entry.expected);
      expect(entry.names.length, entry.name).toBeGreaterThan(0);
    }
    expect(pkg.main).toBe((pkg.exports['.'] as { import: string }).import);
  });

  it('has these entry points, each bundled from its source entry point', () => {
    expect(entries.map((e) => e.subpath)).toEqual([
      '.',
      './testing',
      './store',
      './mcp',
      './skills',
      './memory',
      './permissions',
      './workspace',
      './advanced',
      './project',
      './trace',
      './worker',
    ]);
    const bundled = readFileSync(join(root, 'scripts/bundle.mjs'), 'utf8');
    expect(bundled).toContain("advanced: 'src/advanced.ts'");
    expect(bundled).toContain("project: 'src/project/index.ts'");
    expect(bundled).toContain("worker: 'src/worker/index.ts'");
  });

  it('holds each source module once, so a class is the same class from every entry point', () => {
    const maps = readdirSync(bundle, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.js.map'));
    const owner = new Map<string, string>();
    const twice: string[] = [];
    for (const name of maps) {
      const { sources } = JSON.parse(readFileSync(join(bundle, name), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const other = owner.get(source);
        if (other !== undefined) twice.push(`${source} in ${other} and ${name}`);
        owner.set(source, name);
      }
    }
    expect(twice).toEqual([]);
    expect(owner.size).toBeGreaterThan(100);
    // An error thrown through one entry point is an instance of the class another exports.
    const same = inNode<boolean>(`
      const { ReinError } = await import('rein');
      const { MemoryRunStore } = await import('rein/store');
      const store = new MemoryRunStore();
      await store.close();
      const error = await store.getRun('r').then(() => undefined, (e) => e);
      console.log(JSON.stringify(error instanceof ReinError && error.code === 'store'));
    `);
    expect(same).toBe(true);
  });

  it('keeps the core entry point to the files it needs: one chunk and the bundler runtime', () => {
    const index = readFileSync(join(bundle, 'index.js'), 'utf8');
    const imports = [...index.matchAll(/(?:from |^import )"(\.[^"]+)"/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(
      imports.every((spec) => /^\.\/chunks\/(core|rolldown-runtime)-[\w-]+\.js$/.test(spec!)),
      imports.join(', '),
    ).toBe(true);
  });

  it('packs what the exports and the binary need, and not the per-file modules beside the bundle', () => {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }),
    ) as Array<{ files: Array<{ path: string }> }>;
    const files = new Set(packed[0]!.files.map((f) => f.path));
    const needed = [
      ...entries.flatMap((e) => [e.file.slice(2), e.perFile.slice(2).replace(/\.js$/, '.d.ts')]),
      pkg.bin.rein!,
      'package.json',
      'README.md',
    ];
    expect(needed.filter((file) => !files.has(file))).toEqual([]);
    // Every chunk an entry point imports is packed too.
    for (const name of readdirSync(join(bundle, 'chunks')).filter((n) => n.endsWith('.js')))
      expect(files.has(`dist/bundle/chunks/${name}`), name).toBe(true);
    expect([...files].filter((file) => file.endsWith('.js') && !file.startsWith('dist/bundle/') && file !== pkg.bin.rein)).toEqual([]);
  });

  it('rein --version prints the version in package.json', () => {
    const out = execFileSync(process.execPath, [join(root, pkg.bin.rein!), '--version'], { encoding: 'utf8' });
    expect(out.trim()).toBe(pkg.version);
  });
});
