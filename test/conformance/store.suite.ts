/**
 * The one conformance suite every RunStore passes (STYLE 10): memory, SQLite and Postgres
 * are held to the same behaviour. Each implementation's test file calls
 * {@link describeStoreConformance} with a harness that makes fresh stores.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent, RunTotals } from '../../src/events.js';
import type { RunStore } from '../../src/store/types.js';
import { bigText, delta, events, expectCode, json, newRun, runId, toolFinished, writerOf } from './store-fixtures.js';

/** What the suite needs from an implementation. */
export interface StoreHarness {
  /** A fresh, empty store (its own file, schema or memory). */
  fresh(): Promise<RunStore>;
  /** A second, independent instance over the storage of the latest `fresh()` store (persistent stores only). */
  reopen?(): Promise<RunStore>;
  /** Characters of JSON in the events row of (runId, seq): 0 when the event is kept out of it. */
  inlineSize(store: RunStore, runId: string, seq: number): Promise<number | undefined>;
}

const totals: RunTotals = {
  steps: 3,
  toolCalls: 2,
  usage: {
    input: 120,
    output: 40,
    cacheRead: 0,
    cacheWrite: 0,
    reasoning: 0,
    total: 160,
    cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 },
  },
  durationMs: 1234,
};

/** Registers the conformance tests for one implementation. */
export function describeStoreConformance(name: string, harness: StoreHarness): void {
  describe(`${name} store (conformance)`, () => {
    const open: RunStore[] = [];
    const fresh = async (): Promise<RunStore> => {
      const store = await harness.fresh();
      open.push(store);
      return store;
    };
    const reopen = async (): Promise<RunStore> => {
      const store = await harness.reopen!();
      open.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((store) => store.close()));
    });

    /** A created run whose lease this caller holds. */
    async function started(store: RunStore, id = runId()): Promise<{ id: string; epoch: number }> {
      await store.createRun(newRun(id));
      return { id, epoch: await store.acquireLease(id) };
    }

    it('creates a run and reads the same record back', async () => {
      const store = await fresh();
      const id = runId();
      const created = await store.createRun(newRun(id, { parentRunId: 'run_parent', createdAt: 1_700_000_000_123 }));
      expect(created).toEqual({
        id,
        status: 'running',
        model: 'openai/gpt-4o-mini',
        config: json(newRun(id).config),
        configHash: 'hash-1',
        parentRunId: 'run_parent',
        createdAt: 1_700_000_000_123,
        updatedAt: created.updatedAt,
        leaseEpoch: 0,
        eventCount: 0,
      });
      expect(await store.getRun(id)).toEqual(created);
      expect(await store.getRun('run_missing')).toBeUndefined();
    });

    it('refuses a duplicate run id with conflict and keeps the first', async () => {
      const store = await fresh();
      const id = runId();
      await store.createRun(newRun(id));
      await expectCode(store.createRun(newRun(id, { model: 'other/model' })), 'conflict');
      expect((await store.getRun(id))?.model).toBe('openai/gpt-4o-mini');
    });

    it('answers not_found for a run it does not have', async () => {
      const store = await fresh();
      await expectCode(store.acquireLease('run_missing'), 'not_found');
      await expectCode(store.append('run_missing', 1, events('run_missing', 0, 2)), 'not_found');
      await expectCode(store.loadEvents('run_missing'), 'not_found');
      await expectCode(store.updateRun('run_missing', 1, { status: 'done' }), 'not_found');
    });

    it('appends batches in order and counts the events', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      await store.append(id, epoch, events(id, 0, 4));
      await store.append(id, epoch, events(id, 4, 1), { durability: 'full' });
      await store.append(id, epoch, events(id, 5, 10));
      expect(await store.loadEvents(id)).toEqual(json(events(id, 0, 15)));
      expect((await store.getRun(id))?.eventCount).toBe(15);
    });

    it('refuses a gap or an overlap in seq with conflict, writing nothing', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      await store.append(id, epoch, events(id, 0, 3));
      await expectCode(store.append(id, epoch, events(id, 4, 2)), 'conflict');
      await expectCode(store.append(id, epoch, events(id, 2, 2)), 'conflict');
      await expectCode(store.append(id, epoch, events(id, 0, 5)), 'conflict');
      expect(await store.loadEvents(id)).toEqual(json(events(id, 0, 3)));
      expect((await store.getRun(id))?.eventCount).toBe(3);
    });

    it('refuses a batch whose seqs do not follow each other, writing nothing', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      const batch = [...events(id, 0, 2), ...events(id, 3, 1)];
      await expectCode(store.append(id, epoch, batch), 'conflict');
      expect(await store.loadEvents(id)).toEqual([]);
    });

    it('refuses delta events and events of another run, writing nothing', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      await expectCode(store.append(id, epoch, [...events(id, 0, 1), delta(id, 1)]), 'store');
      await expectCode(store.append(id, epoch, events('run_other', 0, 2)), 'store');
      expect(await store.loadEvents(id)).toEqual([]);
      expect((await store.getRun(id))?.eventCount).toBe(0);
    });

    it('refuses the writes of a superseded lease with lease_lost, writing nothing', async () => {
      const store = await fresh();
      const { id, epoch: zombie } = await started(store);
      await store.append(id, zombie, events(id, 0, 2));
      const epoch = await store.acquireLease(id);
      expect(epoch).toBe(zombie + 1);
      expect((await store.getRun(id))?.leaseEpoch).toBe(epoch);
      await expectCode(store.append(id, zombie, events(id, 2, 2)), 'lease_lost');
      await expectCode(store.append(id, zombie, []), 'lease_lost');
      await expectCode(store.updateRun(id, zombie, { status: 'done', reason: 'final_answer' }), 'lease_lost');
      await store.append(id, epoch, events(id, 2, 2));
      await store.append(id, epoch, []);
      expect(await store.loadEvents(id)).toEqual(json(events(id, 0, 4)));
      expect((await store.getRun(id))?.status).toBe('running');
    });

    it('lets exactly one of two concurrent appenders store each seq, never interleaving them', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      for (let round = 0; round < 20; round++) {
        const seq = round * 3;
        const outcomes = await Promise.allSettled([
          store.append(id, epoch, events(id, seq, 3, 1)),
          store.append(id, epoch, events(id, seq, 3, 2)),
        ]);
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        const refused = outcomes.find((o) => o.status === 'rejected');
        expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict' });
      }
      const log = await store.loadEvents(id);
      expect(log.map((e) => e.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i));
      for (let seq = 0; seq < 60; seq += 3) {
        const writers = new Set(log.slice(seq, seq + 3).map(writerOf));
        expect(writers.size, `batch at seq ${seq} mixes writers`).toBe(1);
      }
    });

    it('refuses a zombie that races the new lease holder, whoever goes first', async () => {
      const store = await fresh();
      const { id, epoch: zombie } = await started(store);
      const epoch = await store.acquireLease(id);
      for (let round = 0; round < 10; round++) {
        const [old, current] = await Promise.allSettled([
          store.append(id, zombie, events(id, round * 2, 2, 1)),
          store.append(id, epoch, events(id, round * 2, 2, 2)),
        ]);
        expect(old.status === 'rejected' && (old.reason as { code: string }).code).toBe('lease_lost');
        expect(current.status).toBe('fulfilled');
      }
      expect((await store.loadEvents(id)).map(writerOf)).toEqual(Array(20).fill(2));
    });

    it('loads exactly what was appended, from any seq', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      const all = events(id, 0, 12);
      await store.append(id, epoch, all.slice(0, 5));
      await store.append(id, epoch, all.slice(5));
      expect(await store.loadEvents(id, 0)).toEqual(json(all));
      expect(await store.loadEvents(id, 7)).toEqual(json(all.slice(7)));
      expect(await store.loadEvents(id, 11)).toEqual(json(all.slice(11)));
      expect(await store.loadEvents(id, 12)).toEqual([]);
      expect(JSON.stringify(await store.loadEvents(id))).toBe(JSON.stringify(all));
    });

    it('keeps its log apart from the objects callers hold', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      const batch = events(id, 0, 3);
      await store.append(id, epoch, batch);
      (batch[2] as Extract<RunEvent, { type: 'tool_finished' }>).result.isError = true;
      const loaded = await store.loadEvents(id);
      (loaded[0] as Extract<RunEvent, { type: 'model_request' }>).attempt = 99;
      expect(await store.loadEvents(id)).toEqual(json(events(id, 0, 3)));
    });

    it('keeps a large payload out of the events row and loads it back whole', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      const big = toolFinished(id, 1, bigText(1024 * 1024));
      const image: RunEvent = {
        type: 'message_injected',
        step: 1,
        kind: 'steer',
        message: {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', data: Buffer.alloc(150_000, 7).toString('base64'), mimeType: 'image/png' },
          ],
        },
        runId: id,
        seq: 2,
        at: 1_700_000_000_002,
      };
      const batch = [...events(id, 0, 1), big, image, ...events(id, 3, 1)];
      await store.append(id, epoch, batch);
      expect(await store.loadEvents(id)).toEqual(json(batch));
      expect(await store.loadEvents(id, 2)).toEqual(json(batch.slice(2)));
      expect(await harness.inlineSize(store, id, 1)).toBe(0);
      expect(await harness.inlineSize(store, id, 2)).toBe(0);
      expect(await harness.inlineSize(store, id, 0)).toBe(JSON.stringify(batch[0]).length);
      expect(await harness.inlineSize(store, id, 3)).toBeGreaterThan(0);
    });

    it('keeps an event of exactly 64 Ki characters of JSON inline and one more character out', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      // The text's length is also in the event (details.bytes), so settle on it in two passes.
      const sized = (seq: number, target: number): RunEvent => {
        let n = target - JSON.stringify(toolFinished(id, seq, '')).length;
        n -= JSON.stringify(toolFinished(id, seq, 'a'.repeat(n))).length - target;
        return toolFinished(id, seq, 'a'.repeat(n));
      };
      const atLimit = sized(0, 64 * 1024);
      const over = sized(1, 64 * 1024 + 1);
      expect(JSON.stringify(atLimit).length).toBe(64 * 1024);
      expect(JSON.stringify(over).length).toBe(64 * 1024 + 1);
      await store.append(id, epoch, [atLimit, over]);
      expect(await harness.inlineSize(store, id, 0)).toBe(64 * 1024);
      expect(await harness.inlineSize(store, id, 1)).toBe(0);
      expect(await store.loadEvents(id)).toEqual(json([atLimit, over]));
    });

    it('lists runs newest first, by status, limited and paged with before', async () => {
      const store = await fresh();
      const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((l) => runId(`list_${l}`));
      const created = [5000, 1000, 3000, 3000, 7000, 2000, 6000];
      const statuses = ['done', 'failed', 'done', 'running', 'paused', 'done', 'failed'] as const;
      for (let i = 0; i < ids.length; i++) {
        await store.createRun(newRun(ids[i]!, { createdAt: created[i]! }));
        if (statuses[i] !== 'running') await store.updateRun(ids[i]!, 0, { status: statuses[i]!, reason: 'final_answer' });
      }
      // Newest first; the two runs created at 3000 in descending id order.
      const newest = [ids[4], ids[6], ids[0], ids[3], ids[2], ids[5], ids[1]];
      expect((await store.listRuns()).map((r) => r.id)).toEqual(newest);
      expect((await store.listRuns({ limit: 3 })).map((r) => r.id)).toEqual(newest.slice(0, 3));
      expect((await store.listRuns({ limit: 3, before: 5000 })).map((r) => r.id)).toEqual(newest.slice(3, 6));
      expect((await store.listRuns({ limit: 3, before: 2000 })).map((r) => r.id)).toEqual(newest.slice(6));
      expect((await store.listRuns({ status: 'done' })).map((r) => r.id)).toEqual([ids[0], ids[2], ids[5]]);
      expect((await store.listRuns({ status: 'done', limit: 1, before: 5000 })).map((r) => r.id)).toEqual([ids[2]]);
      expect((await store.listRuns({ status: 'running' })).map((r) => r.id)).toEqual([ids[3]]);
      expect(await store.listRuns({ limit: 0 })).toEqual([]);
      expect((await store.listRuns({ limit: 1 }))[0]).toEqual(await store.getRun(ids[4]!));
    });

    it('lists the runs a run started (its children, not theirs), with the other filters', async () => {
      const store = await fresh();
      const [root, a, b, grandchild, other] = ['root', 'a', 'b', 'g', 'other'].map((l) => runId(`tree_${l}`)) as [
        string,
        string,
        string,
        string,
        string,
      ];
      await store.createRun(newRun(root, { createdAt: 1000 }));
      await store.createRun(newRun(a, { parentRunId: root, createdAt: 2000 }));
      await store.createRun(newRun(b, { parentRunId: root, createdAt: 3000 }));
      await store.createRun(newRun(grandchild, { parentRunId: a, createdAt: 4000 }));
      await store.createRun(newRun(other, { createdAt: 5000 }));
      await store.updateRun(a, 0, { status: 'done', reason: 'final_answer' });
      expect((await store.listRuns({ parentRunId: root })).map((r) => r.id)).toEqual([b, a]);
      expect((await store.listRuns({ parentRunId: a })).map((r) => r.id)).toEqual([grandchild]);
      expect(await store.listRuns({ parentRunId: other })).toEqual([]);
      expect((await store.listRuns({ parentRunId: root, status: 'done' })).map((r) => r.id)).toEqual([a]);
      expect((await store.listRuns({ parentRunId: root, before: 3000, limit: 5 })).map((r) => r.id)).toEqual([a]);
      expect((await store.listRuns({ parentRunId: root, status: 'running', before: 9000, limit: 1 })).map((r) => r.id)).toEqual([b]);
    });

    it('updates status, reason and totals under the lease', async () => {
      const store = await fresh();
      const { id, epoch } = await started(store);
      const before = await store.getRun(id);
      await store.updateRun(id, epoch, { status: 'paused', reason: 'awaiting_approval', totals });
      const paused = await store.getRun(id);
      expect(paused).toMatchObject({ status: 'paused', reason: 'awaiting_approval', totals: json(totals), leaseEpoch: epoch });
      expect(paused!.updatedAt).toBeGreaterThanOrEqual(before!.updatedAt);
      // Back to running: the reason goes with the status; totals stay until new ones come.
      await store.updateRun(id, epoch, { status: 'running' });
      const running = await store.getRun(id);
      expect(running?.status).toBe('running');
      expect(running).not.toHaveProperty('reason');
      expect(running?.totals).toEqual(json(totals));
      await store.updateRun(id, epoch, { status: 'done', reason: 'final_answer', totals: { ...totals, steps: 4 } });
      expect(await store.getRun(id)).toMatchObject({ status: 'done', reason: 'final_answer', totals: { steps: 4 } });
    });

    it('drives many runs in parallel without mixing their logs', async () => {
      const store = await fresh();
      const ids = Array.from({ length: 25 }, () => runId('par'));
      await Promise.all(
        ids.map(async (id, n) => {
          const { epoch } = await started(store, id);
          for (let seq = 0; seq < 24; seq += 3) await store.append(id, epoch, events(id, seq, 3, n));
          await store.updateRun(id, epoch, { status: 'done', reason: 'final_answer', totals });
        }),
      );
      for (const [n, id] of ids.entries()) expect(await store.loadEvents(id)).toEqual(json(events(id, 0, 24, n)));
      const done = await store.listRuns({ status: 'done' });
      expect(done.map((r) => r.id).sort()).toEqual([...ids].sort());
      expect(done.every((r) => r.eventCount === 24)).toBe(true);
    });

    it('refuses work once closed', async () => {
      const store = await fresh();
      await store.close();
      await expectCode(store.getRun('run_x'), 'store');
      await expectCode(store.createRun(newRun(runId())), 'store');
      await store.close();
    });

    // Only stores that persist can be closed and opened again (not the in-memory run store).
    if (harness.reopen) {
      it('keeps everything across close and reopen', async () => {
        const store = await fresh();
        const { id, epoch } = await started(store);
        const batch = [...events(id, 0, 3), toolFinished(id, 3, bigText(200_000))];
        await store.append(id, epoch, batch, { durability: 'full' });
        await store.updateRun(id, epoch, { status: 'failed', reason: 'fatal_error', totals });
        const record = await store.getRun(id);
        await store.close();
        const again = await reopen();
        expect(await again.getRun(id)).toEqual(record);
        expect(await again.loadEvents(id)).toEqual(json(batch));
        expect(await again.acquireLease(id)).toBe(epoch + 1);
      });

      it('shares runs with a second instance, which respects the lease', async () => {
        const first = await fresh();
        const { id, epoch: zombie } = await started(first);
        await first.append(id, zombie, events(id, 0, 2));
        const second = await reopen();
        expect((await second.loadEvents(id)).length).toBe(2);
        const epoch = await second.acquireLease(id);
        await expectCode(first.append(id, zombie, events(id, 2, 2)), 'lease_lost');
        await second.append(id, epoch, events(id, 2, 2));
        expect(await first.loadEvents(id)).toEqual(json(events(id, 0, 4)));
        await expectCode(first.createRun(newRun(id)), 'conflict');
      });
    }
  });
}
