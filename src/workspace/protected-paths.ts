/**
 * The files that steer rein itself or git: a model that could write them without a question
 * could give itself permissions in the next run (`.rein/settings.json`), start a process
 * (`.mcp.json`, `.git/hooks/*`, `.git/config`), or rewrite its own instructions
 * (`AGENTS.md`, skills). The file tools name these as protected; the policy then asks in
 * every mode but yolo (docs/permissions.md, "Protected paths").
 */
import { homedir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { subjectIn, type WorkspaceRoot } from './paths.js';

/** Folders whose whole content is protected, wherever they are in the workspace. */
const PROTECTED_FOLDERS: Record<string, string> = {
  '.rein': "rein's configuration",
  '.git': "git's hooks and configuration",
  '.agents': 'skills',
  '.claude': "another agent's configuration and skills",
  '.codex': "another agent's configuration",
};

/** File names protected at any depth. */
const PROTECTED_FILES: Record<string, string> = {
  '.mcp.json': 'MCP servers rein starts',
  'AGENTS.md': 'project rules',
  'CLAUDE.md': 'project rules',
  '.gitmodules': 'git submodules',
};

/**
 * Why a workspace path (relative, forward slashes, as `permissionSubject` answers) or an
 * absolute one is protected, or undefined. `home` is the user's home (its `.rein` folder
 * is protected even when the workspace lies inside it).
 */
export function protectedReason(path: string, realRoot: string, home: string = homedir()): string | undefined {
  const absolute = isAbsolute(path) ? path : join(realRoot, path);
  const userRein = join(home, '.rein');
  const fromUser = relative(userRein, absolute);
  if (fromUser === '' || (!fromUser.startsWith('..') && !isAbsolute(fromUser))) return `${quoteOf(path)} is in the user's rein folder`;
  const segments = (isAbsolute(path) ? relative(realRoot, path) : path).split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  if (segments[0] === '..') return undefined;
  for (let i = 0; i < segments.length; i++) {
    const folder = PROTECTED_FOLDERS[segments[i] as string];
    if (folder !== undefined) return `${quoteOf(path)} is ${folder} (in ${segments.slice(0, i + 1).join('/')}/)`;
  }
  const file = PROTECTED_FILES[segments[segments.length - 1] ?? ''];
  return file === undefined ? undefined : `${quoteOf(path)} is ${file}`;
}

function quoteOf(path: string): string {
  return JSON.stringify(path);
}

/** Why writing `path` in `workspace` needs a person, or undefined (for a write tool's `protectedTarget`). */
export function protectedTargetIn(workspace: WorkspaceRoot, path: unknown): string | undefined {
  const subject = subjectIn(workspace, path);
  return subject === undefined ? undefined : protectedReason(subject, workspace.realRoot);
}
