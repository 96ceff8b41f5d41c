/** Reading a command's flags: every command takes -h/--help, and a flag mistake is a usage error. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ReinError } from '../errors.js';
import type { CliIO } from './io.js';

/** The flags a command declares, as `node:util` parseArgs takes them. */
export type FlagOptions = NonNullable<ParseArgsConfig['options']>;

const HELP = { help: { type: 'boolean', short: 'h' } } as const satisfies FlagOptions;

type Parsed<O extends FlagOptions> = ReturnType<typeof parseArgs<{ options: O & typeof HELP; strict: true; allowPositionals: true }>>;

/** What {@link parseFlags} returns: the flags' values (with `help`) and the positionals. */
export interface ParsedFlags<O extends FlagOptions> {
  values: Parsed<O>['values'];
  positionals: string[];
}

/**
 * Parses `argv` against `options` (plus -h/--help). Only a mistake in the command line
 * becomes a `config` error pointing at --help; anything else thrown is a bug and keeps
 * its own message.
 */
export function parseFlags<O extends FlagOptions>(argv: string[], options: O, { positionals = true }: { positionals?: boolean } = {}): ParsedFlags<O> {
  try {
    const parsed = parseArgs({ args: argv, options: { ...options, ...HELP }, allowPositionals: positionals, strict: true });
    return { values: parsed.values as Parsed<O>['values'], positionals: parsed.positionals };
  } catch (error) {
    if (String((error as { code?: unknown })?.code).startsWith('ERR_PARSE_ARGS')) {
      throw new ReinError('config', 'fatal', `${(error as Error).message}. See --help.`, { cause: error });
    }
    throw error;
  }
}

/**
 * {@link parseFlags}, then -h/--help answered: `undefined` means the usage was printed and
 * the command is done.
 */
export function parseCommandLine<O extends FlagOptions>(argv: string[], io: CliIO, usage: string, options: O, settings: { positionals?: boolean } = {}): ParsedFlags<O> | undefined {
  const parsed = parseFlags(argv, options, settings);
  // The values' type is only known per command; `help` is always among them.
  if (!(parsed.values as { help?: boolean }).help) return parsed;
  io.stdout.write(`${usage}\n`);
  return undefined;
}

/** The run a `rein <command> <run>` command line names; a `config` error saying how to find one when none is. */
export function runIdOf(positionals: readonly string[], command: string, hint = 'rein runs lists them'): string {
  const runId = positionals[0];
  if (!runId) throw new ReinError('config', 'fatal', `no run given: rein ${command} <run> (${hint})`);
  return runId;
}
