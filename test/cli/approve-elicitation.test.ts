// An MCP server's question (elicitation) in a `rein run` with no terminal, answered from a
// fresh process: the run pauses at the question, `rein approve` shows it and takes the
// answer, and the call is made again with it. Through the real binary (needs
// `npm run build`), against a server of our own on the official SDK over stdio.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rein as spawnRein, type CliRun } from './spawn.js';
import { makeProject, removeProject, type TempProject } from './project.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';

const BOOKING = fileURLToPath(new URL('../mcp/fixtures/booking-server.mjs', import.meta.url));
const servers: ScriptedServer[] = [];
let dirs: TempProject;

beforeEach(async () => {
  dirs = await makeProject('rein-approve-elicit-');
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await removeProject(dirs);
});

function rein(args: string[]): Promise<CliRun> {
  return spawnRein(args, { cwd: dirs.project, stdin: '', env: { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1' } });
}

/** A model that books a table, then says what the tool answered. */
async function model(): Promise<ScriptedServer> {
  const s = await startScriptedServer({
    script: (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'user') return { toolCalls: [{ id: 'call_b', name: 'booking__book', arguments: { day: 'Friday' } }] };
      return { text: request.messages.flatMap((m) => (m.role === 'tool' ? [String(m.content)] : [])).join('\n') };
    },
  });
  servers.push(s);
  return s;
}

describe('rein approve answers an MCP elicitation a run paused for', () => {
  it('shows the question, refuses a form that does not fit, and with the answer the call is made again and completes', async () => {
    const bookings = join(dirs.base, 'bookings.txt');
    await writeFile(
      join(dirs.project, '.mcp.json'),
      JSON.stringify({ mcpServers: { booking: { command: process.execPath, args: [BOOKING], env: { BOOKINGS_FILE: bookings } } } }),
    );
    const s = await model();
    // The booking tool is not read-only: allowed here, so the only pause is the question.
    const paused = await rein(['run', '--allow', 'booking__book', '--base-url', s.url, 'book a table for Friday']);
    expect(paused.code).toBe(4);
    const runId = (JSON.parse((await rein(['runs', '--json'])).stdout.trim().split('\n')[0]!) as { id: string }).id;
    // What the run waits on, and how to answer it, as the run ends.
    expect(paused.stderr).toContain('rein: call call_b (booking__book) waits: MCP server "booking" asks: Who is the table on Friday for?');
    expect(paused.stderr).toContain(`rein: answer with: rein approve ${runId} --accept`);
    expect(paused.stderr).not.toContain('waits for approval');
    // And so does rein show.
    expect((await rein(['show', runId])).stderr).toContain(
      'rein: call call_b (booking__book) waits: MCP server "booking" asks: Who is the table on Friday for?',
    );
    const log = (await rein(['show', runId, '--json'])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; runId: string; [key: string]: unknown });
    expect(log.find((e) => e.type === 'elicitation_requested')).toMatchObject({
      toolCallId: 'call_b',
      server: 'booking',
      mode: 'form',
      message: 'Who is the table on Friday for?',
    });
    expect(log.some((e) => e.type === 'tool_finished')).toBe(false);
    expect(log.at(-1)).toMatchObject({ type: 'run_finished', status: 'paused', reason: 'awaiting_approval' });
    expect(existsSync(bookings)).toBe(false);

    // Without an answer: the question, and how to answer it.
    const shown = await rein(['approve', runId, '--base-url', s.url]);
    expect(shown.code).toBe(2);
    expect(shown.stderr).toContain('call call_b (booking__book) waits: MCP server "booking" asks: Who is the table on Friday for?');
    expect(shown.stderr).toContain('  name "Name": string, required');
    expect(shown.stderr).toContain('  seats "Seats": integer, default 2');
    expect(shown.stderr).toContain(`answer with: rein approve ${runId} --accept '{"field": value}' | --decline | --cancel`);

    // A form that does not fit: a usage error, and the run is still paused.
    const wrong = await rein(['approve', runId, '--base-url', s.url, '--accept', '{"name": "Ada", "seats": 40}']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/does not fit the requested form: .*seats/);
    const runs = await rein(['runs', '--json']);
    expect(JSON.parse(runs.stdout.trim().split('\n')[0]!)).toMatchObject({ id: runId, status: 'paused' });

    const answered = await rein(['approve', runId, '--base-url', s.url, '--accept', '{"name": "Ada"}']);
    expect(answered.stderr).not.toMatch(/error/i);
    expect(answered.code).toBe(0);
    // The default filled in the seats left out; booked once.
    expect(answered.stdout.trim()).toBe('booked: Friday Ada 2');
    expect(await readFile(bookings, 'utf8')).toBe('Friday Ada 2\n');
    expect(s.requests).toHaveLength(2);

    const again = await rein(['approve', runId, '--base-url', s.url, '--decline']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/is not waiting for approval \(it is done/);
  });
});
