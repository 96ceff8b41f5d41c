/**
 * `list_dir`: the entries of one directory, directories first, each with its kind — a
 * trailing `/` for directories, the size of files, the target of symlinks.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, readlink, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { ReinError } from '../errors.js';
import { defineTool } from '../tools/define.js';
import type { Tool } from '../tools/types.js';
import { isInside, resolveIn, subjectIn } from './paths.js';
import { formatBytes, formatCount } from './text.js';
import { fileError } from './verified-io.js';
import { pathArgument, type Workspace } from './workspace.js';

/** Creates the `list_dir` tool over `workspace`. */
export function createListDirTool(workspace: Workspace): Tool {
  return defineTool({
    name: 'list_dir',
    description:
      'List the entries of a directory of the workspace (default: the root), directories first then files, alphabetically. ' +
      'Directories end with "/", files show their size, symlinks show "-> target". ' +
      `At most ${formatCount(workspace.maxResults)} entries are shown; to find files by name across the tree use glob, to search contents use grep.`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Directory relative to the workspace root (default ".", the root).' },
      },
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    permissionSubject: (args) => subjectIn(workspace, pathArgument(args)),
    execute: async (args) => {
      const target = await resolveIn(workspace, pathArgument(args));
      if (target.existingAncestor !== target.absolute) {
        throw new ReinError('tool_failed', 'correctable', `${target.relative} is a file, not a directory: use read_file to read it`);
      }
      let entries: Dirent[];
      try {
        entries = await readdir(target.absolute, { withFileTypes: true });
      } catch (error) {
        throw fileError(target.relative, error);
      }
      const where = target.relative === '.' ? 'the workspace root' : target.relative;
      if (entries.length === 0) return { content: `${where} is empty.`, details: { path: target.relative, entries: 0 } };
      entries.sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || compareNames(a.name, b.name));
      const shown = entries.slice(0, workspace.maxResults);
      const lines = await Promise.all(shown.map((entry) => describeEntry(workspace, target.absolute, entry)));
      const hidden = entries.length - shown.length;
      const header = `${where} (${formatCount(entries.length)} ${entries.length === 1 ? 'entry' : 'entries'}):`;
      const footer = hidden > 0 ? `\n… and ${formatCount(hidden)} more entries not shown: use glob with a pattern to narrow them down` : '';
      return { content: `${header}\n${lines.join('\n')}${footer}`, details: { path: target.relative, entries: entries.length } };
    },
  });
}

async function describeEntry(workspace: Workspace, directory: string, entry: Dirent): Promise<string> {
  const path = join(directory, entry.name);
  if (entry.isDirectory()) return `${entry.name}/`;
  if (entry.isSymbolicLink()) {
    const target = await readlink(path).catch(() => '?');
    const real = await realpath(path).catch(() => undefined);
    const note = real === undefined ? ' (broken)' : isInside(workspace.realRoot, real) ? '' : ' (outside the workspace)';
    return `${entry.name} -> ${target}${note}`;
  }
  if (entry.isFile()) {
    const size = await lstat(path).then(
      (stats) => formatBytes(stats.size),
      () => '?',
    );
    return `${entry.name}  (${size})`;
  }
  return `${entry.name}  (${entry.isFIFO() ? 'fifo' : entry.isSocket() ? 'socket' : 'device'})`;
}

/** Code-point order, as `ls` in the C locale: stable everywhere. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
