/**
 * What every workspace tool shares: the root it is confined to and the output limits.
 * Built once by `createWorkspaceTools`.
 */
import { ReinError } from '../errors.js';

/** The confinement and limits handed to each workspace tool. */
export interface Workspace {
  /** The root as configured, absolute; absolute paths below it are accepted too. */
  root: string;
  /** Its real path (symlinks resolved), resolved once at creation. */
  realRoot: string;
  /** Bytes of file text one read_file call returns at most. */
  maxReadBytes: number;
  /** Entries list_dir and glob show at most, and matching lines grep shows at most. */
  maxResults: number;
}

/** Default of {@link Workspace.maxReadBytes}: fits the dispatcher's default 16 000-character output cap with line numbers. */
export const DEFAULT_MAX_READ_BYTES = 12_000;

/** Default of {@link Workspace.maxResults}. */
export const DEFAULT_MAX_RESULTS = 250;

/** The `path` argument, `.` (the root) when absent or empty. */
export function pathArgument(args: Record<string, unknown>): string {
  return typeof args.path === 'string' && args.path.trim() !== '' ? args.path : '.';
}

/** A size or duration option: absent, or a positive integer (anything else is a `config` error naming it). */
export function positiveInteger(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value <= 0) {
    throw new ReinError('config', 'fatal', `${name} must be a positive integer; got ${String(value)}`);
  }
  return value;
}
