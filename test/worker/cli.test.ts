// rein submit, rein worker, rein workers, rein approve through the queue, and what rein
// runs / rein show say of the fleet: real CLI processes, the local Postgres (a database
// of this file's own), the scripted model server.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer, type ScriptedServer, type ScriptTurn } from '../../src/testing/index.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { dropDatabases, freshDatabase } from './pg.js';
import { killHard, reapWorkers, rein, startWorker, runStatus, until } from './processes.js';
import { makeProject, type Project } from './project.js';

let server: ScriptedServer;
let project: Project;
let db = '';
let store: PostgresStore;

// Each run: one shell command that appends the run's tag to a file, then an answer.
function answer(request: { messages: Array<{ role: string; content?: unknown }> }): ScriptTurn {
  const tag = String(request.messages.find((m) => m.role === 'user')?.content ?? '').replace(/[^a-z0-9-]/gi, '');
  const turn = request.messages.filter((m) => m.role === 'assistant').length;
  const pause = tag === 'slow' || tag.startsWith('drain') ? 'sleep 3; ' : '';
  if (turn === 0) return { toolCalls: [{ name: 'bash', arguments: { command: `${pause}echo ${tag} >> ran.txt` } }] };
  return { text: `done ${tag}` };
}

beforeAll(async () => {
  server = await startScriptedServer({ script: answer });
  project = makeProject({ asker: 'model: openai/scripted\ntools: [bash]', doer: 'model: openai/scripted\ntools: [bash]' });
  db = await freshDatabase('cli');
  store = await PostgresStore.open({ url: db });
});
afterAll(async () => {
  await reapWorkers();
  await store?.close();
  await server?.close();
  project?.remove();
  await dropDatabases();
});

// The asker's shell commands ask a person (the run pauses); the doer's run (--mode yolo).
const submit = (agent: string, task: string) =>
  rein(
    [
      'submit',
      '--store',
      db,
      '--agent',
      agent,
      '--base-url',
      server.url,
      '--sandbox',
      'off',
      ...(agent === 'doer' ? ['--mode', 'yolo'] : []),
      task,
    ],
    { cwd: project.dir, env: project.env },
  );

const statusOf = (runId: string, status: string) => runStatus(store, runId, status);

// Worker processes start, drain and are declared dead in seconds each: generous on a busy machine.
describe('rein submit and rein worker', { timeout: 120_000 }, () => {
  it('a SQLite store refuses submit, saying why and what to use', async () => {
    const out = await rein(['submit', '--store', join(project.dir, 'local.db'), '--base-url', server.url, 'hello'], {
      cwd: project.dir,
      env: project.env,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/rein submit needs a store every worker reaches.*--store postgres:\/\//);
    const worker = await rein(['worker', '--store', join(project.dir, 'local.db')], { cwd: project.dir, env: project.env });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toMatch(/Postgres store/);
  });

  it('a run pauses for approval on worker A, is approved with rein approve, and finishes on worker B', async () => {
    const a = await startWorker(['--store', db, '--concurrency', '2'], { cwd: project.dir, env: project.env });
    const sent = await submit('asker', 'gate-one');
    expect(sent.code, sent.stderr).toBe(0);
    const { runId } = JSON.parse(sent.stdout) as { runId: string };
    await statusOf(runId, 'paused');
    expect(a.stderr()).toContain(`took run ${runId}`);
    // A drains and stops (SIGTERM); B takes the run once it is approved.
    a.child.kill('SIGTERM');
    expect((await a.exited).code).toBe(0);
    const b = await startWorker(['--store', db], { cwd: project.dir, env: project.env });
    const approved = await rein(['approve', runId, '--store', db], { cwd: project.dir, env: project.env });
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ runId, queued: true });
    await statusOf(runId, 'done');
    expect(b.stderr()).toContain(`took run ${runId}`);
    await until('B to say the run is done', async () => (b.stderr().includes(`run ${runId} done (final_answer)`) ? true : undefined));
    expect(readFileSync(join(project.dir, 'ran.txt'), 'utf8')).toBe('gate-one\n');
    const events = await store.loadEvents(runId);
    const decided = events.findIndex((e) => e.type === 'approval_decided');
    const started = events.findIndex((e) => e.type === 'tool_started');
    expect(decided).toBeGreaterThan(0);
    expect(started).toBeGreaterThan(decided);
    b.child.kill('SIGTERM');
    await b.exited;
  });

  it('rein workers lists the live workers; rein runs and rein show name the worker that holds a run', async () => {
    const w = await startWorker(['--store', db, '--concurrency', '3'], { cwd: project.dir, env: project.env });
    const listed = await rein(['workers', '--store', db, '--json'], { cwd: project.dir, env: project.env });
    expect(listed.code, listed.stderr).toBe(0);
    const workers = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; pid: number; concurrency: number; runsHeld: number });
    expect(workers).toEqual([expect.objectContaining({ id: w.id, pid: w.pid, concurrency: 3, runsHeld: 0 })]);
    // A run that sleeps in its tool, so it is held while we look.
    const slow = await submit('doer', 'slow');
    expect(slow.code, slow.stderr).toBe(0);
    const { runId } = JSON.parse(slow.stdout) as { runId: string };
    const runs = await until('the run held', async () => {
      const out = await rein(['runs', '--store', db, '--json'], { cwd: project.dir, env: project.env });
      const line = out.stdout.split('\n').find((l) => l.includes(runId));
      return line && (JSON.parse(line) as { worker?: string }).worker ? out : undefined;
    });
    expect(runs.stdout).toContain(`"worker":"${w.id}"`);
    const shown = await rein(['show', runId, '--store', db], { cwd: project.dir, env: project.env });
    // Held while running; once done, no longer held.
    expect(shown.stderr).toMatch(new RegExp(`held by worker ${w.id}|· done`));
    await statusOf(runId, 'done');
    const human = await rein(['workers', '--store', db], { cwd: project.dir, env: project.env });
    expect(human.stdout).toMatch(new RegExp(`${w.id}  .*pid ${w.pid}  0/3 runs  heartbeat`));
    await killHard(w);
    const none = await until(
      'the killed worker to leave the list',
      async () => {
        const out = await rein(['workers', '--store', db, '--json'], { cwd: project.dir, env: project.env });
        return out.stdout.includes(w.id) ? undefined : out;
      },
      30_000,
    );
    expect(none.stdout).toBe('');
  });

  it('SIGTERM drains a worker: the running step ends (its command ran once), the run goes back to the queue and another worker finishes it', async () => {
    const a = await startWorker(['--store', db], { cwd: project.dir, env: project.env });
    const sent = await submit('doer', 'drain-one');
    const { runId } = JSON.parse(sent.stdout) as { runId: string };
    await until('the command to start', async () =>
      (await store.loadEvents(runId)).some((e) => e.type === 'tool_started') ? true : undefined,
    );
    a.child.kill('SIGTERM');
    const exit = await a.exited;
    expect(exit.code, a.stderr()).toBe(0);
    expect(a.stderr()).toContain(`let run ${runId} go back to the queue: the worker is draining`);
    // The step ended before the worker let go: its result is in the log, and the run is still running.
    const events = await store.loadEvents(runId);
    expect(events.filter((e) => e.type === 'tool_finished')).toEqual([expect.objectContaining({ name: 'bash' })]);
    expect(events.find((e) => e.type === 'tool_finished')).not.toHaveProperty('outcome');
    expect((await store.getRun(runId))?.status).toBe('running');
    const b = await startWorker(['--store', db], { cwd: project.dir, env: project.env });
    await statusOf(runId, 'done');
    expect(b.stderr()).toContain(`took run ${runId}`);
    expect(readFileSync(join(project.dir, 'ran.txt'), 'utf8').match(/drain-one/g)).toHaveLength(1);
    b.child.kill('SIGTERM');
    await b.exited;
  });

  it("a worker exports its runs' spans and the queue's metrics over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set", async () => {
    const received: Array<{ path: string; body: string }> = [];
    const collector = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    try {
      const origin = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
      const env = { ...project.env, OTEL_EXPORTER_OTLP_ENDPOINT: origin, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
      const w = await startWorker(['--store', db], { cwd: project.dir, env });
      const sent = await submit('doer', 'traced');
      expect(sent.code, sent.stderr).toBe(0);
      const { runId } = JSON.parse(sent.stdout) as { runId: string };
      await statusOf(runId, 'done');
      // A drained worker flushes its exporters before it exits.
      w.child.kill('SIGTERM');
      expect((await w.exited).code).toBe(0);
      const started = (await store.loadEvents(runId)).find((e) => e.type === 'run_started');
      const spans = received
        .filter((r) => r.path === '/v1/traces')
        .flatMap((r) =>
          (
            JSON.parse(r.body) as {
              resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string; traceId: string }> }> }>;
            }
          ).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
        );
      const ofRun = spans.filter((sp) => started?.type === 'run_started' && sp.traceId === started.traceId).map((sp) => sp.name);
      expect(ofRun.filter((name) => name.startsWith('invoke_agent'))).toHaveLength(1);
      expect(ofRun).toContain('execute_tool bash');
      expect(ofRun.some((name) => name.startsWith('chat '))).toBe(true);
      const metrics = received.filter((r) => r.path === '/v1/metrics').map((r) => r.body);
      expect(metrics.some((body) => body.includes('gen_ai.client.operation.duration'))).toBe(true);
      expect(metrics.some((body) => body.includes('rein.queue.pickup.duration'))).toBe(true);
    } finally {
      await new Promise<void>((r) => collector.close(() => r()));
    }
  });

  it('a run whose agent file changed since it was submitted is refused, and rein show says why', async () => {
    const sent = await submit('doer', 'changed');
    expect(sent.code, sent.stderr).toBe(0);
    const { runId } = JSON.parse(sent.stdout) as { runId: string };
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      join(project.dir, '.rein', 'agents', 'doer.md'),
      '---\nname: doer\ndescription: changed\nmodel: openai/scripted\ntools: [bash]\n---\nAnother prompt.\n',
    );
    const w = await startWorker(['--store', db], { cwd: project.dir, env: project.env });
    await statusOf(runId, 'failed');
    const shown = await rein(['show', runId, '--store', db], { cwd: project.dir, env: project.env });
    expect(shown.stderr).toMatch(/refused by worker .*agent "doer" changed since the run was submitted/);
    expect(readFileSync(join(project.dir, 'ran.txt'), 'utf8')).not.toContain('changed');
    w.child.kill('SIGTERM');
    await w.exited;
  });
});
