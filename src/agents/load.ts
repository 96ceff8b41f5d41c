/**
 * Finding the agents of a project: every `<root>/.rein/agents/<name>.md`, then the user's
 * `~/.rein/agents/<name>.md`. One broken file is a diagnostic, never a failure of the
 * others (STYLE 9).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { compileValidator } from '../tools/validate.js';
import { parseAgentFile } from './parse.js';
import type { AgentDefinition, AgentDiagnostic, LoadAgentsResult } from './types.js';

/** Where agent files live, under the project root and under the home folder. */
export const AGENTS_DIR = '.rein/agents';
/** An agent file larger than this is skipped: a system prompt, not a data file. */
export const MAX_AGENT_FILE_BYTES = 256 * 1024;

/** Options of {@link loadAgents}. */
export interface LoadAgentsOptions {
  /** The project root: `<root>/.rein/agents/` is read first. */
  root: string;
  /** The user's home (default `os.homedir()`): `<home>/.rein/agents/` is read after the project's. */
  home?: string;
}

/**
 * Loads every agent file, the project's before the user's: the first agent of a name
 * wins and a later one is a diagnostic. Files are read in name order, so the result never
 * depends on the file system.
 *
 * @example
 * const { items, diagnostics } = await loadAgents({ root: process.cwd() });
 * for (const d of diagnostics) console.warn(`${d.file}${d.field ? ` (${d.field})` : ''}: ${d.message}`);
 */
export async function loadAgents(options: LoadAgentsOptions): Promise<LoadAgentsResult> {
  const root = resolve(options.root);
  const project = join(root, AGENTS_DIR);
  const user = join(options.home ?? homedir(), AGENTS_DIR);
  const dirs =
    project === user
      ? [{ dir: project, project: true }]
      : [
          { dir: project, project: true },
          { dir: user, project: false },
        ];
  const found = await Promise.all(dirs.map(({ dir, project }) => loadDir(dir, project)));
  const diagnostics = found.flatMap((f) => f.diagnostics);
  const items: AgentDefinition[] = [];
  const byName = new Map<string, AgentDefinition>();
  for (const agent of found.flatMap((f) => f.items)) {
    const winner = byName.get(agent.name);
    if (winner) {
      diagnostics.push({
        file: agent.file ?? '',
        message: `agent "${agent.name}" is already defined by ${winner.file}, which takes precedence; this one is ignored`,
        severity: 'warning',
      });
      continue;
    }
    byName.set(agent.name, agent);
    items.push(agent);
  }
  return { items, diagnostics };
}

async function loadDir(dir: string, project: boolean): Promise<LoadAgentsResult> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith('.md') && !name.startsWith('.')).sort();
  } catch (error) {
    // No folder is no agents; a folder that cannot be read is worth saying.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return { items: [], diagnostics: [] };
    return {
      items: [],
      diagnostics: [{ file: dir, message: `cannot list the agents folder: ${(error as Error).message}`, severity: 'error' }],
    };
  }
  const loaded = await Promise.all(names.map((name) => loadFile(join(dir, name), name.slice(0, -3), project)));
  return { items: loaded.flatMap((l) => (l.agent ? [l.agent] : [])), diagnostics: loaded.flatMap((l) => l.diagnostics) };
}

async function loadFile(
  file: string,
  stem: string,
  project: boolean,
): Promise<{ agent?: AgentDefinition; diagnostics: AgentDiagnostic[] }> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) return { diagnostics: [{ file, message: 'not a readable file (a dangling link, or a folder)', severity: 'error' }] };
  if (info.size > MAX_AGENT_FILE_BYTES)
    return {
      diagnostics: [{ file, message: `the file is ${info.size} bytes; at most ${MAX_AGENT_FILE_BYTES} are read`, severity: 'error' }],
    };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { diagnostics: [{ file, message: `cannot read: ${(error as Error).message}`, severity: 'error' }] };
  }
  const parsed = await parseAgentFile(text, file, stem, { project });
  if (parsed.agent?.outputSchema !== undefined) {
    try {
      await compileValidator(parsed.agent.outputSchema);
    } catch (error) {
      const message = (error as Error).message.replace('the parameters schema does not compile', 'is not a valid JSON Schema');
      return { diagnostics: [...parsed.diagnostics, { file, field: 'outputSchema', message, severity: 'error' }] };
    }
  }
  return parsed;
}
