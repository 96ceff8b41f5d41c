// Shared fixtures of the workspace tool tests: temp workspaces, calling tools, and an
// independent look at process groups through `ps`.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { normalizeOutput } from '../../src/tools/output.js';
import type { Tool, ToolContext, ToolOutput } from '../../src/tools/types.js';
import { createWorkspaceTools, type WorkspaceToolsOptions } from '../../src/workspace/index.js';

/** A temp directory holding `workspace/` (the root) and `outside/` (a sibling the tools must not reach). */
export interface Sandbox {
  base: string;
  root: string;
  outside: string;
  /** Writes files (relative to the root), creating directories. */
  write(files: Record<string, string | Buffer>): Promise<void>;
  link(target: string, path: string): Promise<void>;
  tools(options?: Omit<WorkspaceToolsOptions, 'root'>): Record<string, Tool>;
  remove(): Promise<void>;
}

export async function makeSandbox(): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'rein-ws-')));
  const root = join(base, 'workspace');
  const outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'top secret\n');
  return {
    base,
    root,
    outside,
    async write(files) {
      for (const [path, content] of Object.entries(files)) {
        await mkdir(dirname(join(root, path)), { recursive: true });
        await writeFile(join(root, path), content);
      }
    },
    async link(target, path) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await symlink(target, join(root, path));
    },
    tools(options = {}) {
      return Object.fromEntries(createWorkspaceTools({ ...options, root }).map((tool) => [tool.name, tool]));
    },
    remove: () => rm(base, { recursive: true, force: true }),
  };
}

export function toolContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, runId: 'run-1', toolCallId: 'call-1', idempotencyKey: 'run-1:0:0', log: () => undefined, progress: () => undefined };
}

/** What a call produced, flattened: its text, error flag and details; a throw becomes `thrown`. */
export interface Called {
  text: string;
  isError: boolean;
  details: unknown;
  thrown?: { code?: string; message: string };
}

export async function call(tool: Tool | undefined, args: Record<string, unknown>, signal?: AbortSignal): Promise<Called> {
  if (!tool) throw new Error('no such tool in this test');
  let output: ToolOutput;
  try {
    output = await tool.execute(args, toolContext(signal));
  } catch (error) {
    const e = error as { code?: string; message: string };
    return { text: e.message, isError: true, details: undefined, thrown: { code: e.code, message: e.message } };
  }
  const normalized = normalizeOutput(output);
  const text = normalized.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return { text, isError: normalized.isError, details: normalized.details };
}

/** Live (not zombie) processes of group `pgid`, as `ps` reports them: independent of the code under test. */
export function livePsMembers(pgid: number): number[] {
  const ps = spawnSync('ps', ['-eo', 'pid=,pgid=,stat='], { encoding: 'utf8' });
  return ps.stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([pid, group, stat]) => pid && Number(group) === pgid && !/^[ZX]/.test(stat ?? ''))
    .map(([pid]) => Number(pid));
}

/** Whether a process is alive and not a zombie, as `ps` reports it. */
export function psAlive(pid: number): boolean {
  const ps = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' });
  const stat = ps.stdout.trim();
  return stat !== '' && !stat.startsWith('Z');
}
