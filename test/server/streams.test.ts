// Event streams over real HTTP: cut by the client at random events and resumed with
// Last-Event-ID (100 times: no gap, no duplicate), 100 clients on one run, a client that
// does not read is dropped while the run goes on.
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { TOKEN, agentFile, call, readStream, startInProcess, storedOf, until, type InProcess } from './helpers.js';
import { toolLoop } from './scripts.js';

let env: InProcess | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

const calc = agentFile('calc', { tools: '[calculate]', limits: '{ maxSteps: 60 }' });

/** A small seeded generator, so a failure can be replayed (the seed is in the message). */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

async function logOf(runId: string): Promise<RunEvent[]> {
  return env!.store.loadEvents(runId);
}

describe('a stream cut by the client and resumed with Last-Event-ID', () => {
  it('100 cuts at random events: what the client assembles is the log, in order, with no gap and no duplicate', async () => {
    const seed = Date.now() % 100_000;
    const next = random(seed);
    env = await startInProcess({ agents: { calc }, script: toolLoop({ calls: 40, delayMs: 15 }), tokenDelayMs: 1 });
    const { body } = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'count to forty' } });
    const runId = body.runId as string;
    const got: RunEvent[] = [];
    let cuts = 0;
    let last = -1;
    let deltas = 0;
    // Phase 1, while the run works: each connection takes 1 to 4 stored events, then is cut.
    for (let guard = 0; guard < 2000; guard++) {
      const take = 1 + Math.floor(next() * 4);
      let seen = 0;
      const stream = await readStream(env.url, runId, {
        ...(last >= 0 ? { lastEventId: last } : {}),
        stopAfter: (m) => m.id !== undefined && ++seen >= take,
      });
      expect(stream.status, `seed ${seed}`).toBe(200);
      deltas += stream.messages.filter((m) => m.id === undefined).length;
      for (const event of storedOf(stream.messages)) got.push(event);
      if (got.length > 0) last = (got.at(-1) as RunEvent).seq;
      if (stream.ended === 'cut') cuts++;
      if (got.at(-1)?.type === 'run_finished') break;
    }
    const log = await logOf(runId);
    expect(
      got.map((e) => e.seq),
      `seed ${seed}`,
    ).toEqual(log.map((e) => e.seq));
    expect(got).toEqual(log);
    expect(deltas).toBeGreaterThan(0);
    // Phase 2, from the log of the finished run: reconnect at random seqs until 100 cuts in all.
    while (cuts < 100) {
      const from = Math.floor(next() * (log.length - 1)) - 1;
      const take = 1 + Math.floor(next() * 5);
      let seen = 0;
      const useQuery = next() < 0.3;
      const stream = await readStream(env.url, runId, {
        ...(useQuery ? { after: from } : { lastEventId: from }),
        stopAfter: (m) => m.id !== undefined && ++seen >= take,
      });
      const slice = storedOf(stream.messages);
      expect(slice, `seed ${seed}, after ${from}`).toEqual(log.slice(from + 1, from + 1 + slice.length));
      expect(slice.length).toBe(Math.min(take, log.length - from - 1));
      if (stream.ended === 'cut') cuts++;
    }
    expect(cuts).toBeGreaterThanOrEqual(100);
    // After the end, nothing follows the last seq: 204, which stops an EventSource.
    expect((await readStream(env.url, runId, { lastEventId: (log.at(-1) as RunEvent).seq })).status).toBe(204);
    // Last-Event-ID wins over ?after= (a reconnecting EventSource keeps the URL it was opened with).
    const both = await readStream(env.url, runId, { after: -1, lastEventId: log.length - 3 });
    expect(storedOf(both.messages).map((e) => e.seq)).toEqual([log.length - 2, log.length - 1]);
  });
});

describe('a quiet stream', () => {
  it('gets keep-alive comments while the run waits', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const script = toolLoop({ calls: 0 });
    env = await startInProcess({
      agents: { calc },
      script: async (request, info) => {
        await gate;
        return script(request, info);
      },
      server: { streams: { keepAliveMs: 100 } },
    });
    const { body } = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'wait' } });
    const response = await fetch(`${env.url}/v1/runs/${body.runId}/events`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes(': keep-alive\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    release();
    expect(text).toMatch(/^: stream of run events\n\nid: 0\nevent: run_started\n/);
  });
});

describe('many clients', () => {
  it('100 SSE clients on one live run each get the whole log, the same, ending with run_finished', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const script = toolLoop({ calls: 5 });
    env = await startInProcess({
      agents: { calc },
      script: async (request, info) => {
        if (info.index === 0) await gate;
        return script(request, info);
      },
    });
    const { body } = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'five steps' } });
    const runId = body.runId as string;
    const clients = Array.from({ length: 100 }, () => readStream(env!.url, runId));
    // Every client is connected (its first event read) before the run goes on.
    await until(async () => (await countStreams()) >= 100, '100 streams open');
    release();
    const streams = await Promise.all(clients);
    const log = await logOf(runId);
    expect(log.at(-1)?.type).toBe('run_finished');
    for (const [i, stream] of streams.entries()) {
      expect(stream.ended, `client ${i}`).toBe('end');
      expect(storedOf(stream.messages), `client ${i}`).toEqual(log);
    }
  });

  it('a client that does not read is dropped once its buffer is full; the run is not slowed and the client may reconnect', {
    timeout: 150_000,
  }, async () => {
    const big = 'x'.repeat(3_000_000);
    env = await startInProcess({
      agents: { calc },
      script: toolLoop({ calls: 2, text: big }),
      // Deltas of 16 KiB: megabytes reach the stalled client in a few hundred events.
      chunkSize: 16 * 1024,
      server: { streams: { maxBufferBytes: 64 * 1024 } },
    });
    const { body } = await call(env.url, '/v1/runs', { body: { agent: 'calc', input: 'say a lot' } });
    const runId = body.runId as string;
    const response = await fetch(`${env.url}/v1/runs/${runId}/events`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    // A reader that reads nothing, while the run streams megabytes of deltas and events.
    const detail = await until(
      async () => {
        const d = (await call(env!.url, `/v1/runs/${runId}`)).body;
        return d.record.status === 'done' && !d.record.live ? d : undefined;
      },
      'the run to finish with a stalled client',
      120_000,
    );
    expect(detail.result.text).toHaveLength(big.length);
    // The stalled stream was cut by the server: reading it now ends before run_finished, or fails.
    const messages: string[] = [];
    const outcome = await (async () => {
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return 'ended';
          messages.push(decoder.decode(value));
        }
      } catch {
        return 'failed';
      }
    })();
    expect(['ended', 'failed']).toContain(outcome);
    expect(messages.join('')).not.toMatch(/event: run_finished/);
    expect(await countStreams()).toBe(0);
    // Reconnecting from the start gets everything.
    const again = await readStream(env.url, runId);
    expect(storedOf(again.messages)).toEqual(await logOf(runId));
  });
});

/** How many event streams the server has open. */
async function countStreams(): Promise<number> {
  return env!.server.openStreams();
}
