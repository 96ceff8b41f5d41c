/**
 * Workspace tools: files and a shell for a coding agent, confined to one directory.
 * `read_file`, `write_file`, `edit_file`, `list_dir`, `glob`, `grep` and `bash`, each a
 * {@link Tool} with a risk, an effect, a permission subject and (for writes) a diff preview.
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ReinError } from '../errors.js';
import type { Tool } from '../tools/types.js';
import { createBashTool, type BashToolOptions } from './bash.js';
import { createEditFileTool } from './edit-file.js';
import { createGlobTool } from './glob.js';
import { createGrepTool } from './grep.js';
import { createListDirTool } from './list-dir.js';
import { createReadFileTool } from './read-file.js';
import { DEFAULT_MAX_READ_BYTES, DEFAULT_MAX_RESULTS, positiveInteger, type Workspace } from './workspace.js';
import { createWriteFileTool } from './write-file.js';

/** Options of {@link createWorkspaceTools}. */
export interface WorkspaceToolsOptions {
  /** The directory the tools are confined to (default: the working directory). Resolved to its real path once. */
  root?: string;
  /** Which tools to create, by name (default: all of {@link WORKSPACE_TOOL_NAMES}). */
  tools?: readonly string[];
  /** Options of the `bash` tool. */
  bash?: BashToolOptions;
  /** Bytes of file text one read_file call returns at most (default 12 000). */
  maxReadBytes?: number;
  /** Entries list_dir and glob return, and matching lines grep returns, at most (default 250). */
  maxResults?: number;
}

/** The names of the workspace tools, in the order {@link createWorkspaceTools} returns them. */
export const WORKSPACE_TOOL_NAMES = ['read_file', 'write_file', 'edit_file', 'list_dir', 'glob', 'grep', 'bash'] as const;

/** One workspace tool's name. */
export type WorkspaceToolName = (typeof WORKSPACE_TOOL_NAMES)[number];

/**
 * Creates the workspace tools over `options.root`. Every path a tool takes is checked by
 * the path guard (`resolveInWorkspace`): paths that lead outside the root — by `..`, as
 * absolute paths, or through symlinks — are refused. `bash` runs in the root inside a
 * bubblewrap sandbox (`bash.sandbox`, default `workspace-write`; see `sandbox.ts`); gate it
 * with a permission policy too. Throws a `config` ReinError for
 * a root that is not a directory or an unknown tool name.
 *
 * @example
 * const agent = new Agent({
 *   model: 'openai/gpt-4o-mini',
 *   tools: createWorkspaceTools({ root: './project', bash: { timeoutMs: 60_000 } }),
 * });
 */
export function createWorkspaceTools(options: WorkspaceToolsOptions = {}): Tool[] {
  const root = resolve(options.root ?? process.cwd());
  const workspace: Workspace = {
    root,
    realRoot: realDirectory(root),
    maxReadBytes: positiveInteger(options.maxReadBytes, 'maxReadBytes') ?? DEFAULT_MAX_READ_BYTES,
    maxResults: positiveInteger(options.maxResults, 'maxResults') ?? DEFAULT_MAX_RESULTS,
  };
  const wanted = options.tools ?? WORKSPACE_TOOL_NAMES;
  for (const name of wanted) {
    if (!(WORKSPACE_TOOL_NAMES as readonly string[]).includes(name)) {
      throw new ReinError('config', 'fatal', `unknown workspace tool "${name}": choose from ${WORKSPACE_TOOL_NAMES.join(', ')}`);
    }
  }
  const factories: Record<WorkspaceToolName, () => Tool> = {
    read_file: () => createReadFileTool(workspace),
    write_file: () => createWriteFileTool(workspace),
    edit_file: () => createEditFileTool(workspace),
    list_dir: () => createListDirTool(workspace),
    glob: () => createGlobTool(workspace),
    grep: () => createGrepTool(workspace),
    bash: () => createBashTool(workspace, options.bash),
  };
  return WORKSPACE_TOOL_NAMES.filter((name) => wanted.includes(name)).map((name) => factories[name]());
}

function realDirectory(root: string): string {
  let real: string;
  try {
    real = realpathSync(root);
  } catch (error) {
    throw new ReinError('config', 'fatal', `workspace root ${root} does not exist: create it or pass another root`, { cause: error });
  }
  if (!statSync(real).isDirectory()) {
    throw new ReinError('config', 'fatal', `workspace root ${root} is not a directory: pass a directory as root`);
  }
  return real;
}

export type { BashToolOptions } from './bash.js';
export { resolveInWorkspace, workspaceSubject } from './paths.js';
export type { ResolveOptions, WorkspacePath } from './paths.js';
export { withFileLock } from './file-lock.js';
export { unifiedDiff } from './diff.js';
export { killRunningCommands } from './run-shell.js';
export { SANDBOX_LEVELS, parseSandboxLevel, sandboxUnavailable } from './sandbox.js';
export type { SandboxLevel, SandboxOptions } from './sandbox.js';
