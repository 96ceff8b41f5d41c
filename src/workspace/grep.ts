/**
 * `grep`: search file contents with a regular expression (RE2, linear time: line-regex.ts), line by line, over
 * one file or a directory tree (skipping `.git`, gitignored paths and binary files).
 * Files are streamed and the search stops at the result cap.
 */
import { constants } from 'node:fs';
import { defineTool } from '../tools/define.js';
import type { Tool } from '../tools/types.js';
import { readLines } from './line-reader.js';
import { compileLinePattern, type LinePattern } from './line-regex.js';
import { resolveIn, subjectIn, type WorkspacePath } from './paths.js';
import { loadPicomatch, normalizePattern } from './patterns.js';
import { binaryKind, BINARY_SAMPLE_BYTES, formatCount } from './text.js';
import { openVerified } from './verified-io.js';
import { walkWorkspace } from './walk.js';
import { pathArgument, type Workspace } from './workspace.js';

type GrepArgs = { pattern: string; path?: string; glob?: string; ignore_case?: boolean; context?: number; files_only?: boolean };

/** Characters of a matching line shown (around the match when the line is longer). */
const SHOWN_LINE_CHARS = 300;
/** Characters of one line searched; the rest of a longer (minified) line is not. */
const SEARCHED_LINE_CHARS = 100_000;
const MAX_CONTEXT = 10;

/** Creates the `grep` tool over `workspace`. */
export function createGrepTool(workspace: Workspace): Tool {
  return defineTool({
    name: 'grep',
    description:
      'Search file contents with a regular expression (RE2 syntax: JavaScript syntax without lookaround or backreferences, e.g. "function\\\\s+load", "TODO|FIXME"). ' +
      'Searches one file, or every file under a directory (default: the whole workspace), skipping .git, paths ignored by .gitignore files and binary files. ' +
      'Output lines are "path:line: text"; with `context`, surrounding lines are "path-line- text" and groups are separated by "--". ' +
      `At most ${formatCount(workspace.maxResults)} matching lines are returned; narrow with \`path\` or \`glob\` when there are more. ` +
      'To find files by name use glob.',
    parameters: {
      type: 'object',
      properties: {
        pattern: {
          type: 'string',
          description:
            'Regular expression (RE2 syntax, matched in linear time). Escape ( ) [ ] { } . * + ? | \\ ^ $ to match them literally.',
        },
        path: { type: 'string', description: 'File or directory to search, relative to the workspace root (default ".").' },
        glob: {
          type: 'string',
          description:
            'Only search files matching this glob, e.g. "*.ts" (without "/" it matches file names at any depth) or "src/**/*.py" (relative to path).',
        },
        ignore_case: { type: 'boolean', description: 'Match case-insensitively (default false).' },
        context: {
          type: 'integer',
          minimum: 0,
          maximum: MAX_CONTEXT,
          description: `Lines of context before and after each match (0 to ${MAX_CONTEXT}, default 0).`,
        },
        files_only: { type: 'boolean', description: 'List only the paths of files that match, not the lines (default false).' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    permissionSubject: (args) => subjectIn(workspace, pathArgument(args)),
    execute: (args, ctx) => grep(workspace, args as GrepArgs, ctx.signal),
  });
}

async function grep(workspace: Workspace, args: GrepArgs, signal: AbortSignal) {
  const regex = await compileLinePattern(args.pattern, args.ignore_case === true);
  const base = await resolveIn(workspace, pathArgument(args));
  const search = new Search(regex, Math.min(args.context ?? 0, MAX_CONTEXT), args.files_only === true, workspace.maxResults);
  let truncatedWalk = false;
  if (base.existingAncestor !== base.absolute) {
    await search.file(base, signal);
  } else {
    const filter = args.glob ? globFilter(args.glob, base) : undefined;
    const prefix = base.relative === '.' ? '' : `${base.relative}/`;
    const walk = await walkWorkspace({
      root: workspace.realRoot,
      start: base.relative,
      signal,
      visit: async (entry) => {
        if (entry.kind !== 'file' || (filter && !filter(entry.path.slice(prefix.length)))) return true;
        await search.file({ root: workspace.realRoot, absolute: entry.absolute, relative: entry.path }, signal);
        return !search.full;
      },
    });
    truncatedWalk = walk.truncated;
  }
  return search.report(args.pattern, base.relative, truncatedWalk);
}

/** A path filter for `glob`: without "/", matched against file names at any depth, like ripgrep's --glob. */
function globFilter(glob: string, base: WorkspacePath): (path: string) => boolean {
  const pattern = normalizePattern(glob, base.absolute);
  return loadPicomatch()(pattern, { dot: true, basename: !pattern.includes('/') });
}

/** Collects matches across files up to the cap, formatting them as it goes. */
class Search {
  readonly lines: string[] = [];
  matches = 0;
  files = 0;
  matchedFiles = 0;
  full = false;
  private lastPath = '';
  private lastLine = 0;

  constructor(
    private readonly regex: LinePattern,
    private readonly context: number,
    private readonly filesOnly: boolean,
    private readonly max: number,
  ) {}

  async file(target: Pick<WorkspacePath, 'root' | 'absolute' | 'relative'>, signal: AbortSignal): Promise<void> {
    let handle;
    try {
      handle = await openVerified(target, constants.O_RDONLY);
    } catch {
      return; // Vanished or unreadable since the walk saw it: not worth failing the search.
    }
    const path = target.relative;
    const before: Array<[number, string]> = [];
    let after = 0;
    let matched = false;
    try {
      this.files++;
      await readLines(handle, {
        maxLineChars: SEARCHED_LINE_CHARS,
        signal,
        accept: (chunk) => binaryKind(chunk.subarray(0, BINARY_SAMPLE_BYTES)) === undefined,
        onLine: (raw, n) => {
          const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
          const at = this.regex.search(line);
          if (at === -1) {
            if (after > 0) {
              after--;
              this.print(path, n, line, '-', -1);
            } else if (this.context > 0) {
              before.push([n, line]);
              if (before.length > this.context) before.shift();
            }
            return true;
          }
          if (!matched) this.matchedFiles++;
          matched = true;
          if (this.filesOnly) {
            this.lines.push(path);
            this.full = this.lines.length >= this.max;
            return false;
          }
          if (this.matches >= this.max) {
            this.full = true;
            return false;
          }
          for (const [number, text] of before) {
            this.print(path, number, text, '-', -1);
          }
          before.length = 0;
          this.print(path, n, line, ':', at);
          this.matches++;
          after = this.context;
          return true;
        },
      });
    } finally {
      await handle.close();
    }
  }

  private print(path: string, n: number, line: string, mark: ':' | '-', at: number): void {
    // Like grep -C: "--" between groups that are not adjacent.
    if (this.context > 0 && this.lines.length > 0 && (path !== this.lastPath || n > this.lastLine + 1)) this.lines.push('--');
    this.lines.push(`${path}${mark}${n}${mark} ${excerpt(line, at)}`);
    this.lastPath = path;
    this.lastLine = n;
  }

  report(pattern: string, where: string, truncatedWalk: boolean) {
    const place = where === '.' ? 'the workspace' : where;
    const details = { matches: this.matches, files: this.matchedFiles, searched: this.files };
    if (this.lines.length === 0) {
      const searched = `${formatCount(this.files)} ${this.files === 1 ? 'file' : 'files'} searched`;
      return { content: `No matches for ${JSON.stringify(pattern)} in ${place} (${searched}).`, details };
    }
    const notes: string[] = [];
    if (this.full) {
      const what = this.filesOnly ? 'matching files' : 'matching lines';
      notes.push(
        `[stopped at ${formatCount(this.max)} ${what}: there are more; narrow the search with path, glob or a more specific pattern]`,
      );
    }
    if (truncatedWalk) notes.push('[the search stopped early: the tree is very large; set path to a subdirectory]');
    return { content: [...this.lines, ...notes].join('\n'), details };
  }
}

/** The line, or a window of it around the match when it is long. */
function excerpt(line: string, at: number): string {
  if (line.length <= SHOWN_LINE_CHARS) return line;
  const start = at <= SHOWN_LINE_CHARS / 3 ? 0 : at - Math.floor(SHOWN_LINE_CHARS / 3);
  const end = Math.min(line.length, start + SHOWN_LINE_CHARS);
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
}
