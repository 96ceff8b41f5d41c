import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseCommandLine, parseFlags, runIdOf } from '../../src/cli/flags.js';
import type { CliIO } from '../../src/cli/io.js';

function io(): CliIO & { out: () => string } {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (d: Buffer) => (text += d.toString()));
  return { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {}, signal: new AbortController().signal, out: () => text };
}

describe('parseFlags', () => {
  it('reads the flags and positionals, and always knows -h/--help', () => {
    const { values, positionals } = parseFlags(['run_1', '--store', 'x.db', '-h'], { store: { type: 'string' } });
    expect(values).toMatchObject({ store: 'x.db', help: true });
    expect(positionals).toEqual(['run_1']);
  });

  it('turns a command-line mistake into a config error pointing at --help', () => {
    expect(() => parseFlags(['--bogus'], {})).toThrow(
      expect.objectContaining({ code: 'config', message: expect.stringMatching(/'--bogus'.*See --help\.$/) }),
    );
    expect(() => parseFlags(['extra'], {}, { positionals: false })).toThrow(expect.objectContaining({ code: 'config' }));
  });

  it('ends a parseArgs message with one period before "See --help."', () => {
    // `-hm -x`: grouped short flags are left to parseArgs, whose message ends with a period.
    expect(() => parseFlags(['-hm', '-x'], { model: { type: 'string', short: 'm' } })).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/'--model=-XYZ' or '-m-XYZ'\. See --help\.$/) }),
    );
  });

  it('reads a negative number after a flag as its value, for the flag to refuse in its own words', () => {
    const options = { 'max-steps': { type: 'string' }, model: { type: 'string', short: 'm' } } as const;
    expect(parseFlags(['--max-steps', '-1', 'task'], options)).toMatchObject({ values: { 'max-steps': '-1' }, positionals: ['task'] });
    expect(parseFlags(['-m', '-0.5'], options).values).toMatchObject({ model: '-0.5' });
    // A lone '-' is a value, and after `--` nothing is a flag.
    expect(parseFlags(['--model', '-'], options).values).toMatchObject({ model: '-' });
    expect(parseFlags(['--', '--max-steps', '-1'], options).positionals).toEqual(['--max-steps', '-1']);
  });

  it('refuses another value that starts with "-" in words, saying how to write one (not parseArgs\' "ambiguous")', () => {
    const options = { model: { type: 'string', short: 'm' }, json: { type: 'boolean' } } as const;
    expect(() => parseFlags(['--model', '--json', 'task'], options)).toThrow(
      expect.objectContaining({
        code: 'config',
        message:
          "--model needs a value, but the next word, --json, is an option (a value that starts with '-' is written --model=--json). See --help.",
      }),
    );
    expect(() => parseFlags(['-m', '-x'], options)).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/^-m needs a value.*--model=-x/) }),
    );
    expect(parseFlags(['--model=-x'], options).values).toMatchObject({ model: '-x' });
  });

  it('leaves any other error as it is: a broken flag table is a bug, not a flag mistake', () => {
    const broken = { store: { type: 'text' } } as unknown as Record<string, { type: 'string' }>;
    let thrown: unknown;
    try {
      parseFlags([], broken);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect(String((thrown as Error).message)).not.toMatch(/See --help/);
  });
});

describe('parseCommandLine', () => {
  it('prints the usage for --help and returns nothing to run', () => {
    const cli = io();
    expect(parseCommandLine(['--help'], cli, 'rein x <run>', {})).toBeUndefined();
    expect(cli.out()).toBe('rein x <run>\n');
    expect(parseCommandLine(['r1'], cli, 'rein x <run>', {})?.positionals).toEqual(['r1']);
  });
});

describe('runIdOf', () => {
  it('is the first positional, or a config error saying how to find a run', () => {
    expect(runIdOf(['run_1'], 'show')).toBe('run_1');
    expect(() => runIdOf([], 'approve', 'rein runs --status paused lists them')).toThrow(
      expect.objectContaining({ code: 'config', message: 'no run given: rein approve <run> (rein runs --status paused lists them)' }),
    );
  });
});
