/**
 * `bash`: run a shell command in the workspace root. The process handling (groups,
 * timeouts, daemons holding the output) is in `run-shell.ts`; this file is the tool: its
 * description, arguments, environment and the result the model reads.
 *
 * The working directory is the root. Commands run in a bubblewrap sandbox by default
 * (`sandbox.ts`: the workspace writable, the rest read-only, no home, no network); with
 * `sandbox: 'off'` a shell can touch anything the user running rein can.
 */
import { ReinError } from '../errors.js';
import { defineTool } from '../tools/define.js';
import type { Tool } from '../tools/types.js';
import { DEFAULT_DRAIN_MS, DEFAULT_KILL_GRACE_MS, runShell, type ShellRunResult } from './run-shell.js';
import { formatCount } from './text.js';
import { sandboxCommand, sandboxOptionsOf, type SandboxLevel, type SandboxOptions } from './sandbox.js';
import { positiveInteger, type Workspace } from './workspace.js';

/** Options of the `bash` tool. */
export interface BashToolOptions {
  /** Timeout of a call that sets no `timeout_ms` (default 120 000 ms). */
  timeoutMs?: number;
  /** The most a call may ask for with `timeout_ms` (default 600 000 ms, or `timeoutMs` when larger). */
  maxTimeoutMs?: number;
  /**
   * Output kept per call, head and tail, in characters (default 1 000 000). A bound on
   * memory: what the model sees is cut by the dispatcher (`maxToolOutputChars`), which
   * keeps the whole result for paging.
   */
  maxOutputChars?: number;
  /**
   * Environment variables passed to commands: only these names (plus PATH and HOME) when
   * given; the whole environment of rein's process when not.
   */
  envAllowlist?: string[];
  /** The shell, run as `shell -c command` (default: bash from PATH, else /bin/sh). */
  shell?: string;
  /** After SIGTERM, how long the process group gets before SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /** Report a non-zero exit code as an error result (default true). */
  errorOnNonZeroExit?: boolean;
  /**
   * The sandbox commands run in (default `workspace-write`: bubblewrap, the workspace
   * writable, the rest read-only, an empty home, no network). When bubblewrap is missing
   * or cannot start, every command is refused, saying so, unless this is `'off'`.
   */
  sandbox?: SandboxLevel | SandboxOptions;
}

type BashArgs = { command: string; timeout_ms?: number };

/** Default of {@link BashToolOptions.timeoutMs}. */
const DEFAULT_BASH_TIMEOUT_MS = 120_000;
/**
 * Default of {@link BashToolOptions.maxOutputChars}: far above the dispatcher's cap, so the
 * dispatcher's cut applies and `read_tool_output` can page through the middle of a long
 * output; it only stops a runaway command from filling memory.
 */
const DEFAULT_BASH_OUTPUT_CHARS = 1_000_000;
const DEFAULT_MAX_TIMEOUT_MS = 600_000;

/** Creates the `bash` tool running commands in `workspace`'s root. */
export function createBashTool(workspace: Workspace, options: BashToolOptions = {}): Tool {
  const timeoutMs = positiveInteger(options.timeoutMs, 'bash.timeoutMs') ?? DEFAULT_BASH_TIMEOUT_MS;
  const maxTimeoutMs = positiveInteger(options.maxTimeoutMs, 'bash.maxTimeoutMs') ?? Math.max(timeoutMs, DEFAULT_MAX_TIMEOUT_MS);
  const maxOutputChars = positiveInteger(options.maxOutputChars, 'bash.maxOutputChars') ?? DEFAULT_BASH_OUTPUT_CHARS;
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const errorOnNonZeroExit = options.errorOnNonZeroExit ?? true;
  const env = options.envAllowlist ? () => allowedEnv(options.envAllowlist!) : () => ({ ...process.env });
  const seconds = (ms: number): string => `${formatCount(Math.round(ms / 1000))} s`;
  const sandbox = sandboxOptionsOf(options.sandbox);
  const confinement =
    sandbox.level === 'off'
      ? ''
      : `Commands run in a sandbox: ${sandbox.level === 'read-only' ? 'nothing can be written but /tmp' : 'only the workspace (and a private /tmp) can be written'}, the home folder is empty${sandbox.network ? '' : ', there is no network'}. `;

  return defineTool({
    name: 'bash',
    description:
      'Run a shell command in the workspace root and return its output (stdout and stderr interleaved) and exit code. ' +
      'Each call starts a fresh shell: `cd` and variables do not carry over, so chain with && (e.g. "cd web && npm test"). ' +
      'stdin is closed: interactive prompts fail instead of waiting, so pass flags such as --yes. ' +
      confinement +
      `A command is stopped (with everything it started) after ${seconds(timeoutMs)}; set timeout_ms for longer work, up to ${seconds(maxTimeoutMs)}. ` +
      'Processes left running in the background (`&`) are stopped when the command exits. ' +
      'Long output is cut in the middle, keeping its beginning and end. ' +
      (errorOnNonZeroExit ? 'A non-zero exit code makes the result an error. ' : '') +
      'To read, find or search files prefer read_file, glob and grep.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, description: 'The command line, run as `bash -c <command>`.' },
        timeout_ms: {
          type: 'integer',
          minimum: 1,
          description: `Timeout in milliseconds (default ${timeoutMs}, at most ${maxTimeoutMs}).`,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    risk: 'execute',
    effect: 'unsafe',
    // Above our own timeout and kill sequence, so the dispatcher never gives up before the group is stopped.
    timeoutMs: maxTimeoutMs + 2 * killGraceMs + DEFAULT_DRAIN_MS + 5000,
    permissionSubject: (args) => (typeof args.command === 'string' ? args.command : undefined),
    execute: async (args, ctx) => {
      const { command, timeout_ms } = args as BashArgs;
      const callTimeout = Math.min(timeout_ms ?? timeoutMs, maxTimeoutMs);
      let result: ShellRunResult;
      const confined = await sandboxCommand(workspace.realRoot, sandbox);
      try {
        result = await runShell({
          ...(confined ? { sandbox: confined } : {}),
          command,
          cwd: workspace.realRoot,
          env: env(),
          timeoutMs: callTimeout,
          killGraceMs,
          maxOutputChars,
          signal: ctx.signal,
          ...(options.shell === undefined ? {} : { shell: options.shell }),
        });
      } catch (error) {
        throw new ReinError('tool_failed', 'correctable', `the command could not be started: ${(error as Error).message}`, {
          cause: error,
        });
      }
      const failed = result.timedOut || result.aborted || result.signal !== null || (errorOnNonZeroExit && result.exitCode !== 0);
      return {
        content: formatResult(result, callTimeout, killGraceMs),
        isError: failed,
        details: {
          exitCode: result.exitCode,
          signal: result.signal,
          timedOut: result.timedOut,
          aborted: result.aborted,
          stoppedBackground: result.stoppedBackground,
          omittedChars: result.omittedChars,
          durationMs: Math.round(result.durationMs),
        },
      };
    },
  });
}

/** The output, then one bracketed line (or a few) saying how the command ended. */
function formatResult(result: ShellRunResult, timeoutMs: number, killGraceMs: number): string {
  const notes: string[] = [];
  if (result.timedOut) {
    notes.push(
      `timed out after ${formatCount(timeoutMs)} ms: the command and every process it started were stopped (SIGTERM, then SIGKILL after ${formatCount(killGraceMs)} ms). ` +
        'Set timeout_ms for longer work, or run fewer things at once.',
    );
  } else if (result.aborted) {
    notes.push('aborted: the command and every process it started were stopped');
  } else if (result.signal !== null) {
    notes.push(`killed by ${result.signal}`);
  } else {
    notes.push(`exit code ${result.exitCode}`);
  }
  if (result.stoppedBackground && !result.timedOut && !result.aborted) {
    notes.push('processes the command left running in the background were stopped when it exited');
  } else if (result.pipesHeldOpen && !result.stoppedBackground) {
    notes.push(
      'a process outside the command (detached with setsid?) still held its output open; what it prints from now on is not collected',
    );
  }
  const body = result.output === '' ? '(no output)' : result.output.endsWith('\n') ? result.output.slice(0, -1) : result.output;
  return `${body}\n${notes.map((note) => `[${note}]`).join('\n')}`;
}

function allowedEnv(names: readonly string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', ...names]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
