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
export function parseFlags<O extends FlagOptions>(
  argv: string[],
  options: O,
  { positionals = true }: { positionals?: boolean } = {},
): ParsedFlags<O> {
  const args = joinDashValues(argv, options);
  try {
    const parsed = parseArgs({ args, options: { ...options, ...HELP }, allowPositionals: positionals, strict: true });
    return { values: parsed.values as Parsed<O>['values'], positionals: parsed.positionals };
  } catch (error) {
    if (String((error as { code?: unknown })?.code).startsWith('ERR_PARSE_ARGS')) {
      // parseArgs ends some of its messages with a period and some not.
      throw new ReinError('config', 'fatal', `${(error as Error).message.replace(/\.$/, '')}. See --help.`, { cause: error });
    }
    throw error;
  }
}

/** A word that reads as a negative number (`-1`, `-0.5`, `-1e3`): never one of rein's options, which are letters. */
const NEGATIVE_NUMBER = /^-\.?\d/;

/**
 * `argv` with a negative number after a flag that takes a value joined to it
 * (`--max-steps -1` → `--max-steps=-1`), so the flag's own check says what it takes
 * (parseArgs would call the flag "ambiguous" and suggest `--max-steps=-XYZ`). Any other
 * value that starts with '-' is refused here, in words: most likely the value was
 * forgotten (`--model --json`), and a value that really starts with '-' is written
 * `--flag=-value`. After `--` nothing is an option.
 */
function joinDashValues(argv: readonly string[], options: FlagOptions): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] as string;
    if (word === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const name = valueFlagOf(word, options);
    const next = argv[i + 1];
    if (name === undefined || next === undefined) {
      out.push(word);
      continue;
    }
    // A lone '-' is a value (stdin, by convention), as parseArgs takes it.
    if (!next.startsWith('-') || next === '-') out.push(word, next);
    else if (NEGATIVE_NUMBER.test(next)) out.push(`--${name}=${next}`);
    else
      throw new ReinError(
        'config',
        'fatal',
        `${word} needs a value, but the next word, ${next}, is an option (a value that starts with '-' is written --${name}=${next}). See --help.`,
      );
    i++;
  }
  return out;
}

/** The long name of the flag `word` is when that flag takes a value as the next word (`--model`, `-m`); else undefined. */
function valueFlagOf(word: string, options: FlagOptions): string | undefined {
  if (word.startsWith('--')) {
    const name = word.slice(2);
    return Object.hasOwn(options, name) && options[name]?.type === 'string' ? name : undefined;
  }
  if (word.length !== 2 || word[0] !== '-') return undefined;
  return Object.entries(options).find(([, option]) => option.short === word[1] && option.type === 'string')?.[0];
}

/**
 * {@link parseFlags}, then -h/--help answered: `undefined` means the usage was printed and
 * the command is done.
 */
export function parseCommandLine<O extends FlagOptions>(
  argv: string[],
  io: CliIO,
  usage: string,
  options: O,
  settings: { positionals?: boolean } = {},
): ParsedFlags<O> | undefined {
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
