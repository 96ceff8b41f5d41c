// rein serve on a Postgres store: with --no-execute it queues the runs it is asked for
// (a rein worker drives them), and an approval through its API puts the run back in the
// queue; without, a worker inside it takes queued runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { startScriptedServer, type ScriptedServer, type ScriptTurn } from '../../src/testing/index.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { startServe } from '../server/serve-process.js';
import { dropDatabases, freshDatabase } from './pg.js';
import { reapWorkers, rein, startWorker } from './processes.js';
import { makeProject, type Project } from './project.js';

const TOKEN = 'a-token-of-at-least-thirty-two-characters';
let server: ScriptedServer;
let project: Project;
let db = '';
let store: PostgresStore;

function answer(request: { messages: Array<{ role: string; content?: unknown }> }): ScriptTurn {
  const tag = String(request.messages.find((m) => m.role === 'user')?.content ?? '').replace(/[^a-z0-9-]/gi, '');
  const turn = request.messages.filter((m) => m.role === 'assistant').length;
  if (turn === 0) return { toolCalls: [{ name: 'bash', arguments: { command: `echo ${tag} >> served.txt` } }] };
  return { text: `done ${tag}` };
}

beforeAll(async () => {
  server = await startScriptedServer({ script: answer });
  project = makeProject({ asker: 'model: openai/scripted\ntools: [bash]' });
  db = await freshDatabase('serve');
  store = await PostgresStore.open({ url: db });
});
afterAll(async () => {
  await reapWorkers();
  await store?.close();
  await server?.close();
  project?.remove();
  await dropDatabases();
});

async function until(what: string, probe: () => Promise<boolean>, ms = 60_000): Promise<void> {
  for (const end = Date.now() + ms; !(await probe()); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('rein serve on a Postgres store', () => {
  it('--no-execute queues runs for the workers; an approval through the API requeues the run', { timeout: 120_000 }, async () => {
    const env = { ...project.env, REIN_SERVER_TOKEN: TOKEN };
    const serve = await startServe(['--store', db, '--no-execute', '--base-url', server.url], { cwd: project.dir, env });
    try {
      const post = (path: string, body: unknown) =>
        fetch(`${serve.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const started = await post('/v1/runs', { agent: 'asker', input: 'via-api' });
      expect(started.status).toBe(201);
      const { runId } = (await started.json()) as { runId: string };
      // Nothing runs in the server: the run waits in the queue until a worker comes.
      await new Promise((r) => setTimeout(r, 1500));
      expect((await store.loadEvents(runId)).map((e) => e.type)).toEqual(['run_started']);
      const worker = await startWorker(['--store', db], { cwd: project.dir, env: project.env });
      await until('the run to pause', async () => (await store.getRun(runId))?.status === 'paused');
      const waiting = (await store.loadEvents(runId)).find(
        (e): e is Extract<RunEvent, { type: 'approval_requested' }> => e.type === 'approval_requested',
      );
      expect(waiting).toBeDefined();
      const approved = await post(`/v1/runs/${runId}/approvals`, { toolCallId: waiting?.toolCallId, approved: true });
      expect(approved.status, await approved.clone().text()).toBeLessThan(300);
      await until('the run to finish', async () => (await store.getRun(runId))?.status === 'done');
      expect(worker.stderr().match(new RegExp(`took run ${runId}`, 'g'))).toHaveLength(2);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('without --no-execute, a worker inside the server takes queued runs', { timeout: 120_000 }, async () => {
    const env = { ...project.env, REIN_SERVER_TOKEN: TOKEN };
    const serve = await startServe(['--store', db, '--base-url', server.url], { cwd: project.dir, env });
    try {
      const sent = await rein(
        ['submit', '--store', db, '--agent', 'asker', '--base-url', server.url, '--sandbox', 'off', '--mode', 'yolo', 'submitted'],
        { cwd: project.dir, env: project.env },
      );
      expect(sent.code, sent.stderr).toBe(0);
      const { runId } = JSON.parse(sent.stdout) as { runId: string };
      await until('the run to finish', async () => (await store.getRun(runId))?.status === 'done');
      expect(serve.stderr()).toContain('a worker (');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
