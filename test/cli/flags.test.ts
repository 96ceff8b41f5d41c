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
    expect(() => parseFlags(['--bogus'], {})).toThrow(expect.objectContaining({ code: 'config', message: expect.stringMatching(/'--bogus'.*See --help\.$/) }));
    expect(() => parseFlags(['extra'], {}, { positionals: false })).toThrow(expect.objectContaining({ code: 'config' }));
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
