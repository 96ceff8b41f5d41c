// kill -9 of `rein serve` at random moments, at least 20 times, each time started again on
// the same store: every run ends done with a valid history, no completed tool call ran
// twice (an `unsafe` one cut off ends as `unknown`), and a stream followed across the
// kills assembles to the log with no gap and no duplicate.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { messagesFromEvents } from '../../src/loop/fold.js';
import { startScriptedServer, type ScriptedServer, type ScriptTurn } from '../../src/testing/index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { call, makeServedProject, readStream, storedOf } from './helpers.js';
import { reapServers, startServe } from './serve-process.js';

let model: ScriptedServer | undefined;
let base: string | undefined;
afterEach(async () => {
  await reapServers();
  await model?.close();
  if (base) await rm(base, { recursive: true, force: true });
});

const STEPS = 8;
const TOKEN = 'crash-test-token-0123456789-0123456789';

/** Each run alternates an unsafe shell command (appends a line) and an idempotent write, STEPS times, then answers. */
function script(request: Parameters<Extract<import('../../src/testing/index.js').Script, Function>>[0]): ScriptTurn {
  const task = request.messages.find((m) => m.role === 'user')?.content ?? '';
  const tag = /job-\d+/.exec(task)?.[0] ?? 'job-x';
  const done = request.messages.filter((m) => m.role === 'tool').length;
  if (done >= STEPS) return { text: `${tag} finished`, delayMs: 30 };
  if (done % 2 === 0) return { toolCalls: [{ name: 'bash', arguments: { command: `echo ${tag}-${done} >> effects.log` } }], delayMs: 30 };
  return { toolCalls: [{ name: 'write_file', arguments: { path: `out/${tag}-${done}.txt`, content: `${done}\n` } }], delayMs: 30 };
}

function random(seed: number): () => number {
  let s = seed >>> 0 || 7;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

describe('kill -9 of rein serve', () => {
  it('at 20+ random moments, restarted on the same store: every run ends done with a valid history, nothing completed runs twice', {
    timeout: 480_000,
  }, async () => {
    const seed = Date.now() % 100_000;
    const next = random(seed);
    model = await startScriptedServer({ script });
    const p = await makeServedProject({});
    base = p.base;
    // A user agent file may choose yolo (a project one may not): the test runs shell commands unattended.
    await mkdir(join(p.home, '.rein/agents'), { recursive: true });
    await writeFile(
      join(p.home, '.rein/agents/worker.md'),
      `---\nname: worker\ndescription: Runs the crash test's steps.\nmodel: openai/scripted\ntools: [bash, write_file]\nmode: yolo\nlimits: { maxSteps: ${STEPS + 4} }\n---\nDo each step.\n`,
    );
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: p.home, NO_COLOR: '1', REIN_SERVER_TOKEN: TOKEN };
    const args = ['--base-url', model.url];
    const accepted: string[] = [];
    let followed: string | undefined;
    const seen: RunEvent[] = [];
    let kills = 0;
    let jobs = 0;

    while (kills < 22 || jobs < 8) {
      const server = await startServe(args, { cwd: p.project, env });
      // Start one or two runs in this life, while earlier ones continue from their logs.
      const posts: Array<Promise<void>> = [];
      for (let i = 0; i < 1 + Math.floor(next() * 2) && jobs < 8; i++) {
        const tag = `job-${jobs++}`;
        posts.push(
          call(server.url, '/v1/runs', { token: TOKEN, body: { agent: 'worker', input: `do ${tag}` } }).then(
            (res) => {
              if (res.status === 201) accepted.push(res.body.runId);
            },
            () => undefined, // killed while answering: the client never learns of it
          ),
        );
      }
      // Follow one run's stream across the kills, resuming from the last id seen.
      const follow = (async () => {
        await Promise.all(posts);
        followed ??= accepted[0];
        if (!followed) return;
        const last = seen.at(-1)?.seq;
        const stream = await readStream(server.url, followed, { token: TOKEN, ...(last === undefined ? {} : { lastEventId: last }) }).catch(
          () => undefined,
        );
        if (stream) seen.push(...storedOf(stream.messages));
      })();
      // Most lives last until their runs were accepted and a little longer; some end any time after the start.
      if (next() < 0.7) await Promise.all(posts);
      await new Promise((r) => setTimeout(r, Math.floor(next() * 700)));
      server.child.kill('SIGKILL');
      await server.exited;
      await follow.catch(() => undefined);
      kills++;
    }

    // The last start: everything finishes.
    const server = await startServe(args, { cwd: p.project, env });
    const store = new SqliteStore({ path: join(p.project, '.rein/rein.db') });
    try {
      for (let round = 0; ; round++) {
        const running = (await store.listRuns()).filter((r) => r.status === 'running' || r.status === 'paused');
        if (running.length === 0) break;
        if (round > 1500) throw new Error(`seed ${seed}: runs still running: ${running.map((r) => r.id).join(', ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      if (followed) {
        const last = seen.at(-1)?.seq;
        const rest = await readStream(server.url, followed, { token: TOKEN, ...(last === undefined ? {} : { lastEventId: last }) });
        if (rest.status === 200) seen.push(...storedOf(rest.messages));
        expect(seen, `seed ${seed}: the followed stream is the log`).toEqual(await store.loadEvents(followed));
      }

      const effects = (await readFile(join(p.project, 'effects.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
      const lines = new Map<string, number>();
      for (const line of effects) lines.set(line, (lines.get(line) ?? 0) + 1);
      const runs = await store.listRuns();
      expect(accepted.length, `seed ${seed}`).toBeGreaterThan(0);
      let continued = 0;
      for (const record of runs) {
        const events = await store.loadEvents(record.id);
        const where = `seed ${seed}, run ${record.id}`;
        if (!accepted.includes(record.id) && events.length === 0) {
          // Killed between creating the run and storing its first event, before anyone was told of it.
          expect(record.status, where).toBe('failed');
          continue;
        }
        expect(record.status, where).toBe('done');
        expect(
          events.map((e) => e.seq),
          where,
        ).toEqual(events.map((_, i) => i));
        expect(record.eventCount, where).toBe(events.length);
        expect(events[0]?.type, where).toBe('run_started');
        if (events.some((e) => e.type === 'run_resumed')) continued++;
        expect(events.at(-1), where).toMatchObject({ type: 'run_finished', status: 'done' });
        const finished = new Map<string, Extract<RunEvent, { type: 'tool_finished' }>>();
        for (const event of events) {
          if (event.type !== 'tool_finished') continue;
          expect(finished.has(event.toolCallId), `${where}: ${event.toolCallId} finished twice`).toBe(false);
          finished.set(event.toolCallId, event);
        }
        // A valid history: every call the fold holds has its result right after its turn.
        const history = messagesFromEvents(events);
        for (const [i, message] of history.entries()) {
          if (message.role !== 'assistant') continue;
          const calls = message.content.filter((c) => c.type === 'tool_call');
          const results = history.slice(i + 1, i + 1 + calls.length);
          expect(
            results.map((r) => (r.role === 'tool' ? r.toolCallId : r.role)),
            where,
          ).toEqual(calls.map((c) => (c as { id: string }).id));
        }
        // The shell's effects: each step's line at most once; a call logged as done ran exactly once.
        const tag = /job-\d+/.exec(JSON.stringify(events[0]))?.[0] as string;
        for (const event of finished.values()) {
          if (event.name !== 'bash') continue;
          const command = String(
            (
              events.find((e) => e.type === 'tool_started' && e.toolCallId === event.toolCallId) as
                | { arguments?: { command?: string } }
                | undefined
            )?.arguments?.command ?? '',
          );
          const line = /echo (\S+)/.exec(command)?.[1] as string;
          // Cut off mid-way (unknown), or failed (a timeout on a busy machine): it ran at most once.
          if (event.outcome === 'unknown' || event.result.isError) expect(lines.get(line) ?? 0, `${where}: ${line}`).toBeLessThanOrEqual(1);
          else expect(lines.get(line), `${where}: ${line}`).toBe(1);
        }
        for (const [line, n] of lines) if (line.startsWith(`${tag}-`)) expect(n, `${where}: ${line} ran ${n} times`).toBe(1);
      }
      expect(kills).toBeGreaterThanOrEqual(20);
      // The kills did cut runs short: some were continued from their logs.
      expect(continued, `seed ${seed}`).toBeGreaterThan(0);
    } finally {
      await store.close();
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
