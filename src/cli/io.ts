/** The streams and environment a CLI command works with, injectable for tests. */
import type { Readable, Writable } from 'node:stream';

/** What a command reads and writes. Only `cli/main.ts` builds it from `process`. */
export interface CliIO {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  stdin: Readable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /**
   * Fires when the user presses Ctrl-C, when SIGTERM or SIGHUP arrives, or when stdout or
   * stderr closes (its reader went away).
   */
  signal: AbortSignal;
  /**
   * For a command that answers Ctrl-C itself (`rein chat`: stop the run, keep the session):
   * while a listener is registered, SIGINT reaching the process calls it instead of
   * aborting `signal`. At a terminal readline reads Ctrl-C as a key instead; SIGINT reaches
   * the process when stdin is not a terminal, or from `kill -INT`. Returns the function
   * that unregisters the listener. Absent: nobody delivers Ctrl-C this way (tests).
   */
  onInterrupt?: (listener: () => void) => () => void;
}

/** A command: plain data plus a lazy `run` (STYLE 12). Returns the exit code. */
export interface Command {
  description: string;
  usage: string;
  run: (argv: string[], io: CliIO) => Promise<number>;
}

/** Exit codes of `rein`, documented in the README. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  stopped: 3,
  paused: 4,
  /** Ctrl-C (SIGINT, 128 + 2), or the reader of stdout or stderr went away. */
  aborted: 130,
  /** Stopped by SIGHUP (128 + 1): the terminal or SSH session closed. */
  hungUp: 129,
  /** Stopped by SIGTERM (128 + 15): a service manager, `timeout`, CI. */
  terminated: 143,
} as const;
