// What `rein run` answers when an MCP server asks in the middle of a tool call: at a
// terminal the person answers the server's question and allows each sampling request,
// which the run's model answers (its usage counted in the run); without one, nor a store
// to pause in, the call ends with an error the model reads. A server of our own on the official SDK, over stdio.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { command as runCommand } from '../../src/cli/commands/run.js';
import type { CliIO } from '../../src/cli/io.js';
import { openSqliteStore } from '../../src/store/open.js';
import { startScriptedServer, type ScriptedServer, type ScriptFunction } from '../../src/testing/index.js';
import { makeProject, removeProject, type TempProject } from './project.js';
import { rein } from './spawn.js';

const BOOKING = fileURLToPath(new URL('../mcp/fixtures/booking-server.mjs', import.meta.url));
const servers: ScriptedServer[] = [];
let dirs: TempProject;

beforeEach(async () => {
  dirs = await makeProject('rein-mcp-answers-');
  await writeFile(
    join(dirs.project, '.mcp.json'),
    JSON.stringify({ mcpServers: { booking: { command: process.execPath, args: [BOOKING] } } }),
  );
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await removeProject(dirs);
});

/** The agent calls `tool`, then says what it answered; the sampling requests get "one" and "two". */
async function model(tool: string, args: Record<string, unknown>): Promise<ScriptedServer> {
  const script: ScriptFunction = (request) => {
    const last = request.messages.at(-1);
    const text = String(last?.content ?? '');
    if (text.startsWith('first: ')) return { text: 'one', usage: { prompt_tokens: 100, completion_tokens: 10 } };
    if (text.startsWith('second: ')) return { text: 'two', usage: { prompt_tokens: 200, completion_tokens: 20 } };
    if (last?.role === 'user') return { toolCalls: [{ name: tool, arguments: args }], usage: { prompt_tokens: 50, completion_tokens: 5 } };
    return {
      text: request.messages.flatMap((m) => (m.role === 'tool' ? [String(m.content)] : [])).join('\n'),
      usage: { prompt_tokens: 60, completion_tokens: 6 },
    };
  };
  const s = await startScriptedServer({ script });
  servers.push(s);
  return s;
}

/** A terminal in process: keys typed into stdin, what is drawn kept. */
function terminal() {
  const drawn = { screen: '', stdout: '' };
  const changed: Array<() => void> = [];
  const stderr = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        drawn.screen += String(chunk);
        for (const wake of changed.splice(0)) wake();
        done();
      },
    }),
    { isTTY: true, columns: 100 },
  );
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      drawn.stdout += String(chunk);
      done();
    },
  });
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const io: CliIO = { stdin, stdout, stderr, env: { HOME: dirs.home, NO_COLOR: '1' }, signal: new AbortController().signal };
  return {
    io,
    drawn,
    type: (keys: string) => stdin.write(keys),
    close: () => stdin.destroy(),
    async waitFor(text: string, count = 1): Promise<void> {
      while (drawn.screen.split(text).length - 1 < count) await new Promise<void>((resolve) => changed.push(resolve));
    },
  };
}

describe('rein run: an MCP server asking during a tool call', () => {
  it("at a terminal each sampling request is shown and allowed, the run's model answers, and its usage counts in the run", async () => {
    const s = await model('booking__summarize', { text: 'the minutes' });
    const db = join(dirs.base, 'runs.db');
    const tty = terminal();
    const exit = runCommand.run(
      ['--store', db, '--allow', 'booking__summarize', '--root', dirs.project, '--base-url', s.url, 'summarize the minutes'],
      tty.io,
    );
    await tty.waitFor('allow? [y]es, [n]o: ');
    expect(tty.drawn.screen).toContain(
      'MCP server "booking" asks the model for an answer (1 message, up to 50 tokens):\n  first: the minutes',
    );
    tty.type('y\r');
    await tty.waitFor('allow? [y]es, [n]o: ', 2);
    tty.type('y\r');
    expect(await exit).toBe(0);
    expect(tty.drawn.stdout).toContain('summaries: one | two');
    tty.close();
    const store = await openSqliteStore({ path: db });
    try {
      const [run] = await store.listRuns();
      const events = await store.loadEvents(run!.id);
      expect(events.filter((e) => e.type === 'mcp_sampling')).toEqual([
        expect.objectContaining({ server: 'booking', decision: 'allow', usage: expect.objectContaining({ input: 100, output: 10 }) }),
        expect.objectContaining({ server: 'booking', decision: 'allow', usage: expect.objectContaining({ input: 200, output: 20 }) }),
      ]);
      // Two turns (55 + 66 tokens) and the two sampling answers (110 + 220).
      expect(run!.totals?.usage.total).toBe(451);
    } finally {
      await store.close();
    }
  });

  it("at a terminal the server's question is asked field by field, the default taken on an empty line", async () => {
    const s = await model('booking__book', { day: 'Friday' });
    const tty = terminal();
    const exit = runCommand.run(['--no-store', '--allow', 'booking__book', '--root', dirs.project, '--base-url', s.url, 'book'], tty.io);
    await tty.waitFor('Name (string): ');
    expect(tty.drawn.screen).toContain('MCP server "booking" asks: Who is the table on Friday for?');
    tty.type('Ada\r');
    await tty.waitFor('Seats (integer) [2]: ');
    tty.type('\r');
    expect(await exit).toBe(0);
    expect(tty.drawn.stdout).toContain('booked: Friday Ada 2');
    tty.close();
  });

  it('without a terminal nor a store a sampling request the policy asks about ends the call with an error the model reads', async () => {
    const s = await model('booking__summarize', { text: 'x' });
    const out = await rein(['run', '--json', '--no-store', '--allow', 'booking__summarize', '--base-url', s.url, 'summarize'], {
      cwd: dirs.project,
      env: { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1' },
    });
    expect(out.code).toBe(0);
    const events = out.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; [key: string]: unknown });
    expect(events.filter((e) => e.type === 'mcp_sampling')).toEqual([
      expect.objectContaining({ server: 'booking', decision: 'paused', rule: 'default: sampling asks' }),
    ]);
    const finished = events.find((e) => e.type === 'tool_finished') as unknown as {
      result: { isError: boolean; content: Array<{ text: string }> };
    };
    expect(finished.result.isError).toBe(true);
    expect(finished.result.content[0]!.text).toMatch(/may the model answer its sampling request.*can neither ask nor wait/);
    // The model was asked by the run only: no sampling answer was requested.
    expect(s.requests).toHaveLength(2);
  });
});
