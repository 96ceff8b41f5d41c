// A copy of rein installed beside every package of this checkout except some: what a user
// gets who installs rein without its optional packages. rein's files (package.json, bin/,
// dist/) are copied, so Node resolves its imports from the copy's node_modules, where each
// package of the checkout is a symlink except the hidden ones. Nothing is mocked: a hidden
// package is simply not there for Node's resolver.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

/** A folder with rein in `node_modules/rein` and every package of the checkout but `hidden`. */
export interface Install {
  /** The folder (a project that depends on rein). */
  dir: string;
  /** rein's folder inside it. */
  rein: string;
  /** Removes the folder. */
  remove(): void;
}

/** Installs rein (as built: run `npm run build` first) beside every package of this checkout except `hidden`. */
export function installWithout(hidden: readonly string[]): Install {
  const dir = mkdtempSync(join(tmpdir(), 'rein-without-'));
  const modules = join(dir, 'node_modules');
  const rein = join(modules, 'rein');
  mkdirSync(rein, { recursive: true });
  for (const item of ['package.json', 'bin', 'dist']) cpSync(join(root, item), join(rein, item), { recursive: true });
  const skip = new Set([...hidden, '.bin', '.package-lock.json', 'rein']);
  for (const name of readdirSync(join(root, 'node_modules'))) {
    if (skip.has(name)) continue;
    if (name.startsWith('@')) {
      mkdirSync(join(modules, name));
      for (const inner of readdirSync(join(root, 'node_modules', name))) {
        if (!skip.has(`${name}/${inner}`)) symlinkSync(join(root, 'node_modules', name, inner), join(modules, name, inner));
      }
    } else {
      symlinkSync(join(root, 'node_modules', name), join(modules, name));
    }
  }
  return { dir, rein, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
