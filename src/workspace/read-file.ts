/**
 * `read_file`: a text file's lines, numbered like `cat -n`, a range at a time. Binary files
 * and directories get a message saying what they are and what to use instead.
 */
import { constants } from 'node:fs';
import { ReinError } from '../errors.js';
import { defineTool } from '../tools/define.js';
import type { Tool } from '../tools/types.js';
import { readLines } from './line-reader.js';
import { resolveIn, subjectIn } from './paths.js';
import { binaryKind, BINARY_SAMPLE_BYTES, displayLine, formatBytes, formatCount, MAX_LINE_CHARS, numberedLine } from './text.js';
import { openVerified } from './verified-io.js';
import type { Workspace } from './workspace.js';

/** Lines one call returns at most, whatever `limit` asks. */
export const MAX_READ_LINES = 2000;

/** Files up to this size are read to the end to report their line count. */
const COUNT_ALL_BYTES = 4 * 1024 * 1024;

type ReadArgs = {
  path: string;
  offset?: number;
  limit?: number;
};

/** Creates the `read_file` tool over `workspace`. */
export function createReadFileTool(workspace: Workspace): Tool {
  return defineTool({
    name: 'read_file',
    description:
      'Read a text file of the workspace. Returns its lines numbered like `cat -n` (number, tab, text; the numbers are not part of the file). ' +
      `One call returns at most ${MAX_READ_LINES} lines and about ${formatCount(workspace.maxReadBytes)} bytes; ` +
      'when there is more, the result ends with the offset to continue from. Use `offset` (1-based first line) and `limit` (number of lines) to read a range. ' +
      `Lines longer than ${MAX_LINE_CHARS} characters are cut. Binary files are not shown; for a directory use list_dir.`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root (or absolute inside it).' },
        offset: { type: 'integer', minimum: 1, description: 'First line to return, 1-based (default 1).' },
        limit: { type: 'integer', minimum: 1, description: `How many lines to return (default and maximum ${MAX_READ_LINES}).` },
      },
      required: ['path'],
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    permissionSubject: (args) => subjectIn(workspace, args.path),
    execute: (args, ctx) => readFileRange(workspace, args as ReadArgs, ctx.signal),
  });
}

async function readFileRange(workspace: Workspace, args: ReadArgs, signal: AbortSignal) {
  const target = await resolveIn(workspace, args.path);
  const offset = args.offset ?? 1;
  const last = offset - 1 + Math.min(args.limit ?? MAX_READ_LINES, MAX_READ_LINES);
  const handle = await openVerified(target, constants.O_RDONLY);
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) {
      throw new ReinError(
        'tool_failed',
        'correctable',
        `${target.relative} is a directory: use list_dir to see its entries, then read a file inside it`,
      );
    }
    if (stats.size === 0) return { content: `${target.relative} is empty (0 bytes).`, details: { path: target.relative, totalLines: 0 } };

    const shown: string[] = [];
    let shownBytes = 0;
    let cutByBytes = false;
    let binary: string | undefined;
    const countAll = stats.size <= COUNT_ALL_BYTES;
    const result = await readLines(handle, {
      maxLineChars: MAX_LINE_CHARS,
      signal,
      accept: (chunk) => (binary = binaryKind(chunk.subarray(0, BINARY_SAMPLE_BYTES))) === undefined,
      onLine: (line, n, fullLength) => {
        if (n < offset) return true;
        if (n > last || cutByBytes) return countAll;
        // The byte-order mark is invisible and only confuses; edits keep it.
        const text = numberedLine(n, displayLine(n === 1 ? line.replace(/^\uFEFF/, '') : line, fullLength));
        const bytes = Buffer.byteLength(text) + 1;
        if (shownBytes + bytes > workspace.maxReadBytes && shown.length > 0) {
          cutByBytes = true;
          return countAll;
        }
        shown.push(text);
        shownBytes += bytes;
        return true;
      },
    });
    if (result.rejected) {
      const content = `${target.relative} is not a text file: it looks like ${binary} (${formatBytes(stats.size)}). read_file shows text only; inspect it with bash (for example \`file\` or \`xxd | head\`) if you must.`;
      return { content, isError: true };
    }
    const total = result.stopped ? undefined : result.lines;
    if (shown.length === 0) {
      throw new ReinError(
        'invalid_arguments',
        'correctable',
        `offset ${offset} is past the end of ${target.relative}, which has ${formatCount(result.lines)} lines: use an offset from 1 to ${Math.max(1, result.lines)}`,
      );
    }
    const endLine = offset + shown.length - 1;
    const footer = rangeNote(target.relative, offset, endLine, total, cutByBytes, workspace.maxReadBytes);
    const content = footer ? `${shown.join('\n')}\n\n${footer}` : shown.join('\n');
    return { content, details: { path: target.relative, startLine: offset, endLine, totalLines: total, bytes: stats.size } };
  } finally {
    await handle.close();
  }
}

/** The note under a partial read: where it stopped and how to go on; none for a whole file. */
function rangeNote(path: string, start: number, end: number, total: number | undefined, cutByBytes: boolean, maxBytes: number): string {
  const range = `lines ${formatCount(start)}–${formatCount(end)}`;
  const more = total === undefined || end < total;
  if (!more) return start === 1 ? '' : `[${range} of ${formatCount(total!)}: end of file]`;
  const of = total === undefined ? ' (the file continues)' : ` of ${formatCount(total)}`;
  const why = cutByBytes ? ` (the ${formatCount(maxBytes)}-byte limit of one read)` : '';
  return `[${path}: showing ${range}${of}${why}; to read on, call read_file with offset=${end + 1}]`;
}
