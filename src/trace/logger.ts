/**
 * A small structured logger that writes one JSON object per line (`time`, `level`, `msg`,
 * then the record's fields), with a level below which nothing is written, and its file
 * form for `--log-file` / `REIN_LOG_FILE`. A pino logger can be used instead wherever a
 * {@link Logger} is taken.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { ReinError } from '../errors.js';
import type { Logger, LogLevel } from './types.js';

const RANK: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity };

/** The level names, for messages. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** A level from configuration text (`REIN_LOG_LEVEL`); a `config` error naming `source` for anything else. */
export function parseLogLevel(value: string, source = 'log level'): LogLevel {
  const level = value.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new ReinError('config', 'fatal', `${source} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(value.slice(0, 40))}`);
}

/** A {@link Logger} whose lines go to `write`, each a whole line ending in `\n`. */
export function createJsonLogger(write: (line: string) => void, options: { level?: LogLevel } = {}): Logger {
  const threshold = RANK[options.level ?? 'info'];
  const line =
    (level: Exclude<LogLevel, 'silent'>) =>
    (record: Record<string, unknown>, message?: string): void => {
      if (RANK[level] < threshold) return;
      write(`${safeJson({ time: new Date().toISOString(), level, ...(message === undefined ? {} : { msg: message }), ...record })}\n`);
    };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}

/** A JSON-lines logger appending to a file, and what closes it. */
export interface FileLogger extends Logger {
  readonly path: string;
  close(): void;
}

/**
 * Opens `path` for appending (created with mode 0600: the lines hold arguments and results,
 * redacted but private) and logs to it. Each line is one `write` to a file opened in append
 * mode, so lines of several processes never interleave mid-line, and a line written is in
 * the file even if the process dies right after. Throws a `config` ReinError naming the
 * file when it cannot be opened.
 */
export function openFileLogger(path: string, options: { level?: LogLevel } = {}): FileLogger {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'a', 0o600);
  } catch (error) {
    throw new ReinError('config', 'fatal', `cannot open the log file ${path}: ${(error as Error).message}`, { cause: error });
  }
  const logger = createJsonLogger((text) => {
    if (fd !== undefined) writeSync(fd, text);
  }, options);
  return {
    ...logger,
    path,
    close: () => {
      if (fd === undefined) return;
      closeSync(fd);
      fd = undefined;
    },
  };
}

/** `JSON.stringify`, with values it cannot write (a BigInt, a cycle) as text instead of a throw. */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'object' && v !== null) {
        if (seen.has(v)) return '[cycle]';
        seen.add(v);
      }
      return v;
    });
  }
}
