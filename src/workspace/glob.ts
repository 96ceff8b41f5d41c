/**
 * `glob`: find files by name pattern across the workspace tree (picomatch syntax), skipping
 * `.git` and gitignored paths. Results are sorted by path.
 */
import { join } from 'node:path';
import { ReinError } from '../errors.js';
import { defineTool } from '../tools/define.js';
import type { Tool } from '../tools/types.js';
import { compareNames } from './list-dir.js';
import { resolveIn, subjectIn } from './paths.js';
import { loadPicomatch, normalizePattern } from './patterns.js';
import { formatCount } from './text.js';
import { walkWorkspace } from './walk.js';
import { pathArgument, type Workspace } from './workspace.js';

type GlobArgs = { pattern: string; path?: string };

/** Creates the `glob` tool over `workspace`. */
export function createGlobTool(workspace: Workspace): Tool {
  return defineTool({
    name: 'glob',
    description:
      'Find files and directories by glob pattern, e.g. "**/*.ts", "src/**/test_*.py", "*.{json,yaml}". ' +
      'The pattern is matched against paths relative to `path` (default: the workspace root): "*" does not cross "/", so "*.ts" only matches at the top; use "**/" for any depth. ' +
      `Skips .git and paths ignored by .gitignore files. Returns matching paths relative to the workspace root (directories end with "/"), sorted, at most ${formatCount(workspace.maxResults)}. ` +
      'To search file contents use grep.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Glob pattern (picomatch syntax: *, **, ?, [abc], {a,b}).' },
        path: { type: 'string', description: 'Directory to search, relative to the workspace root (default ".").' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    permissionSubject: (args) => subjectIn(workspace, pathArgument(args)),
    execute: async (args, ctx) => {
      const { pattern } = args as GlobArgs;
      const base = await resolveIn(workspace, pathArgument(args));
      if (base.existingAncestor !== base.absolute) {
        throw new ReinError(
          'tool_failed',
          'correctable',
          `${base.relative} is a file, not a directory: set path to a directory (or leave it out to search the whole workspace)`,
        );
      }
      const relativePattern = normalizePattern(pattern, base.absolute);
      const picomatch = loadPicomatch();
      const isMatch = picomatch(relativePattern, { dot: true });
      // Walk only below the pattern's literal prefix: "src/lib/**/*.ts" starts in src/lib.
      const { base: literal, isGlob } = picomatch.scan(relativePattern);
      const prefix = base.relative === '.' ? '' : `${base.relative}/`;
      const start = literal === '' ? base.relative : `${prefix}${literal}`;
      const matches: string[] = [];
      let total = 0;
      const walk = await startWalk(workspace, start, base.absolute, literal, isGlob, ctx.signal, (path, isDirectory) => {
        if (!isMatch(path.slice(prefix.length))) return;
        total++;
        if (matches.length < workspace.maxResults) matches.push(isDirectory ? `${path}/` : path);
      });
      matches.sort(compareNames);
      const where = base.relative === '.' ? 'the workspace' : base.relative;
      if (total === 0) {
        const hint = relativePattern.includes('/')
          ? ''
          : ` ("${relativePattern}" matches only directly in ${where}; use "**/${relativePattern}" for any depth)`;
        return { content: `No paths match ${JSON.stringify(relativePattern)} in ${where}${hint}.`, details: { total: 0 } };
      }
      const notes: string[] = [];
      if (total > matches.length)
        notes.push(`[${formatCount(matches.length)} of ${formatCount(total)} matches shown: narrow the pattern or set path]`);
      if (walk.truncated) notes.push('[the search stopped early: the tree is very large; set path to a subdirectory]');
      return { content: [...matches, ...notes].join('\n'), details: { total, shown: matches.length } };
    },
  });
}

/**
 * Walks from the pattern's literal prefix (a symlink inside the workspace is followed there,
 * paths are reported as the pattern spells them); a prefix that does not exist has no matches.
 */
async function startWalk(
  workspace: Workspace,
  start: string,
  baseAbsolute: string,
  literal: string,
  isGlob: boolean,
  signal: AbortSignal,
  onEntry: (path: string, isDirectory: boolean) => void,
) {
  const none = { entries: 0, stopped: false, truncated: false };
  let walkFrom = start;
  if (literal !== '') {
    const resolved = await resolveIn(workspace, join(baseAbsolute, literal)).catch(() => undefined);
    if (!resolved) return none;
    const isDirectory = resolved.existingAncestor === resolved.absolute;
    if (!isGlob || !isDirectory) {
      // The whole pattern is a literal path.
      if (!isGlob) onEntry(start, isDirectory);
      return none;
    }
    walkFrom = resolved.relative;
  }
  const rename = (path: string): string => (walkFrom === start ? path : start + path.slice(walkFrom.length));
  return walkWorkspace({
    root: workspace.realRoot,
    start: walkFrom,
    signal,
    visit: (entry) => onEntry(rename(entry.path), entry.kind === 'directory'),
  });
}
