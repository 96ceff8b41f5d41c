// Runs one of the TypeScript programs in examples/ on any Node rein supports:
// `node scripts/run-example.mjs examples/custom-tool.ts`. Node 22.18+ runs them directly
// (`node examples/custom-tool.ts`, by type stripping); Node 20 cannot, so this strips the
// types with the TypeScript compiler (no type check: `npm test` type-checks the examples)
// and runs the result. The output goes under dist/, inside this package, because the
// examples import `rein` and `rein/testing` by name, as a program that installed rein
// would: Node resolves a package's own name through its package.json `exports` only from
// files inside the package (and `npm run build` must have built dist/ first).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const [file, ...rest] = process.argv.slice(2);
if (!file || !/\.ts$/.test(file) || rest.length > 0) {
  process.stderr.write('usage: node scripts/run-example.mjs examples/<name>.ts\n');
  process.exit(2);
}

const source = resolve(file);
let text;
try {
  text = readFileSync(source, 'utf8');
} catch (error) {
  process.stderr.write(`${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}\n`);
  process.exit(2);
}

// The output is kept, named by what it was made from (the example, this script, the
// compiler's version), so a second run does not load the compiler again.
const require = createRequire(import.meta.url);
const compilerVersion = JSON.parse(readFileSync(require.resolve('typescript/package.json'), 'utf8')).version;
const key = createHash('sha256')
  .update(text)
  .update('\0')
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .update('\0')
  .update(compilerVersion)
  .digest('hex')
  .slice(0, 16);
const outDir = `${root}dist/examples`;
const out = `${outDir}/${basename(source, '.ts')}.${key}.mjs`;
if (!existsSync(out)) {
  const { default: ts } = await import('typescript');
  const { outputText, diagnostics } = ts.transpileModule(text, {
    fileName: source,
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
      inlineSourceMap: true,
      inlineSources: true,
    },
  });
  if (diagnostics?.length) {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => process.cwd(), getNewLine: () => '\n' };
    process.stderr.write(ts.formatDiagnostics(diagnostics, host));
    process.exit(2);
  }
  // Written whole and renamed into place, so runs in parallel (the test suite's) never read
  // a half-written file.
  mkdirSync(outDir, { recursive: true });
  const partial = `${out}.${process.pid}.tmp`;
  writeFileSync(partial, outputText);
  renameSync(partial, out);
  // Earlier versions of this example are of no more use.
  const name = basename(source, '.ts');
  for (const old of readdirSync(outDir)) {
    if (old !== basename(out) && old.startsWith(`${name}.`) && /^\.[0-9a-f]{16}\.mjs$/.test(old.slice(name.length)))
      rmSync(`${outDir}/${old}`, { force: true });
  }
}

// Stack traces point into the example's own lines.
process.setSourceMapsEnabled(true);
await import(pathToFileURL(out).href);
