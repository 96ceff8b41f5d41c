/**
 * `edit_file`: replace an exact piece of a file. A missing piece is answered with the
 * closest region, an ambiguous one with every place it occurs. Edits of one file are
 * serialized (parallel calls both apply), and a CRLF file stays CRLF.
 */
import { protectedTargetIn } from './protected-paths.js';
import { ReinError } from '../errors.js';
import { defineTool } from '../tools/define.js';
import type { Tool } from '../tools/types.js';
import { unifiedDiff } from './diff.js';
import { applyEdit, type EditResult } from './edit-apply.js';
import { withFileLock } from './file-lock.js';
import { resolveIn, subjectIn, type WorkspacePath } from './paths.js';
import { binaryKind, BINARY_SAMPLE_BYTES, formatCount } from './text.js';
import { readVerified, writeFileAtomic } from './verified-io.js';
import type { Workspace } from './workspace.js';
import { labels } from './write-file.js';

type EditArgs = { path: string; old_text: string; new_text: string; replace_all?: boolean };

/** The diff in an edit's result is cut beyond this many characters. */
const MAX_RESULT_DIFF_CHARS = 4000;

/** Creates the `edit_file` tool over `workspace`. */
export function createEditFileTool(workspace: Workspace): Tool {
  return defineTool({
    name: 'edit_file',
    description:
      'Replace exact text in an existing file of the workspace. `old_text` must match the file exactly, including whitespace and indentation ' +
      '(copy it from read_file output, without the line numbers), and must occur exactly once unless `replace_all` is true; ' +
      'include a few surrounding lines to make it unique. If it is not found, the error shows the closest region of the file; if it occurs more than once, the lines of each occurrence. ' +
      'Line endings follow the file. Returns the diff of the change. To create a file or rewrite it whole, use write_file.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root (or absolute inside it).' },
        old_text: { type: 'string', description: 'The exact text to replace.' },
        new_text: { type: 'string', description: 'The text to put in its place (may be empty to delete).' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence of old_text (default false: it must occur once).' },
      },
      required: ['path', 'old_text', 'new_text'],
      additionalProperties: false,
    },
    risk: 'write',
    effect: 'unsafe',
    permissionSubject: (args) => subjectIn(workspace, args.path),
    protectedTarget: (args) => protectedTargetIn(workspace, args.path),
    preview: async (args) => {
      const edit = args as EditArgs;
      const target = await resolveEditable(workspace, edit.path);
      const before = await readText(target);
      const result = compute(before, edit, target);
      if (!result.ok) throw new ReinError('tool_failed', 'correctable', result.message);
      return unifiedDiff(before, result.content, labels(target));
    },
    execute: async (args) => {
      const edit = args as EditArgs;
      const target = await resolveEditable(workspace, edit.path);
      // Read, change and write under the file's lock: a parallel edit waits, then reads our result.
      return withFileLock(target.absolute, async () => {
        const before = await readText(target);
        const result = compute(before, edit, target);
        if (!result.ok) return { content: result.message, isError: true };
        await writeFileAtomic(target, result.content);
        const diff = cut(unifiedDiff(before, result.content, labels(target)));
        const where = result.lines.length === 1 ? `line ${result.lines[0]}` : `lines ${result.lines.join(', ')}`;
        const count = result.replacements === 1 ? '1 occurrence' : `${formatCount(result.replacements)} occurrences`;
        return {
          content: `Edited ${target.relative}: replaced ${count} (at ${where}).\n${diff}`,
          details: { path: target.relative, replacements: result.replacements, lines: result.lines },
        };
      });
    },
  });
}

function compute(before: string, edit: EditArgs, target: WorkspacePath): EditResult {
  return applyEdit(before, { oldText: edit.old_text, newText: edit.new_text, replaceAll: edit.replace_all === true }, target.relative);
}

async function resolveEditable(workspace: Workspace, path: string): Promise<WorkspacePath> {
  const target = await resolveIn(workspace, path);
  if (target.existingAncestor === target.absolute) {
    throw new ReinError('tool_failed', 'correctable', `${target.relative} is a directory: give the path of a file inside it`);
  }
  return target;
}

/** The file as UTF-8 text; refuses binary and non-UTF-8 files, which an edit would corrupt. */
async function readText(target: WorkspacePath): Promise<string> {
  const bytes = await readVerified(target);
  const kind = binaryKind(bytes.subarray(0, BINARY_SAMPLE_BYTES));
  if (kind === undefined) {
    try {
      // `ignoreBOM` keeps a byte-order mark in the text, so the edited file keeps it too.
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      // not UTF-8: refused below
    }
  }
  throw new ReinError(
    'tool_failed',
    'correctable',
    `${target.relative} is not UTF-8 text (${kind ?? 'it has bytes that are not valid UTF-8'}); edit_file only edits UTF-8 text files and would corrupt this one`,
  );
}

function cut(diff: string): string {
  if (diff.length <= MAX_RESULT_DIFF_CHARS) return diff;
  const kept = diff.slice(0, diff.lastIndexOf('\n', MAX_RESULT_DIFF_CHARS) + 1);
  const hidden = diff.slice(kept.length).split('\n').length - 1;
  return `${kept}… [diff cut: ${formatCount(hidden)} more lines]\n`;
}
