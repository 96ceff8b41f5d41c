/**
 * The stdio transport of a local MCP server: the SDK's framing (`ReadBuffer`,
 * `serializeMessage`) over a child process that rein owns completely. It differs from the
 * SDK's `StdioClientTransport` where a host needs it to:
 * - the child leads its own process group, so closing kills the whole tree (an `npx` or
 *   `sh -c` wrapper and the real server under it), not just the direct child;
 * - stderr is always captured, line by line, for the host's log (never the terminal);
 * - exit code and signal are kept, so "the server crashed" can say how;
 * - any group still alive when the Node process exits is killed on the way out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killOnExit, terminateGroup } from '../process/process-group.js';
import { settlesWithin } from '../process/timing.js';

/** The SDK's stdio framing, passed in because the SDK is loaded lazily. */
export interface StdioFraming {
  ReadBuffer: new () => { append(chunk: Buffer): void; readMessage(): JSONRPCMessage | null; clear(): void };
  serializeMessage: (message: JSONRPCMessage) => string;
}

/** What to start and where its stderr goes. */
export interface ProcessTransportOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  framing: StdioFraming;
  /** Each line the server writes to stderr. */
  onStderr: (line: string) => void;
}

/** How the child ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const GROUPS = process.platform !== 'win32';
const MAX_LINE = 2000;
/** Process groups still running, killed if the Node process exits without closing them. */
const live = new Set<number>();
killOnExit(live);

/** An MCP transport over a child process's stdin / stdout. */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcess | undefined;
  private readonly buffer: InstanceType<StdioFraming['ReadBuffer']>;
  private stderrRest = '';
  private closing = false;
  private exited: Promise<ProcessExit> | undefined;
  /** Settles once the child's whole process group is gone; set by whoever stops it first. */
  private reaped: Promise<void> | undefined;
  /** How the child ended, once it has. */
  exit: ProcessExit | undefined;

  constructor(private readonly options: ProcessTransportOptions) {
    this.buffer = new options.framing.ReadBuffer();
  }

  /** The child's pid while it runs. */
  get pid(): number | undefined {
    return this.exit ? undefined : this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ProcessTransport already started');
    const { command, args, env, cwd } = this.options;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        env,
        cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        detached: GROUPS,
        windowsHide: true,
      });
      this.child = child;
      let started = false;
      let ended!: (exit: ProcessExit) => void;
      this.exited = new Promise((done) => (ended = done));
      child.once('close', (code, signal) => {
        this.exit ??= { code, signal };
        if (child.pid !== undefined) live.delete(child.pid);
        // The leader is gone; anything it started is an orphan now, unless close() is already stopping the group.
        if (started && GROUPS) this.reaped ??= stop(child, 1000);
        ended(this.exit);
        if (started) this.onclose?.();
      });
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (!started) {
          // A child that never spawned emits no 'close' on every Node version.
          this.exit = { code: null, signal: null };
          ended(this.exit);
          const hint =
            error.code === 'ENOENT' ? `: not found (check "command" and PATH${cwd ? ` and "cwd" ${cwd}` : ''})` : `: ${error.message}`;
          reject(new Error(`cannot start ${JSON.stringify(command)}${hint}`, { cause: error }));
          return;
        }
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        started = true;
        if (GROUPS && child.pid !== undefined) {
          live.add(child.pid);
        }
        resolve();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (text: string) => this.onStderrText(text));
      child.stderr?.on('end', () => {
        if (this.stderrRest) this.options.onStderr(this.stderrRest.slice(0, MAX_LINE));
        this.stderrRest = '';
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exit || stdin.destroyed) return Promise.reject(new Error('Not connected: the server process has ended'));
    return new Promise((resolve, reject) => {
      const json = this.options.framing.serializeMessage(message);
      stdin.write(json, (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Ends the server: closes its stdin (well-behaved servers exit on that), then after 1 s
   * SIGTERM to its process group and SIGKILL after 2 s more. Resolves once the child and
   * its group are gone.
   */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closing) {
      await this.exited;
      await this.reaped;
      return;
    }
    this.closing = true;
    if (!this.exit) {
      child.stdin?.end();
      if (!(await settlesWithin(this.exited, 1000))) this.reaped ??= stop(child, 2000);
      await this.exited;
    }
    await this.reaped;
    this.buffer.clear();
  }

  private onStdout(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          // One bad line (a stray log on stdout) must not take the connection down.
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private onStderrText(text: string): void {
    const lines = (this.stderrRest + text).split(/\r?\n/);
    this.stderrRest = lines.pop() ?? '';
    if (this.stderrRest.length > MAX_LINE) {
      this.options.onStderr(this.stderrRest.slice(0, MAX_LINE));
      this.stderrRest = '';
    }
    for (const line of lines) if (line.trim() !== '') this.options.onStderr(line.slice(0, MAX_LINE));
  }
}

/** Stops the child's whole process group; Windows has no groups, so only the child is ended there. */
function stop(child: ChildProcess, graceMs: number): Promise<void> {
  if (GROUPS && child.pid !== undefined) return terminateGroup(child.pid, graceMs).then(() => undefined);
  child.kill();
  return Promise.resolve();
}
