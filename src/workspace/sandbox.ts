/**
 * The shell's sandbox: bubblewrap (`bwrap`) around every command the `bash` tool runs.
 * The workspace is read-write (`workspace-write`) or read-only (`read-only`); the rest of
 * the file system is read-only, the user's home is an empty folder (so `~/.ssh`, `~/.aws`
 * and `~/.rein` are never visible), `/tmp` is private, there is no network unless allowed,
 * no view of host processes (a PID namespace), and everything dies with its parent.
 * rein's own configuration inside the workspace (`.rein/`, `.mcp.json`, `.git/hooks` …)
 * is mounted read-only. Threat model: docs/permissions.md, "The shell sandbox".
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { ReinError } from '../errors.js';

/** How much the shell may touch: `off` runs it unconfined. */
export type SandboxLevel = 'read-only' | 'workspace-write' | 'off';

/** The sandbox levels, in the order help texts list them. */
export const SANDBOX_LEVELS: readonly SandboxLevel[] = ['read-only', 'workspace-write', 'off'];

/** Options of the sandbox (a level alone means these defaults). */
export interface SandboxOptions {
  /** Default `workspace-write`. */
  level?: SandboxLevel;
  /** Let commands reach the network (default false: a private network namespace with only loopback). */
  network?: boolean;
  /** The user's home, replaced by an empty folder inside (default: the home of rein's process). */
  home?: string;
  /** The bubblewrap binary (default: `bwrap` from PATH). */
  bwrap?: string;
}

/** What the bash tool runs a command with: the program and the arguments before the shell's. */
export interface SandboxCommand {
  program: string;
  args: string[];
}

/** Files and folders in the workspace that steer rein or git: read-only even when the workspace is writable. */
const READ_ONLY_IN_WORKSPACE = [
  '.rein',
  '.mcp.json',
  'AGENTS.md',
  'CLAUDE.md',
  '.agents',
  '.claude',
  '.git/hooks',
  '.git/config',
  '.gitmodules',
];

/** Reads a level, forgiving case; throws a `config` error naming the levels. */
export function parseSandboxLevel(text: string): SandboxLevel {
  const level = SANDBOX_LEVELS.find((l) => l === String(text).toLowerCase().replace(/_/g, '-'));
  if (!level)
    throw new ReinError('config', 'fatal', `unknown sandbox level ${JSON.stringify(text)}: use one of ${SANDBOX_LEVELS.join(', ')}`);
  return level;
}

/** Options in their full form: a level alone, or options; `undefined` is the default (workspace-write). */
export function sandboxOptionsOf(
  value: SandboxLevel | SandboxOptions | undefined,
): Required<Pick<SandboxOptions, 'level' | 'network'>> & SandboxOptions {
  const options = typeof value === 'string' ? { level: parseSandboxLevel(value) } : (value ?? {});
  return {
    ...options,
    level: options.level === undefined ? 'workspace-write' : parseSandboxLevel(options.level),
    network: options.network ?? false,
  };
}

/**
 * The bwrap arguments that confine one command in `root` (the workspace's real path),
 * before the shell and its arguments. Mount order matters: later mounts cover earlier ones.
 */
export function sandboxArgs(root: string, options: SandboxOptions & { level: Exclude<SandboxLevel, 'off'> }): string[] {
  const home = resolve(options.home ?? homedir());
  const args = ['--die-with-parent', '--unshare-all'];
  if (options.network) args.push('--share-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/var/tmp', '--tmpfs', '/dev/shm');
  // The home goes: secrets (~/.ssh, ~/.aws, tokens) and rein's own folder are never visible.
  if (home !== '/') args.push('--tmpfs', home);
  args.push(options.level === 'workspace-write' ? '--bind' : '--ro-bind', root, root);
  if (options.level === 'workspace-write') {
    for (const name of READ_ONLY_IN_WORKSPACE) {
      const path = join(root, name);
      if (existsSync(path)) args.push('--ro-bind', path, path);
    }
  }
  args.push('--chdir', root);
  return args;
}

/** Whether bwrap can confine a command here, asked once per binary (a probe run). */
const probes = new Map<string, Promise<string | undefined>>();

/**
 * Why bwrap cannot run here (not installed, no user namespaces …), or undefined when it
 * can. Probed once per binary with the same namespaces a command gets.
 */
export function sandboxUnavailable(bwrap?: string): Promise<string | undefined> {
  const program = bwrap ?? findBwrap();
  if (program === undefined) return Promise.resolve('bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)');
  let probe = probes.get(program);
  if (!probe) {
    probe = import('node:child_process').then(
      ({ execFile }) =>
        new Promise<string | undefined>((done) => {
          execFile(
            program,
            ['--die-with-parent', '--unshare-all', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'],
            { timeout: 20_000 },
            (error, _out, stderr) => {
              if (!error) return done(undefined);
              const detail = String(stderr).trim() || error.message;
              done(`bubblewrap cannot start a sandbox here (${detail.split('\n')[0]}); user namespaces may be disabled`);
            },
          );
        }),
    );
    probes.set(program, probe);
  }
  return probe;
}

/** The refusal a command gets when it must be sandboxed and cannot be. */
export function sandboxRefusal(why: string): ReinError {
  return new ReinError(
    'tool_failed',
    'correctable',
    `commands run in a sandbox, and ${why}: the command was not run. Install bubblewrap, or turn the sandbox off (rein --sandbox off; createWorkspaceTools({ bash: { sandbox: 'off' } })) to run commands unconfined`,
  );
}

/** `bwrap` on PATH (or in /usr/bin, /bin). */
export function findBwrap(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin', '/bin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'bwrap');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The command prefix for one run, or undefined when the sandbox is off; throws the refusal when it cannot start. */
export async function sandboxCommand(root: string, options: ReturnType<typeof sandboxOptionsOf>): Promise<SandboxCommand | undefined> {
  if (options.level === 'off') return undefined;
  const program = options.bwrap ?? findBwrap();
  const why = await sandboxUnavailable(program);
  if (why !== undefined || program === undefined) throw sandboxRefusal(why ?? 'bubblewrap is not installed');
  return { program, args: sandboxArgs(root, { ...options, level: options.level }) };
}
