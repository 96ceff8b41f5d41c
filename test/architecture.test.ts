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

/**
 * Every relative module specifier of a file: static imports and re-exports (type-only ones
 * included: a type cycle still ties the files together), side-effect imports, `import()`
 * and `typeof import()`. Comments are dropped first, so an `@example` is no import.
 */
function specifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const found: string[] = [];
  for (const match of code.matchAll(
    /\b(?:import|export)\b[^'";]*?\bfrom\s*'(\.{1,2}\/[^']+)'|\bimport\s*\(\s*'(\.{1,2}\/[^']+)'\s*\)|^\s*import\s*'(\.{1,2}\/[^']+)'/gm,
  )) {
    found.push((match[1] ?? match[2] ?? match[3])!);
  }
  return found;
}

/** The source files each file imports (paths relative to src/, `.ts`). */
const imports = new Map(
  files.map((file) => [
    file.path,
    specifiers(file.text).map((spec) => relative(src, join(src, file.path, '..', spec)).replace(/\.js$/, '.ts')),
  ]),
);

/** The top folder of every relative import of a file, resolved against the file's folder. */
function importedLayers(file: { path: string; text: string }): string[] {
  return (imports.get(file.path) ?? []).map((target) => (target.includes('/') ? target.split('/')[0]! : '(root)'));
}

/**
 * The rooms from the top down: a file may import its own room and the rooms of lower rows,
 * never a room of its own row or above. A room is a folder of src/ (or, where the table
 * names one, a part of a folder or a root file): the most specific entry wins.
 *
 * The order of DESIGN.md (cli/server/worker → loop → context/tools/model/… →
 * store/http/util), made exact: the run log's events carry the model's messages, so
 * `events.ts` and `store/` sit above `model/`; `trace/` derives from events (and posts
 * webhooks over the HTTP client); `security/` redacts events on their way to a store. The
 * scripted model server (`rein/testing`, `testing/`) sits right under the CLI, so nothing
 * else in src may import it.
 */
const ORDER: readonly (readonly string[])[] = [
  ['index.ts', 'advanced.ts'], // the package's root entry points: `rein` and `rein/advanced`
  ['cli'],
  ['testing'],
  ['server', 'worker'],
  ['project'],
  ['loop'],
  ['context'],
  ['agents', 'memory', 'mcp', 'permissions'],
  ['skills'],
  ['workspace'],
  ['tools'],
  ['trace'],
  ['security'],
  ['store'],
  ['events.ts'],
  ['model'],
  ['http'],
  ['config'],
  ['process'],
  ['util'],
  ['optional.ts'], // the optional packages' loader, whose error is a ReinError
  ['errors.ts', 'ids.ts'],
];

const ROW = new Map(ORDER.flatMap((rooms, row) => rooms.map((room) => [room, row] as const)));

/** The room of a source file: the longest entry of {@link ORDER} it lies in. */
function roomOf(path: string): string | undefined {
  let best: string | undefined;
  for (const room of ROW.keys()) {
    if ((path === room || path.startsWith(`${room}/`)) && (best === undefined || room.length > best.length)) best = room;
  }
  return best;
}

/** Files that import each other, directly or around a circle (Tarjan's strongly connected components). */
function importCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    if (component.length > 1 || graph.get(node)!.includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

describe('architecture', () => {
  it('no import cycle between files, type-only imports included', () => {
    expect(importCycles(imports)).toEqual([]);
  });

  it('finds a cycle, and a type-only one, where there is one', () => {
    expect(
      importCycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', ['a.ts']],
          ['d.ts', ['a.ts']],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(
      specifiers(
        "import type { X } from './x.js';\nexport type { Y } from '../y.js';\nconst z = await import('./z.js');\n// import { w } from './w.js';",
      ),
    ).toEqual(['./x.js', '../y.js', './z.js']);
  });

  it('every source file belongs to a room of the order table', () => {
    expect(files.filter((f) => roomOf(f.path) === undefined).map((f) => f.path)).toEqual([]);
  });

  it('imports go down the order of the rooms, never up or sideways', () => {
    const offenders: string[] = [];
    for (const [path, targets] of imports) {
      const from = roomOf(path)!;
      for (const target of targets) {
        const to = roomOf(target);
        if (to === undefined || to === from) continue;
        if (ROW.get(to)! <= ROW.get(from)!) offenders.push(`${path} (${from}) imports ${target} (${to})`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the scripted model server is imported by nothing in src but the CLI', () => {
    const offenders = [...imports].filter(([path, targets]) => {
      const from = roomOf(path);
      return from !== 'cli' && from !== 'testing' && targets.some((t) => roomOf(t) === 'testing');
    });
    expect(offenders.map(([path]) => path)).toEqual([]);
  });

  it('nothing below the loop imports the loop', () => {
    const offenders = files.filter((f) => /^(model|tools)\//.test(f.path) && importedLayers(f).includes('loop'));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it('nothing outside the CLI imports the CLI', () => {
    const offenders = files.filter((f) => !f.path.startsWith('cli/') && importedLayers(f).includes('cli'));
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it('only the CLI imports the server, and hono is imported only inside the server', () => {
    const offenders = files.filter(
      (f) => !f.path.startsWith('cli/') && !f.path.startsWith('server/') && importedLayers(f).includes('server'),
    );
    expect(offenders.map((f) => f.path)).toEqual([]);
    const hono = files.filter(
      (f) => !f.path.startsWith('server/') && /from '(hono|@hono\/[^']+)'|import\('(hono|@hono\/[^']+)'\)/.test(f.text),
    );
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
    const offenders = files.filter(
      (f) => f.path !== 'cli/main.ts' && !f.path.startsWith('testing/cli') && /process\.(exit|argv)/.test(f.text),
    );
    expect(offenders.map((f) => f.path)).toEqual([]);
  });
});
