// `npm run build`, second step: the package's entry points (package.json "exports" and the
// CLI) bundled from src/ into dist/bundle/. Node resolves, reads and compiles every module
// file on its own, so `import 'rein'` over ~100 small files costs about twice what it costs
// over one: the modules of the core entry point go into one chunk, the other entry points
// share it, and rein's own modules that are imported lazily (the other providers, the CLI's
// commands) stay in chunks of their own. Dependencies stay external, but for ajv (BUNDLED),
// and those rein loads lazily (the tokenizers, ajv, better-sqlite3) are still loaded lazily. tsc's per-file output (dist/**/*.js and
// the .d.ts files) is left as it is: the types come from it, and the tests that spawn
// built modules import it directly.
import { copyFileSync, rmSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, rolldown } from 'rolldown';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = `${root}dist/bundle`;

/** Entry name (file name under dist/bundle/) → source. package.json points at these. */
const ENTRIES = {
  index: 'src/index.ts',
  advanced: 'src/advanced.ts',
  testing: 'src/testing/index.ts',
  store: 'src/store/index.ts',
  mcp: 'src/mcp/index.ts',
  skills: 'src/skills/index.ts',
  memory: 'src/memory/index.ts',
  permissions: 'src/permissions/index.ts',
  workspace: 'src/workspace/index.ts',
  trace: 'src/trace/index.ts',
  project: 'src/project/index.ts',
  worker: 'src/worker/index.ts',
  cli: 'src/cli/main.ts',
};

/**
 * ajv and its dependencies go into rein's lazily loaded validation chunk: ajv is CommonJS
 * in about 70 files, and resolving, reading and compiling them one by one was the largest
 * part of a process's first tool call. It is still loaded only when a first schema is
 * compiled; the version is the one package.json pins.
 */
const BUNDLED = /^(ajv|fast-deep-equal|fast-uri|json-schema-traverse|require-from-string)(\/|$)/;

const shared = {
  cwd: root,
  platform: 'node',
  // The syntax tsc emits for the per-file output (tsconfig's target), so both run on Node 20.
  transform: { target: 'es2022' },
  // Bare specifiers are node: built-ins and npm dependencies: installed, never copied in;
  // except ajv (see BUNDLED).
  external: (id) => !id.startsWith('.') && !isAbsolute(id) && !BUNDLED.test(id),
  logLevel: 'warn',
};

/** The modules the core entry point loads statically (not those it imports lazily). */
async function coreModules() {
  const bundle = await rolldown({ ...shared, input: ENTRIES.index });
  const { output } = await bundle.generate({ format: 'esm' });
  await bundle.close();
  const entry = output.find((item) => item.type === 'chunk' && item.isEntry);
  const modules = new Set(entry.moduleIds);
  // Chunks the entry imports statically belong to the core too.
  const queue = [...entry.imports];
  for (let name; (name = queue.shift()) !== undefined; ) {
    const chunk = output.find((item) => item.type === 'chunk' && item.fileName === name);
    if (!chunk) continue;
    for (const id of chunk.moduleIds) modules.add(id);
    queue.push(...chunk.imports);
  }
  return modules;
}

const core = await coreModules();
rmSync(outDir, { recursive: true, force: true });
await build({
  ...shared,
  input: ENTRIES,
  output: {
    dir: outDir,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    sourcemap: true,
    codeSplitting: { groups: [{ name: 'core', test: (id) => core.has(id) }] },
  },
});

// The run viewer of `rein serve`: browser code, bundled on its own (no Node built-ins, no
// dependencies), beside its page, style sheet and icon. The server reads these files from
// dist/bundle/viewer/ when it starts.
const viewerSrc = `${root}src/server/viewer/`;
const viewerOut = `${outDir}/viewer`;
await build({
  cwd: root,
  platform: 'browser',
  input: { app: 'src/server/viewer/main.ts' },
  transform: { target: 'es2022' },
  logLevel: 'warn',
  output: { dir: viewerOut, format: 'esm', entryFileNames: '[name].js', minify: true },
});
for (const file of ['index.html', 'style.css', 'icon.svg']) copyFileSync(`${viewerSrc}${file}`, `${viewerOut}/${file}`);
