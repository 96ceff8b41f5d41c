/** The streams and environment a CLI command works with, injectable for tests. */
import type { Readable, Writable } from 'node:stream';

/** What a command reads and writes. Only `cli/main.ts` builds it from `process`. */
export interface CliIO {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  stdin: Readable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /**
   * Fires when the user presses Ctrl-C, or when stdout or stderr closes (its reader went
   * away). `rein chat` reads Ctrl-C itself: its signal fires only for the latter.
   */
  signal: AbortSignal;
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
  aborted: 130,
} as const;
