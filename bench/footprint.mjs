// `npm run bench:footprint`: what installing rein costs, per use. Packs rein (as built), then
// installs the tarball into an empty folder for each use — the library alone; + SQLite
// (better-sqlite3); + MCP (the MCP SDK); the full CLI (every optional package) — and prints
// the packages and megabytes each brings, then the import time of each entry point there
// (a fresh Node per import: wall median and minimum, CPU median, of 7). The optional packages come at the
// versions this checkout's devDependencies pin. A script, not a test: its figures are
// reported, not asserted.
//
// Flags: --keep (leave the folders, printed at the end), --ignore-scripts (skip install
// scripts: better-sqlite3 is then not compiled, so its MB leave out the build).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const keep = process.argv.includes('--keep');
const ignoreScripts = process.argv.includes('--ignore-scripts');
const RUNS = 7;

const pinned = (name) => `${name}@${pkg.devDependencies[name]}`;
const optional = Object.keys(pkg.peerDependencies);

/** Each use: what is installed beside rein. */
const USES = [
  { name: 'library only', extra: [] },
  { name: '+ SQLite (better-sqlite3)', extra: ['better-sqlite3'] },
  { name: '+ MCP (@modelcontextprotocol/sdk)', extra: ['@modelcontextprotocol/sdk'] },
  { name: 'full CLI (every optional package)', extra: optional },
];

/** The entry points: package.json's exports, as specifiers. */
const ENTRIES = Object.keys(pkg.exports)
  .filter((subpath) => subpath !== './package.json')
  .map((subpath) => (subpath === '.' ? 'rein' : `rein/${subpath.slice(2)}`));

const work = mkdtempSync(join(tmpdir(), 'rein-footprint-'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

console.log(`rein ${pkg.version} footprint on Node ${process.version} (${process.platform}-${process.arch})`);
const packed = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], root))[0];
const tarball = join(work, packed.filename);
console.log(
  `packed: ${packed.filename}, ${(packed.size / 1e6).toFixed(2)} MB packed, ${(packed.unpackedSize / 1e6).toFixed(2)} MB unpacked, ${packed.entryCount} files\n`,
);

/** Every installed package under `modules` (nested node_modules included): [count, bytes]. */
function measure(modules) {
  let count = 0;
  let bytes = 0;
  const sizeOf = (path) => {
    let total = 0;
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) total += sizeOf(full);
      else if (entry.isFile()) total += statSync(full).size;
    }
    return total;
  };
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const full = join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        walk(full);
        continue;
      }
      count++;
      walk(join(full, 'node_modules'));
    }
  };
  walk(modules);
  bytes = sizeOf(modules);
  return { count, bytes };
}

/** Milliseconds `import(specifier)` takes in a fresh Node in `cwd` (wall { median, min }, CPU median of RUNS), or the error's first line. */
function importMs(cwd, specifier) {
  // Wall time and this process's CPU time: on a busy machine the wall time is mostly waiting
  // for a core, while the CPU time stays what the import costs.
  const code = `const c = process.cpuUsage(); const t = performance.now(); await import(${JSON.stringify(specifier)}); const u = process.cpuUsage(c); console.log(performance.now() - t, (u.user + u.system) / 1000);`;
  const times = [];
  const cpu = [];
  for (let i = 0; i < RUNS; i++) {
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd, encoding: 'utf8' });
    if (out.status !== 0)
      return (
        String(out.stderr)
          .split('\n')
          .find((line) => line.includes('Error')) ?? 'failed'
      );
    const [wall, used] = out.stdout.trim().split(' ').map(Number);
    times.push(wall);
    cpu.push(used);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], min: times[0], cpu: cpu[Math.floor(cpu.length / 2)] };
}

const rows = [];
/** better-sqlite3's build/ folder once an install compiled it. */
let built;
for (const use of USES) {
  const dir = join(work, use.name.replace(/\W+/g, '-').replace(/^-|-$/g, ''));
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'footprint', private: true, type: 'module' }));
  const began = Date.now();
  // better-sqlite3 compiles from source where no prebuilt binary can be fetched (minutes): a
  // second install of it copies the first one's build/ instead (the same version and Node,
  // so the same files a compile would leave), and its install scripts are skipped.
  const reuse = !ignoreScripts && use.extra.includes('better-sqlite3') ? built : undefined;
  npm(
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--no-package-lock',
      ...(ignoreScripts || reuse ? ['--ignore-scripts'] : []),
      tarball,
      ...use.extra.map(pinned),
    ],
    dir,
  );
  const sqliteBuild = join(dir, 'node_modules/better-sqlite3/build');
  if (reuse) cpSync(reuse, sqliteBuild, { recursive: true });
  else if (use.extra.includes('better-sqlite3') && existsSync(sqliteBuild)) built = sqliteBuild;
  const seconds = (Date.now() - began) / 1000;
  const { count, bytes } = measure(join(dir, 'node_modules'));
  const imports = Object.fromEntries(ENTRIES.map((entry) => [entry, importMs(dir, entry)]));
  rows.push({ use: use.name, packages: count, mb: bytes / 1e6, seconds, imports, dir, reused: reuse !== undefined });
  console.log(
    `installed ${use.name}: ${count} packages, ${(bytes / 1e6).toFixed(1)} MB, in ${seconds.toFixed(0)} s${reuse ? ' (better-sqlite3 build copied, not compiled again)' : ''}`,
  );
}

const pad = (text, width) => String(text).padEnd(width);
// The minimum beside the median: on a busy machine it is the better guess of what an import costs.
const fmt = (value) =>
  typeof value === 'object' ? `${value.median.toFixed(1)} (${value.min.toFixed(1)}) ms, CPU ${value.cpu.toFixed(1)}` : value;
console.log(`\n| use | packages | MB | install s |`);
console.log('|---|---:|---:|---:|');
for (const r of rows)
  console.log(`| ${r.use} | ${r.packages} | ${r.mb.toFixed(1)} | ${r.seconds.toFixed(0)}${r.reused ? ' (build copied)' : ''} |`);
console.log(
  `\nimport time of each entry point: wall median (min) and CPU median of ${RUNS}, each in a fresh Node (packages are counted with rein itself; MB are node_modules' file sizes)\n`,
);
console.log(`| entry | ${rows.map((r) => r.use).join(' | ')} |`);
console.log(`|---|${rows.map(() => '---:').join('|')}|`);
for (const entry of ENTRIES) console.log(`| ${pad(`import('${entry}')`, 28)} | ${rows.map((r) => fmt(r.imports[entry])).join(' | ')} |`);

const lib = rows[0];
const core = lib.imports.rein;
console.log(
  `\ntargets: library only ≤ 20 packages (${lib.packages}), ≤ 15 MB (${lib.mb.toFixed(1)}); import('rein') ≤ 50 ms (${fmt(core)})`,
);
if (keep) console.log(`folders kept in ${work}`);
else rmSync(work, { recursive: true, force: true });
