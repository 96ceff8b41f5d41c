// Fleet-wide model limits across three `rein worker --max-model-requests 2` processes: the
// scripted server never sees more than 2 requests at once, and one 429 with retry-after: 2
// holds back every worker's next request to that provider until then.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer, type ScriptedServer, type ScriptTurn } from '../../src/testing/index.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { openSubmitter } from '../../src/cli/commands/submit.js';
import type { CliIO } from '../../src/cli/io.js';
import { dropDatabases, freshDatabase } from './pg.js';
import { reapWorkers, startWorker, type WorkerProcess } from './processes.js';
import { makeProject, type Project } from './project.js';

let server: ScriptedServer;
let project: Project;
let db = '';
let store: PostgresStore;
let workers: WorkerProcess[] = [];

let inFlight = 0;
let most = 0;
let rateLimitedAt = 0;
const arrivals: Array<{ tag: string; at: number }> = [];

async function answer(request: { messages: Array<{ role: string; content?: unknown }> }): Promise<ScriptTurn> {
  const tag = String(request.messages.find((m) => m.role === 'user')?.content ?? '');
  if (tag === 'hold-0' && rateLimitedAt === 0) {
    rateLimitedAt = Date.now();
    return { fault: { type: 'status', status: 429, retryAfter: 2 } };
  }
  arrivals.push({ tag, at: Date.now() });
  inFlight++;
  most = Math.max(most, inFlight);
  try {
    await new Promise((r) => setTimeout(r, 250));
  } finally {
    inFlight--;
  }
  return { text: `answered ${tag}` };
}

function quietIO(): CliIO {
  const sink = new PassThrough();
  sink.resume();
  const stdin = new PassThrough();
  stdin.end();
  return { stdout: sink, stderr: sink, stdin, env: project.env, signal: new AbortController().signal };
}

beforeAll(async () => {
  server = await startScriptedServer({ script: answer, recordRequests: false });
  project = makeProject({ talker: 'model: openai/scripted\ntools: []' });
  db = await freshDatabase('fleet');
  store = await PostgresStore.open({ url: db });
  workers = await Promise.all(
    Array.from({ length: 3 }, () =>
      startWorker(['--store', db, '--concurrency', '3', '--max-model-requests', '2'], { cwd: project.dir, env: project.env }),
    ),
  );
});
afterAll(async () => {
  await reapWorkers();
  await store?.close();
  await server?.close();
  project?.remove();
  await dropDatabases();
});

async function submitAll(tags: string[]): Promise<string[]> {
  const submitter = await openSubmitter({ agent: 'talker', store: db, 'base-url': server.url }, quietIO());
  try {
    const ids: string[] = [];
    for (const tag of tags) ids.push(await submitter.submit(tag));
    return ids;
  } finally {
    await submitter.close();
  }
}

async function allDone(ids: string[]): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    const records = await Promise.all(ids.map((id) => store.getRun(id)));
    if (records.every((r) => r?.status === 'done')) return;
    if (waited > 60_000)
      throw new Error(
        `runs not done: ${records
          .filter((r) => r?.status !== 'done')
          .map((r) => `${r?.id} ${r?.status}`)
          .join(', ')}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

const takers = (ids: string[]): Set<string> =>
  new Set(workers.filter((w) => ids.some((id) => w.stderr().includes(`took run ${id}`))).map((w) => w.id));

describe('fleet-wide model limits', () => {
  it('with a limit of 2 per provider and 3 workers, the model server never sees more than 2 requests at once', {
    timeout: 120_000,
  }, async () => {
    const ids = await submitAll(Array.from({ length: 12 }, (_, i) => `limit-${i}`));
    await allDone(ids);
    expect(most).toBe(2);
    // Every worker took runs: the limit held across processes, not inside one.
    expect(takers(ids).size).toBe(3);
  });

  it("one 429 with retry-after: 2 delays every worker's next request to that provider until then", { timeout: 120_000 }, async () => {
    const [first] = await submitAll(['hold-0']);
    for (let waited = 0; rateLimitedAt === 0; waited += 20) {
      if (waited > 30_000) throw new Error('the first request never came');
      await new Promise((r) => setTimeout(r, 20));
    }
    const ids = await submitAll(Array.from({ length: 6 }, (_, i) => `hold-${i + 1}`));
    await allDone([first!, ...ids]);
    const held = arrivals.filter((a) => a.tag.startsWith('hold-'));
    expect(held).toHaveLength(7);
    // The same machine's clock: the hold was written just after the 429 left the server.
    const early = held.filter((a) => a.at < rateLimitedAt + 2000 - 50).map((a) => `${a.tag} after ${a.at - rateLimitedAt} ms`);
    expect(early).toEqual([]);
    expect(takers(ids).size, 'workers whose requests were held back').toBeGreaterThanOrEqual(2);
  });
});
