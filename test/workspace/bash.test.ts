import { readFile, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { terminateGroup } from '../../src/process/process-group.js';
import { killRunningCommands } from '../../src/workspace/run-shell.js';
import { call, livePsMembers, makeSandbox, psAlive, type Sandbox } from './helpers.js';

let box: Sandbox;
beforeAll(async () => {
  box = await makeSandbox();
});
afterAll(() => box.remove());

interface BashDetails {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  stoppedBackground: boolean;
  durationMs: number;
}

/** Runs a command with short kill timings and returns the result, its details and the group id. */
async function bash(command: string, options: { timeoutMs?: number; signal?: AbortSignal; extra?: Record<string, unknown> } = {}) {
  // The process handling on the host is what these tests see (process groups, `$$` as the
  // group id): unconfined. The same commands in the sandbox are in sandbox.test.ts.
  const tools = box.tools({ bash: { timeoutMs: options.timeoutMs ?? 20_000, killGraceMs: 500, sandbox: 'off', ...options.extra } });
  const started = performance.now();
  // `echo $$` first: the shell's pid is the process group id.
  const result = await call(tools.bash, { command: `echo "pgid=$$"; ${command}` }, options.signal);
  const elapsed = performance.now() - started;
  const pgid = Number(/pgid=(\d+)/.exec(result.text)?.[1]);
  return { ...result, details: result.details as BashDetails, pgid, elapsed };
}

// Generous test timeouts for a loaded machine; the elapsed-time assertions are what bound the tool.
describe('bash: commands that hang other harnesses come back, their process group gone', { timeout: 30_000 }, () => {
  it('`sleep 1000 &` returns at once and the background sleep is stopped', async () => {
    const r = await bash('sleep 1000 & echo started');
    expect(r.text).toContain('started');
    expect(r.text).toContain('[exit code 0]');
    expect(r.text).toContain('left running in the background were stopped');
    expect(r.elapsed).toBeLessThan(8000);
    expect(r.details.stoppedBackground).toBe(true);
    expect(livePsMembers(r.pgid)).toEqual([]);
  });

  it('`(sleep 1000 &) ; echo hi`: an orphaned grandchild holding stdout does not hold the call', async () => {
    const r = await bash('(sleep 1000 &) ; echo hi');
    expect(r.text).toMatch(/hi\n\[exit code 0\]/);
    expect(r.elapsed).toBeLessThan(8000);
    expect(livePsMembers(r.pgid)).toEqual([]);
  });

  it('a nohup daemon holding stdout and stderr is stopped with the group', async () => {
    const r = await bash('nohup sh -c "while true; do sleep 1; done" & echo launched');
    expect(r.text).toContain('launched');
    expect(r.isError).toBe(false);
    expect(r.elapsed).toBeLessThan(8000);
    expect(livePsMembers(r.pgid)).toEqual([]);
  });

  it('a command ignoring SIGTERM is killed after the grace, within the timeout budget', async () => {
    const r = await bash("trap '' TERM; sleep 1000", { timeoutMs: 2000 });
    expect(r.details.timedOut).toBe(true);
    expect(r.isError).toBe(true);
    expect(r.text).toContain('timed out after 2,000 ms');
    // 2 s timeout + 0.5 s grace + a busy machine's slack.
    expect(r.elapsed).toBeGreaterThanOrEqual(1900);
    expect(r.elapsed).toBeLessThan(10_000);
    expect(livePsMembers(r.pgid)).toEqual([]);
  });

  it('a daemon that left the group with setsid does not hold the call; its pipes are closed on it', async () => {
    const pidFile = join(box.root, 'daemon.pid');
    const r = await bash(`setsid sh -c 'echo $$ > daemon.pid; exec sleep 1000' & while [ ! -s daemon.pid ]; do sleep 0.05; done; echo up`);
    const daemon = Number((await readFile(pidFile, 'utf8')).trim());
    try {
      expect(r.text).toContain('up');
      expect(r.text).toContain('still held its output open');
      expect(r.elapsed).toBeLessThan(8000);
      expect(livePsMembers(r.pgid)).toEqual([]);
      // It left our group on purpose: documented as not ours to stop.
      expect(psAlive(daemon)).toBe(true);
    } finally {
      await terminateGroup(daemon, 500);
    }
    expect(psAlive(daemon)).toBe(false);
  });

  it('a background process that let go of the output is stopped too', async () => {
    const r = await bash('sleep 1000 > /dev/null 2>&1 & echo detached-output');
    expect(r.text).toContain('left running in the background were stopped');
    expect(r.elapsed).toBeLessThan(8000);
    expect(livePsMembers(r.pgid)).toEqual([]);
  });

  it('an already aborted call starts nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await call(box.tools().bash, { command: `touch ${join(box.root, 'should-not-exist')}` }, controller.signal);
    expect(r.isError).toBe(true);
    expect(r.text).toContain('aborted');
    await expect(readFile(join(box.root, 'should-not-exist'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('an abort while the call is starting is not missed', async () => {
    const controller = new AbortController();
    const running = call(box.tools().bash, { command: 'sleep 1000' }, controller.signal);
    controller.abort(); // the tool is now awaiting its first step
    const started = performance.now();
    const r = await running;
    expect(r.text).toContain('aborted');
    expect(performance.now() - started).toBeLessThan(8000);
  });

  it('aborting the call stops the group at once', async () => {
    const controller = new AbortController();
    const marker = join(box.root, 'abort-started');
    const running = bash(`touch ${marker}; sleep 1000`, { signal: controller.signal });
    while (!(await stat(marker).catch(() => undefined))) await delay(20);
    controller.abort();
    const r = await running;
    expect(r.details.aborted).toBe(true);
    expect(r.isError).toBe(true);
    expect(r.text).toContain('aborted');
    expect(r.elapsed).toBeLessThan(8000);
    expect(livePsMembers(r.pgid)).toEqual([]);
  });
});

describe('bash: when rein itself goes away', { timeout: 30_000 }, () => {
  it('commands still running are killed with their group (the hook run on process exit)', async () => {
    const marker = join(box.root, 'exit-started');
    const running = bash(`touch ${marker}; sleep 1000 & sleep 1000`);
    while (!(await stat(marker).catch(() => undefined))) await delay(20);
    killRunningCommands();
    const r = await running;
    expect(r.details.signal).toBe('SIGKILL');
    expect(r.text).toContain('[killed by SIGKILL]');
    expect(livePsMembers(r.pgid)).toEqual([]);
  });
});

describe('bash: results', { timeout: 30_000 }, () => {
  it('returns stdout and stderr interleaved, with the exit code', async () => {
    const r = await bash('echo out; echo err 1>&2; echo more');
    expect(r.text).toMatch(/pgid=\d+\nout\nerr\nmore\n\[exit code 0\]$/);
    expect(r.isError).toBe(false);
    expect(r.details).toMatchObject({ exitCode: 0, signal: null, timedOut: false, aborted: false });
  });

  it('a non-zero exit is an error result showing the code; the option turns that off', async () => {
    const failing = await bash('echo nope; exit 3');
    expect(failing.isError).toBe(true);
    expect(failing.text).toMatch(/nope\n\[exit code 3\]$/);
    const lenient = await bash('exit 3', { extra: { errorOnNonZeroExit: false } });
    expect(lenient.isError).toBe(false);
    expect(lenient.details.exitCode).toBe(3);
  });

  it("keeps the shell's own error messages and line numbers", async () => {
    const r = await call(box.tools().bash, { command: 'no_such_command_xyz' });
    expect(r.text).toMatch(/line 1: no_such_command_xyz: (command )?not found\n\[exit code 127\]$/);
  });

  it('runs in the workspace root with stdin closed', async () => {
    const r = await bash('pwd; cat; echo after-cat');
    expect(r.text).toContain(`${box.root}\nafter-cat`);
  });

  it('keeps the head and the tail of long output and says how much was cut', async () => {
    const tools = box.tools({ bash: { maxOutputChars: 1000 } });
    const r = await call(tools.bash, { command: 'echo FIRST; seq 1 20000; echo LAST' });
    expect(r.text.startsWith('FIRST\n')).toBe(true);
    expect(r.text).toMatch(/LAST\n\[exit code 0\]$/);
    expect(r.text).toMatch(/\[output cut: [\d,]+ of [\d,]+ characters omitted from the middle\]/);
    expect(r.text.length).toBeLessThan(1300);
  });

  it('by default keeps far more output than the dispatcher shows, so its cut and paging apply', async () => {
    const r = await call(box.tools().bash, { command: 'seq 1 20000' });
    expect(r.text.length).toBeGreaterThan(100_000);
    expect(r.text).toContain('\n10000\n');
    expect(r.details).toMatchObject({ omittedChars: 0 });
  });

  it('removes terminal escape sequences', async () => {
    const r = await bash("printf '\\033[31mred\\033[0m plain\\n'");
    expect(r.text).toContain('red plain');
    expect(r.text).not.toContain('\u001b');
  });

  it('passes only allowlisted variables (plus PATH and HOME) when an allowlist is given', async () => {
    process.env.REIN_TEST_ALLOWED = 'yes';
    process.env.REIN_TEST_SECRET = 'hidden';
    try {
      const all = await call(box.tools().bash, { command: 'echo "$REIN_TEST_SECRET"' });
      expect(all.text).toContain('hidden');
      const tools = box.tools({ bash: { envAllowlist: ['REIN_TEST_ALLOWED'] } });
      const r = await call(tools.bash, { command: 'echo "a=$REIN_TEST_ALLOWED s=$REIN_TEST_SECRET"; test -n "$PATH" && echo has-path' });
      expect(r.text).toContain('a=yes s=\nhas-path');
    } finally {
      delete process.env.REIN_TEST_ALLOWED;
      delete process.env.REIN_TEST_SECRET;
    }
  });

  it('caps a per-call timeout_ms at the configured maximum', async () => {
    const tools = box.tools({ bash: { timeoutMs: 500, maxTimeoutMs: 1000, killGraceMs: 200 } });
    const started = performance.now();
    const r = await call(tools.bash, { command: 'sleep 30', timeout_ms: 60_000 });
    expect(r.text).toContain('timed out after 1,000 ms');
    expect(performance.now() - started).toBeLessThan(8000);
  });

  it('reports a shell that cannot start as a tool failure', async () => {
    const tools = box.tools({ bash: { shell: join(box.base, 'no-such-shell'), sandbox: 'off' } });
    const r = await call(tools.bash, { command: 'true' });
    expect(r.thrown?.code).toBe('tool_failed');
    expect(r.text).toContain('could not be started');
  });

  it('works through the dispatcher, whose timeout is above its own', async () => {
    const tools = box.tools();
    expect(tools.bash!.timeoutMs).toBeGreaterThan(600_000);
    const dispatcher = createDispatcher(new ToolRegistry([tools.bash!]));
    const outcome = await dispatcher.dispatch(
      { type: 'tool_call', id: 'c1', name: 'bash', arguments: {}, rawArguments: '{"command": "echo via-dispatcher"}' },
      { signal: new AbortController().signal, runId: 'r', idempotencyKey: 'k' },
    );
    expect(outcome.result.isError).toBe(false);
    expect(outcome.result.content).toEqual([{ type: 'text', text: 'via-dispatcher\n[exit code 0]' }]);
  });
});
