/**
 * MCP configuration in the field's convention: `{ "mcpServers": { name: entry } }` in
 * `~/.rein/mcp.json` (user) and the project's `.mcp.json` (the nearest from cwd up to the
 * repository root, which wins on a shared name), plus servers passed in code. Loading
 * never throws: every problem is a diagnostic naming its file and key, and the good
 * entries are used.
 */
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { readJsonFile } from '../config/json-file.js';
import { isRecord } from '../util/json.js';
import { pathExists, projectDirs } from '../util/repo-root.js';
import { checkServerEntry, type EntryContext } from './config-entry.js';
import type { McpConfig, McpDiagnostic, McpServerConfig } from './types.js';

/** Options of {@link loadMcpConfig}. */
export interface LoadMcpConfigOptions {
  /**
   * The working directory (default `process.cwd()`): the project's `.mcp.json` is the
   * nearest one from here up to the repository root, and servers given in code resolve a
   * relative `cwd` against it.
   */
  cwd?: string;
  /** The user's home holding `.rein/mcp.json` (default `os.homedir()`). */
  home?: string;
  /** Where `${VAR}` is looked up (default `process.env`). */
  env?: Record<string, string | undefined>;
  /**
   * The files to read, later ones winning on a shared server name. Default
   * ({@link defaultConfigFiles}): the user file, then the project file, each skipped when
   * it does not exist, the project file's servers starting in its folder. Files listed
   * here are read as named: one that does not exist is an error diagnostic (it was asked
   * for by name), and their servers start where rein runs unless an entry sets `cwd` —
   * so listing `defaultConfigFiles(...)` here is not the same as leaving `files` out.
   */
  files?: string[];
  /** Servers given in code; they win over every file. */
  servers?: Record<string, unknown>;
}

/**
 * The default config files for a working directory and home, in the order they apply:
 * `~/.rein/mcp.json`, then the project's `.mcp.json` — the nearest one from `cwd` up to
 * the repository root (just `cwd` outside a repository, as for skills and rules), or
 * `cwd`'s own path when there is none.
 *
 * @example
 * defaultConfigFiles('/repo/packages/app', '/home/me');
 * // ['/home/me/.rein/mcp.json', '/repo/.mcp.json'] when only the root has one
 */
export function defaultConfigFiles(cwd: string, home: string): string[] {
  return [join(home, '.rein', 'mcp.json'), projectConfigFile(cwd)];
}

/**
 * The nearest `.mcp.json` from `cwd` up to the repository root. Only one is used: a
 * subfolder with its own file has chosen its servers, and merging the root's in would
 * start servers it left out. Any entry of that name counts, so a broken nearest file is
 * reported rather than silently passed over for one further up.
 */
function projectConfigFile(cwd: string): string {
  const candidates = projectDirs(cwd).map((dir) => join(dir, '.mcp.json'));
  return candidates.find(pathExists) ?? join(resolve(cwd), '.mcp.json');
}

/**
 * Reads and checks MCP configuration. A default file that is missing is skipped; a file
 * named in `files` that is missing, a file that is not JSON, or an entry that is broken
 * (missing `command`, an unknown field, an unset `${VAR}`), is reported in `diagnostics`
 * and left out; the rest is returned.
 *
 * @example
 * const { servers, diagnostics } = await loadMcpConfig({ cwd: process.cwd() });
 * for (const d of diagnostics) console.warn(`${d.file ?? ''} ${d.key}: ${d.message}`);
 */
export async function loadMcpConfig(options: LoadMcpConfigOptions = {}): Promise<McpConfig> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const named = options.files !== undefined;
  const files = options.files ?? defaultConfigFiles(cwd, options.home ?? homedir());
  // The project's own file describes its servers from where it sits: found from a
  // subfolder, its servers still start in the folder of the file (the project), so a
  // relative command, or an argument such as `.`, means the same wherever rein runs.
  const projectFile = named ? undefined : projectConfigFile(cwd);
  const config: McpConfig = { servers: {}, sources: {}, diagnostics: [] };
  for (const file of files) {
    const data = await readConfigFile(file, named, config.diagnostics);
    if (data === undefined) continue;
    // Relative paths mean the folder of the file that declares them, wherever rein runs.
    const baseDir = dirname(file);
    addEntries(config, serversOf(data, file, config.diagnostics), {
      file,
      baseDir,
      env,
      ...(file === projectFile ? { defaultCwd: baseDir } : {}),
    });
  }
  if (options.servers) addEntries(config, options.servers, { baseDir: cwd, env }, 'options');
  return config;
}

/** The parsed JSON of one config file, or `undefined` (with a diagnostic unless it is a missing default file). */
async function readConfigFile(file: string, named: boolean, out: McpDiagnostic[]): Promise<unknown> {
  const read = await readJsonFile(file);
  switch (read.kind) {
    case 'ok':
      return read.data;
    case 'missing':
      if (named) out.push({ severity: 'error', file, key: '', message: 'does not exist: check the path given for it' });
      return undefined;
    case 'unreadable':
      out.push({ severity: 'error', file, key: '', message: `cannot be read (${read.reason})` });
      return undefined;
    case 'invalid':
      out.push({ severity: 'error', file, key: '', message: `is not valid JSON (${read.where}); no server of this file was started` });
      return undefined;
  }
}

/** The `mcpServers` object of a config file, reporting a wrong shape; `{}` when nothing is usable. */
function serversOf(data: unknown, file: string, out: McpDiagnostic[]): Record<string, unknown> {
  if (!isRecord(data)) {
    out.push({ severity: 'error', file, key: '', message: 'must be a JSON object like { "mcpServers": { "name": { "command": "…" } } }' });
    return {};
  }
  const servers = data.mcpServers;
  if (servers === undefined) {
    out.push({ severity: 'warning', file, key: 'mcpServers', message: 'is missing: this file declares no servers' });
    return {};
  }
  if (!isRecord(servers)) {
    out.push({ severity: 'error', file, key: 'mcpServers', message: 'must be an object mapping server names to entries' });
    return {};
  }
  return servers;
}

function addEntries(config: McpConfig, entries: Record<string, unknown>, ctx: EntryContext, source = ctx.file ?? 'options'): void {
  for (const [name, raw] of Object.entries(entries)) {
    // A later definition replaces an earlier one, even a broken one: falling back silently
    // to the user's entry would hide the project's mistake.
    delete config.servers[name];
    delete config.sources[name];
    const server: McpServerConfig | undefined = checkServerEntry(name, raw, ctx, config.diagnostics);
    if (!server) continue;
    config.servers[name] = server;
    config.sources[name] = source;
  }
}
