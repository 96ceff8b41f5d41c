/**
 * Shared set-up of the MCP tests: the real servers from npm and the fault fixture as
 * server configs, HTTP servers as reaped child processes, hosts closed after each test
 * with proof that no server process outlived them, and temp dirs removed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect } from 'vitest';
import { startMcp, type McpHost, type McpHostOptions } from '../../src/mcp/host.js';
import { groupAlive } from '../../src/process/process-group.js';
import type { McpServerState, McpStdioServerConfig } from '../../src/mcp/types.js';

export const root = fileURLToPath(new URL('../../', import.meta.url));
const modules = join(root, 'node_modules', '@modelcontextprotocol');
export const EVERYTHING = join(modules, 'server-everything', 'dist', 'index.js');
export const FILESYSTEM = join(modules, 'server-filesystem', 'dist', 'index.js');
export const MEMORY = join(modules, 'server-memory', 'dist', 'index.js');
export const FIXTURE = fileURLToPath(new URL('./fixtures/fault-server.mjs', import.meta.url));
export const HTTP_FIXTURE = fileURLToPath(new URL('./fixtures/http-server.mjs', import.meta.url));

const hosts: McpHost[] = [];
const pids: number[] = [];
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  await Promise.all(children.splice(0).map(stopChild));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  // Every server process (group) a host started is gone once it is closed.
  const alive = pids.splice(0).filter((pid) => groupAlive(pid));
  expect(alive).toEqual([]);
});

/** Starts a host (closed after the test) with fast reconnects and no config files. */
export async function host(servers: McpHostOptions['servers'], options: Omit<McpHostOptions, 'servers'> = {}): Promise<McpHost> {
  const started = await startMcp({ servers, configFiles: false, reconnect: { initialDelayMs: 50, maxDelayMs: 500 }, ...options });
  hosts.push(started);
  trackPids(started);
  return started;
}

/** Remembers the pid of every stdio server the host starts (now and after reconnects). */
export function trackPids(mcp: McpHost): void {
  const note = (): void => {
    for (const s of mcp.status()) if (s.pid !== undefined && !pids.includes(s.pid)) pids.push(s.pid);
  };
  note();
  mcp.onStatus(note);
}

/** The server-everything over stdio. */
export function everything(): McpStdioServerConfig {
  return { command: process.execPath, args: [EVERYTHING, 'stdio'] };
}

/** The fault fixture over stdio, with extra environment. */
export function fixture(env: Record<string, string> = {}, extra: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig {
  return { command: process.execPath, args: [FIXTURE], env, ...extra };
}

/** A temp dir removed after the test. */
export async function tempDir(prefix = 'rein-mcp-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** Resolves when `server` reaches `state` (awaits status events, no sleeping). */
export function waitForState(mcp: McpHost, server: string, state: McpServerState): Promise<void> {
  return new Promise((resolve) => {
    const check = (): boolean => mcp.status().find((s) => s.name === server)?.state === state;
    if (check()) return resolve();
    const off = mcp.onStatus(() => {
      if (check()) {
        off();
        resolve();
      }
    });
  });
}

/** Resolves at the next change of the host's tool list. */
export function nextToolChange(mcp: McpHost): Promise<void> {
  return new Promise((resolve) => {
    const off = mcp.onChange(() => {
      off();
      resolve();
    });
  });
}

/** A port that was free a moment ago (for servers that cannot report the port they bound). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Starts an HTTP MCP server as a child (reaped after the test) and resolves with its base
 * URL once `ready` matches its output; `port` (when the server reads PORT) is passed in.
 */
export async function startHttpServer(args: string[], ready: RegExp, port?: number): Promise<{ url: string; child: ChildProcess }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...(port !== undefined ? { PORT: String(port) } : {}) };
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  const found = await new Promise<RegExpExecArray>((resolve, reject) => {
    const onData = (data: Buffer): void => {
      output += data.toString();
      const match = ready.exec(output);
      if (match) resolve(match);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`HTTP server exited (${code}) before it was ready: ${output}`)));
  });
  const boundPort = port ?? Number(found[1]);
  return { url: `http://127.0.0.1:${boundPort}`, child };
}

/** Ends a child process and waits until it is gone. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(timer);
}

/** True when the process has ended (a zombie waiting for init to reap it counts as ended). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return process.platform === 'linux';
  }
}

/** The text parts of a result, joined. */
export function textOf(content: ReadonlyArray<{ type: string; text?: string }>): string {
  return content
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
}
