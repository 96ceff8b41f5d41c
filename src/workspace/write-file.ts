/**
 * `write_file`: create or replace a whole file, atomically, creating missing parent
 * directories inside the workspace. The approval preview is the diff it would make.
 */
import { protectedTargetIn } from './protected-paths.js';
import { ReinError } from '../errors.js';
import { defineTool } from '../tools/define.js';
import type { Tool } from '../tools/types.js';
import { unifiedDiff } from './diff.js';
import { withFileLock } from './file-lock.js';
import { resolveIn, subjectIn, type WorkspacePath } from './paths.js';
import { binaryKind, BINARY_SAMPLE_BYTES, formatBytes, formatCount } from './text.js';
import { readVerified, writeFileAtomic } from './verified-io.js';
import type { Workspace } from './workspace.js';

type WriteArgs = { path: string; content: string };

/** Creates the `write_file` tool over `workspace`. */
export function createWriteFileTool(workspace: Workspace): Tool {
  return defineTool({
    name: 'write_file',
    description:
      'Create a file, or replace the whole content of an existing one, in the workspace. Missing parent directories are created. ' +
      'The write is atomic (readers never see half a file). To change part of an existing file, prefer edit_file: it is safer and shorter. ' +
      'Returns whether the file was created or replaced and its size.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root (or absolute inside it).' },
        content: { type: 'string', description: 'The complete new content of the file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    risk: 'write',
    effect: 'idempotent',
    permissionSubject: (args) => subjectIn(workspace, args.path),
    protectedTarget: (args) => protectedTargetIn(workspace, args.path),
    preview: async (args) => {
      const { path, content } = args as WriteArgs;
      const target = await resolveForWrite(workspace, path);
      const bytes = target.exists ? await readVerified(target) : Buffer.alloc(0);
      const kind = binaryKind(bytes.subarray(0, BINARY_SAMPLE_BYTES));
      if (kind)
        return `${target.relative}: ${kind} (${formatBytes(bytes.length)}) would be replaced by ${formatBytes(Buffer.byteLength(content))} of text`;
      const diff = unifiedDiff(bytes.toString('utf8'), content, labels(target));
      return diff || `${target.relative}: no change (the file already has exactly this content)`;
    },
    execute: async (args) => {
      const { path, content } = args as WriteArgs;
      const target = await resolveForWrite(workspace, path);
      const report = await withFileLock(target.absolute, () => writeFileAtomic(target, content));
      const lines = content === '' ? 0 : content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
      const size = `${formatCount(report.bytes)} bytes, ${formatCount(lines)} lines`;
      const text = report.created
        ? `Created ${target.relative} (${size}).`
        : `Replaced ${target.relative} (${size}; it had ${formatBytes(report.previousBytes ?? 0)}).`;
      return { content: text, details: { path: target.relative, created: report.created, bytes: report.bytes } };
    },
  });
}

async function resolveForWrite(workspace: Workspace, path: string): Promise<WorkspacePath> {
  const target = await resolveIn(workspace, path, { forWrite: true });
  if (target.relative === '.' || (target.exists && target.existingAncestor === target.absolute)) {
    throw new ReinError(
      'tool_failed',
      'correctable',
      `${target.relative} is a directory: give the path of a file (for example ${target.relative === '.' ? '' : `${target.relative}/`}notes.md)`,
    );
  }
  return target;
}

/** The `a/…` and `b/…` labels of git's diffs; `/dev/null` for a file that does not exist yet. */
export function labels(target: WorkspacePath): { oldLabel: string; newLabel: string } {
  return { oldLabel: target.exists ? `a/${target.relative}` : '/dev/null', newLabel: `b/${target.relative}` };
}
