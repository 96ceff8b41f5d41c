/**
 * Rein's optional packages: the heavier pieces (SQLite's better-sqlite3, pg, the MCP SDK,
 * the tokenizer, OpenTelemetry, the server's hono) are optional peer dependencies, installed
 * only by those who use them. Each is loaded here, when first used, and a missing one is a
 * `config` error that says what to install, never a bare "Cannot find module".
 */
import { ReinError } from './errors.js';

/** The package part of a specifier: `@scope/name` or `name` (a subpath such as `/client/index.js` dropped). */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * True when `error` is Node's "cannot find package `name`" for `specifier`'s own package
 * (not a package that one imports, which would be a broken install, not a missing piece).
 */
export function isMissingPackage(error: unknown, specifier: string): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  const name = packageOf(specifier).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`Cannot find (package|module) '${name}(/[^']*)?'`).test(String((error as Error).message));
}

/**
 * The error for `purpose` when `packages` are not installed. `details.missingPackages`
 * lists them, for callers that branch on it.
 */
export function missingPackage(purpose: string, packages: readonly string[], cause?: unknown): ReinError {
  const list = [...new Set(packages)];
  const what =
    list.length === 1 ? `the package ${list[0]}, which is not installed` : `the packages ${list.join(' and ')}, not all installed`;
  return new ReinError('config', 'fatal', `${purpose} needs ${what}: npm install ${list.join(' ')}`, {
    ...(cause === undefined ? {} : { cause }),
    details: { missingPackages: list },
  });
}

/**
 * Imports `specifier` (an ES module or a CommonJS package), or throws {@link missingPackage}
 * naming `packages` (default: the specifier's package) when it is not installed. Any other
 * failure (a broken package) is thrown as it came.
 *
 * @example
 * const pg = await importOptional<typeof import('pg')>('pg', 'the Postgres store');
 */
export async function importOptional<T>(
  specifier: string,
  purpose: string,
  packages: readonly string[] = [packageOf(specifier)],
): Promise<T> {
  try {
    return (await import(specifier)) as T;
  } catch (error) {
    if (isMissingPackage(error, specifier)) throw missingPackage(purpose, packages, error);
    throw error;
  }
}

/**
 * `error` as {@link missingPackage} when it is Node's "cannot find package" for one of
 * `packages` (which a lazily imported rein module needs), else `error` itself: for
 * `import('./rein-module.js').catch((e) => { throw asMissing(e, ['pg'], 'the Postgres store'); })`.
 */
export function asMissing(error: unknown, packages: readonly string[], purpose: string): unknown {
  return packages.some((name) => isMissingPackage(error, name)) ? missingPackage(purpose, packages, error) : error;
}
