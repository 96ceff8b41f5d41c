// `rein approve --accept` for a run of the queue: an MCP server's question pauses the run
// on a worker; the answer is stored and the run requeued in one transaction, and a worker
// makes the call again, the server getting the answer. Real CLI processes, the local
// Postgres (a database of this file's own), the scripted model server, and a server of our
// own on the official MCP SDK over stdio.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import { dropDatabases, freshDatabase } from './pg.js';
import { reapWorkers, rein, startWorker, runStatus } from './processes.js';
import { makeProject, type Project } from './project.js';

const BOOKING = fileURLToPath(new URL('../mcp/fixtures/booking-server.mjs', import.meta.url));
let server: ScriptedServer;
let project: Project;
let db = '';
let store: PostgresStore;

beforeAll(async () => {
  server = await startScriptedServer({
    script: (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'user') return { toolCalls: [{ id: 'call_b', name: 'booking__book', arguments: { day: 'Friday' } }] };
      return { text: request.messages.flatMap((m) => (m.role === 'tool' ? [String(m.content)] : [])).join('\n') };
    },
  });
  project = makeProject({ booker: 'model: openai/scripted\ntools: [booking__book]' });
  writeFileSync(
    join(project.dir, '.mcp.json'),
    JSON.stringify({
      mcpServers: { booking: { command: process.execPath, args: [BOOKING], env: { BOOKINGS_FILE: join(project.dir, 'bookings.txt') } } },
    }),
  );
  writeFileSync(join(project.dir, '.rein', 'settings.json'), JSON.stringify({ permissions: { allow: ['booking__book'] } }));
  db = await freshDatabase('answer');
  store = await PostgresStore.open({ url: db });
});
afterAll(async () => {
  await reapWorkers();
  await store?.close();
  await server?.close();
  project?.remove();
  await dropDatabases();
});

const statusOf = (runId: string, status: string) => runStatus(store, runId, status);

describe('rein approve --accept for a run of the queue', { timeout: 120_000 }, () => {
  it('stores the answer and requeues the run; a worker makes the call again and the server gets the answer', async () => {
    const worker = await startWorker(['--store', db], { cwd: project.dir, env: project.env });
    const sent = await rein(['submit', '--store', db, '--agent', 'booker', '--base-url', server.url, 'book Friday'], {
      cwd: project.dir,
      env: project.env,
    });
    expect(sent.code, sent.stderr).toBe(0);
    const { runId } = JSON.parse(sent.stdout) as { runId: string };
    await statusOf(runId, 'paused');
    expect((await store.loadEvents(runId)).find((e) => e.type === 'elicitation_requested')).toMatchObject({
      toolCallId: 'call_b',
      mode: 'form',
      message: 'Who is the table on Friday for?',
    });

    // Without an answer: the question, and how to answer it; a form that does not fit is refused.
    const shown = await rein(['approve', runId, '--store', db], { cwd: project.dir, env: project.env });
    expect(shown.code).toBe(2);
    expect(shown.stderr).toContain('call call_b (booking__book) waits: MCP server "booking" asks: Who is the table on Friday for?');
    const wrong = await rein(['approve', runId, '--store', db, '--accept', '{"seats": 40}'], { cwd: project.dir, env: project.env });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/does not fit the requested form/);
    expect((await store.getRun(runId))?.status).toBe('paused');

    const answered = await rein(['approve', runId, '--store', db, '--accept', '{"name": "Ada"}'], { cwd: project.dir, env: project.env });
    expect(answered.code, answered.stderr).toBe(0);
    expect(JSON.parse(answered.stdout)).toEqual({ runId, queued: true, answered: 'call_b' });
    await statusOf(runId, 'done');
    expect(readFileSync(join(project.dir, 'bookings.txt'), 'utf8')).toBe('Friday Ada 2\n');
    const events = await store.loadEvents(runId);
    expect(events.filter((e) => e.type === 'elicitation_answered')).toEqual([
      expect.objectContaining({ toolCallId: 'call_b', action: 'accept', content: { name: 'Ada', seats: 2 } }),
    ]);
    expect(events.find((e) => e.type === 'tool_finished')).toMatchObject({ toolCallId: 'call_b' });
    worker.child.kill('SIGTERM');
    await worker.exited;
  });
});
