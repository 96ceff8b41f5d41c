/** rein's own version, for `rein --version`, the server's OpenAPI document and the telemetry resource (`service.version`). */

/**
 * rein's version from its package.json: the nearest one named `rein` above this module,
 * which runs from tsc's per-file output or from the bundle, at different depths.
 */
export async function packageVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(await readFile(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'rein' && pkg.version) return pkg.version;
    } catch {
      // no package.json here (or not readable): look further up
    }
    // At the root `..` is the root again (`file:///` here, `file:///C:/` on Windows).
    if (new URL('..', dir).href === dir.href) return 'unknown';
  }
}
