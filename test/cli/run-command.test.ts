/** `rein run` in-process, for what happens before a run starts: where the task comes from, and an early Ctrl-C. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { command } from '../../src/cli/commands/run.js';
import type { CliIO } from '../../src/cli/io.js';

/** A CLI whose stdin is a pipe (not a terminal) that stays open until the test ends it. */
function pipedCli() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  const text = { stdout: '', stderr: '' };
  stdout.on('data', (d: Buffer) => (text.stdout += d.toString()));
  stderr.on('data', (d: Buffer) => (text.stderr += d.toString()));
  const interrupt = new AbortController();
  const io: CliIO = { stdout, stderr, stdin, env: {}, signal: interrupt.signal };
  return { io, text, stdin, interrupt };
}

describe('rein run, before the run starts', () => {
  it('an explicit empty task is an empty task, not a cue to read stdin', async () => {
    const cli = pipedCli();
    cli.stdin.end('from stdin');
    expect(await command.run(['--no-store', ''], cli.io)).toBe(2);
    expect(cli.text.stderr).toMatch(/the task is empty: rein run "<task>" \(see --help\)/);
    expect(cli.text.stderr).not.toMatch(/stdin/);
  });

  it('no task at all with a pipe on stdin still reads stdin, and says so when it was empty', async () => {
    const cli = pipedCli();
    cli.stdin.end('');
    expect(await command.run(['--no-store'], cli.io)).toBe(2);
    expect(cli.text.stderr).toMatch(/no task given: stdin was empty/);
  });

  it('Ctrl-C while the task is read from stdin: under --json, stdout still ends with run_finished', async () => {
    const cli = pipedCli();
    const exit = command.run(['--json', '--no-store'], cli.io);
    cli.stdin.write('half a task');
    cli.interrupt.abort();
    expect(await exit).toBe(130);
    const lines = cli.text.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      type: 'run_finished',
      status: 'aborted',
      reason: 'aborted',
      result: {
        status: 'aborted',
        reason: 'aborted',
        error: { code: 'aborted', message: 'interrupted while reading the task from stdin' },
      },
    });
    expect(cli.text.stderr).toBe('rein: interrupted while reading the task from stdin\n');
  });

  it('without --json, stdout stays empty', async () => {
    const cli = pipedCli();
    const exit = command.run(['--no-store'], cli.io);
    cli.interrupt.abort();
    expect(await exit).toBe(130);
    expect(cli.text.stdout).toBe('');
  });

  it('--timeout over what a timer can wait is a usage error (exit 2) before any request', async () => {
    const cli = pipedCli();
    expect(await command.run(['--no-store', '--timeout', '2147484', 'hi'], cli.io)).toBe(2);
    expect(cli.text.stderr).toMatch(
      /--timeout 2147484 is too long: at most 2147483 seconds \(about 24\.8 days\)\. Use --timeout none for no time limit/,
    );
  });
});
