// A tree of runs killed with SIGKILL at random points — a lead run whose `worker` tool is a
// sub-agent with the effect tools — and resumed from the root in fresh processes: every run
// of the tree holds the crash test's invariants after every kill and at the end, no call
// whose end was durable (of the lead or of the child) runs again, the child is resumed
// from its own log, and the tree ends like its crash-free twin. Runs the built code (dist/).
// Seeded: REIN_CRASH_SEED=<seed> replays the same kills. Registered by crash.test.ts, so
// the two crash tests run one after the other, never competing for the machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startScriptedServer, type ScriptRequest, type ScriptTurn, type ScriptedServer } from '../../src/testing/index.js';
import type { Message } from '../../src/model/types.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { SqliteDriverName } from '../../src/store/sqlite-driver.js';
import {
  callIds,
  checkLog,
  openCalls,
  reapChildren,
  runChild,
  snapshot,
  transcript,
  type Calls,
  type Snapshot,
  type Step,
  CRASH_TURNS,
} from './harness.js';

const seed = Number(process.env.REIN_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MIN_KILLS = 30;
const BUDGET_MS = 45_000;
const CONCURRENCY = 3;

const usage = { prompt_tokens: 10, completion_tokens: 5 };
// The child's turns are the crash test's: 8 calls over 3 turns, then its answer.
const WORKER_TURNS = CRASH_TURNS;
function answer(request: ScriptRequest): ScriptTurn {
  const turn = request.messages.filter((m) => m.role === 'assistant').length;
  if (request.model === 'lead') {
    // The lead hands the work to its sub-agent beside a call of its own, then answers.
    if (turn === 0)
      return {
        toolCalls: [
          { name: 'worker', arguments: { task: 'do the four things' }, id: 'lead_0_0' },
          { name: 'do_idempotent', arguments: { n: 9 }, id: 'lead_0_1' },
        ],
        usage,
      };
    if (turn === 1) return { toolCalls: [{ name: 'do_idempotent', arguments: { n: 10 }, id: 'lead_1_0' }], usage };
    return { text: 'lead done', usage };
  }
  const calls = WORKER_TURNS[turn];
  if (!calls) return { text: 'all done', usage };
  return { toolCalls: calls.map(([name, n], i) => ({ name, arguments: { n }, id: `call_${turn}_${i}` })), usage };
}

function mulberry32(a: number): () => number {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = mulberry32(seed);

let dir = '';
let server: ScriptedServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rein-crash-tree-'));
  server = await startScriptedServer({ script: answer, recordRequests: false, tokenDelayMs: 1 });
});
afterAll(async () => {
  await reapChildren();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The ids of the runs of the tree under `rootId` (itself first), read from the file. */
async function treeIds(db: string, rootId: string, driver: SqliteDriverName): Promise<string[]> {
  const store = new SqliteStore({ path: db, driver });
  try {
    const all = await store.listRuns();
    const out: string[] = [];
    const visit = (id: string): void => {
      out.push(id);
      for (const run of all.filter((r) => r.parentRunId === id).sort((a, b) => a.id.localeCompare(b.id))) visit(run.id);
    };
    if (all.some((r) => r.id === rootId)) visit(rootId);
    return out;
  } finally {
    await store.close();
  }
}

interface TreeState {
  runs: Array<{ id: string; s: Snapshot; calls: Calls }>;
}

/** Every run of the tree, checked with the crash test's invariants. */
async function checkTree(db: string, rootId: string, driver: SqliteDriverName, where: string): Promise<TreeState> {
  const runs: TreeState['runs'] = [];
  for (const id of await treeIds(db, rootId, driver)) {
    const s = await snapshot(db, id, driver);
    runs.push({ id, s, calls: checkLog(s, `${where}, run ${id}`) });
  }
  return { runs };
}

interface Outcome {
  kills: number;
  /** Kills that came while the child run was started and not yet ended. */
  inChild: number;
  rootTranscript: Message[];
  childText: string;
  /** How long the process that finished the tree took, from `ready`. */
  ms: number;
}

async function treeScenario(driver: SqliteDriverName, index: number, steps: Step[], twin: Outcome | undefined): Promise<Outcome> {
  const db = join(dir, `${driver.replace(/\W/g, '')}-t${index}.db`);
  let rootId = `tree_${index}`;
  let mode: 'run' | 'resume' = 'run';
  let kills = 0;
  let inChild = 0;
  const label = `tree scenario ${index} (${JSON.stringify(steps)})`;
  // Executions, by key, of every call whose end was durable: none may run again.
  const finishedRuns = new Map<string, number>();
  // Unsafe calls open when a process died: they end as `unknown`.
  const cutOff = new Set<string>();
  // The events of the child once the lead's worker call had ended: the child never runs again.
  let childAtEnd: { id: string; events: number } | undefined;
  let ms = 0;
  for (let p = 0; ; p++) {
    expect(p, `${label} did not finish within ${steps.length + 3} processes`).toBeLessThan(steps.length + 3);
    const step = steps[p] ?? {};
    const exit = await runChild({ mode, db, runId: rootId, model: server.model(), leadModel: server.model('lead'), driver }, step);
    if (!exit.killed) {
      expect(exit.result, `${label}: the tree's result`).toMatchObject({ status: 'done', reason: 'final_answer' });
      ms = exit.result?.ms ?? 0;
      break;
    }
    kills++;
    const where = `${label}, after kill ${kills}`;
    const tree = await checkTree(db, rootId, driver, where);
    for (const { s, calls } of tree.runs) {
      for (const id of openCalls(calls, 'do_unsafe')) cutOff.add(id);
      for (const [id, key] of calls.key) {
        if (!calls.finished.has(id)) continue;
        const before = finishedRuns.get(key);
        const now = s.executions.get(key) ?? 0;
        if (before !== undefined) expect(now, `${where}: ${id} ran again after its tool_finished was durable`).toBe(before);
        finishedRuns.set(key, now);
      }
    }
    const root = tree.runs[0];
    const child = tree.runs.at(-1);
    if (child && child !== root && child.s.events.length > 0 && child.s.events.at(-1)?.type !== 'run_finished') inChild++;
    if (root && child && child.id !== root.id && [...root.calls.finished.values()].some((e) => e.name === 'worker')) {
      if (childAtEnd) expect(child.s.events.length, `${where}: the child ran after the lead's call ended`).toBe(childAtEnd.events);
      childAtEnd = { id: child.id, events: child.s.events.length };
    }
    if (!root || root.s.events.length === 0) {
      // The root never began: nothing may have run; it is started again.
      expect(tree.runs.length, `${where}: children of a root that never began`).toBeLessThanOrEqual(1);
      rootId = `${rootId}_again`;
      mode = 'run';
      continue;
    }
    if (root.s.record?.status === 'done') break;
    mode = 'resume';
  }
  const where = `${label}, at the end`;
  const tree = await checkTree(db, rootId, driver, where);
  const root = tree.runs[0]!;
  expect(root.s.events.at(-1), `${where}: the root's last event`).toMatchObject({
    type: 'run_finished',
    status: 'done',
    reason: 'final_answer',
  });
  // Children: the one that ran (and one that never began, when a kill came between its record and its first event).
  const ran = tree.runs.slice(1).filter((r) => r.s.events.length > 0);
  expect(ran, `${where}: children that ran`).toHaveLength(1);
  const child = ran[0]!;
  expect(child.s.events.at(-1), `${where}: the child's last event`).toMatchObject({
    type: 'run_finished',
    status: 'done',
    reason: 'final_answer',
  });
  expect(child.s.events[0], `${where}: the child's first event`).toMatchObject({
    type: 'run_started',
    parentRunId: rootId,
    parentToolCallId: 'lead_0_0',
    depth: 1,
  });
  // Every call of both runs ended once, with the effects their class allows.
  for (const { id: runId, s, calls } of [root, child]) {
    const ids = callIds(transcript(s.events));
    for (const id of ids) {
      const finished = calls.finished.get(id);
      const name = calls.name.get(id);
      const key = calls.key.get(id) as string;
      expect(finished, `${where}: tool_finished of ${id} in ${runId}`).toBeDefined();
      const applied = s.applied.get(key) ?? 0;
      const executed = s.executions.get(key) ?? 0;
      if (name === 'do_idempotent' || name === 'do_reconcilable') expect(applied, `${where}: ${id} (${name}) applied once`).toBe(1);
      else if (name === 'do_unsafe') {
        expect(applied, `${where}: ${id} (unsafe) applied at most once`).toBeLessThanOrEqual(1);
        if (cutOff.has(id)) expect(finished).toMatchObject({ outcome: 'unknown' });
        else expect(applied, `${where}: ${id} (unsafe) applied`).toBe(1);
      } else if (name === 'do_pure') expect(executed).toBeGreaterThanOrEqual(1);
      else expect(name).toBe('worker');
    }
  }
  // The lead's totals hold the child's usage: 3 turns of its own and 4 of the child, 15 tokens each.
  expect(root.s.record?.totals?.usage.total, `${where}: the tree's tokens in the root's totals`).toBe(7 * 15);
  const rootTranscript = transcript(root.s.events).map((m) => (m.role === 'tool' ? { ...m, details: undefined } : m));
  const childText = (child.s.events.at(-1) as { result: { text: string } }).result.text;
  if (twin) {
    expect(rootTranscript, `${where}: the root's transcript of the crash-free twin`).toEqual(twin.rootTranscript);
    expect(childText).toBe(twin.childText);
  }
  for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  return { kills, inChild, rootTranscript, childText, ms };
}

/** The tree crash test on `driver`, inside the caller's describe. */
export function treeCrashTest(driver: SqliteDriverName): void {
  it('a tree of runs (a lead with a sub-agent) killed at random points (at least 30 kills) and resumed from the root: every run of the tree holds the invariants and the tree ends like its twin', {
    timeout: 180_000,
  }, async () => {
    const began = Date.now();
    let kills = 0;
    let inChild = 0;
    let done = 0;
    try {
      const twin = await treeScenario(driver, 0, [], undefined);
      expect(twin.kills).toBe(0);
      // The crash-free tree's time from `ready` aims the random kills over the whole run.
      const at = (): Step => ({ killAfterMs: Math.floor(random() * twin.ms) });
      const queue: Step[][] = [];
      for (let i = 0; i < 24; i++) queue.push(i % 3 === 2 ? [at(), at()] : [at()]);
      // Named points by hit: the tools' effects and ends (8 of the child's 10 calls, the
      // lead's 2), and the appends of both runs (one process counts them all).
      for (let hit = 1; hit <= 10; hit++)
        queue.push(
          [{ crashAt: `after-tool-effect:${hit}` }],
          [{ crashAt: `after-tool-finished:${hit}` }],
          [{ crashAt: `before-tool-execute:${hit}` }],
        );
      for (let hit = 1; hit <= 16; hit += 3) queue.push([{ crashAt: `after-append:${hit}` }], [{ crashAt: `inside-append:${hit}` }]);
      // A resume killed while it resolves what the first process left open, in the child.
      for (let hit = 1; hit <= 4; hit++) queue.push([{ crashAt: `after-tool-effect:${hit}` }, { crashAt: 'before-resume-call:1' }]);
      for (let i = queue.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [queue[i], queue[j]] = [queue[j] as Step[], queue[i] as Step[]];
      }
      let index = 1;
      let failed = false;
      const worker = async (): Promise<void> => {
        for (let steps = queue.shift(); steps && !failed; steps = queue.shift()) {
          if (kills >= MIN_KILLS && Date.now() - began > BUDGET_MS) return;
          const outcome = await treeScenario(driver, index++, steps, twin);
          kills += outcome.kills;
          inChild += outcome.inChild;
          done++;
        }
      };
      const settled = await Promise.allSettled(
        Array.from({ length: CONCURRENCY }, () =>
          worker().catch((error: unknown) => {
            failed = true;
            throw error;
          }),
        ),
      );
      for (const s of settled) if (s.status === 'rejected') throw s.reason;
    } catch (error) {
      await reapChildren();
      throw new Error(`tree crash test (REIN_CRASH_SEED=${seed}): ${(error as Error).message}`, { cause: error });
    }
    console.log(
      `tree crash test on ${driver} (REIN_CRASH_SEED=${seed}): ${kills} kills (${inChild} while the child worked) in ${done} scenarios, ${((Date.now() - began) / 1000).toFixed(1)} s`,
    );
    expect(kills).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(inChild, 'kills while the child worked').toBeGreaterThanOrEqual(10);
  });
}
