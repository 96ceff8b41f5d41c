// Runs killed with SIGKILL — at every named crash point and at random moments — and resumed
// in fresh processes end exactly like a run that never crashed. The children run the built
// code (dist/, which `npm test` builds first). Seeded: a failure prints its seed, and
// REIN_CRASH_SEED=<seed> replays the same scenarios, delays and order.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer, type ScriptTurn, type ScriptedServer } from '../../src/testing/index.js';
import type { Message } from '../../src/model/types.js';
import type { SqliteDriverName } from '../../src/store/sqlite-driver.js';
import { drivers } from '../store/sqlite-drivers.js';
import { treeCrashTest } from './tree-scenarios.js';
import {
  callIds,
  checkApprovals,
  checkLog,
  openCalls,
  reapChildren,
  runChild,
  snapshot,
  transcript,
  type ChildResult,
  type Step,
  CRASH_TURNS,
} from './harness.js';

const seed = Number(process.env.REIN_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** No new scenario starts after this (once enough kills are done); the test asserts at least MIN_KILLS. */
const BUDGET_MS = 60_000;
const MIN_KILLS = 50;
const CONCURRENCY = 3;

// The model's turns depend only on how many answers the history holds, so a request asked
// again after a crash gets the same answer, and the tool results (an `unknown` outcome's
// text included) never change what it says next. Usage is fixed so it is not estimated from
// the request.
const usage = { prompt_tokens: 10, completion_tokens: 5 };
const TURNS = CRASH_TURNS;
const TOOL_CALLS = TURNS.flat().length;
// The approval-gated run (input 'do the gated things'): the `gated` tool waits for a person.
const GATED_TURNS: Array<Array<[tool: string, n: number]>> = [
  [
    ['do_pure', 1],
    ['gated', 2],
  ],
  [
    ['gated', 3],
    ['do_idempotent', 4],
    ['gated', 5],
  ],
];
function answer(request: { messages: Array<{ role: string; content?: unknown }> }): ScriptTurn {
  const turn = request.messages.filter((m) => m.role === 'assistant').length;
  const gated = request.messages.find((m) => m.role === 'user')?.content === 'do the gated things';
  const calls = (gated ? GATED_TURNS : TURNS)[turn];
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
const pick = (n: number): number => 1 + Math.floor(random() * n);

let dir = '';
let server: ScriptedServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rein-crash-'));
  server = await startScriptedServer({ script: answer, recordRequests: false, tokenDelayMs: 1 });
});
afterAll(async () => {
  await reapChildren();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What a scenario did: its kills (by point), the outcomes of resolved calls, its final transcript. */
interface ScenarioOutcome {
  kills: number;
  killedAt: string[];
  outcomes: string[];
  transcript: Message[];
  /** What the process that finished the run printed. */
  last: ChildResult;
}

interface Twin {
  transcript: Message[];
  appends: number;
  ms: number;
}

/**
 * One scenario: a run whose processes die as `steps` say, each resumed in a fresh process
 * (then resumed cleanly until it ends), checked after every kill and at the end against the
 * crash-free twin (none for the twin itself).
 */
async function scenario(driver: SqliteDriverName, index: number, steps: Step[], twin: Twin | undefined): Promise<ScenarioOutcome> {
  const db = join(dir, `${tag(driver)}-s${index}.db`);
  let runId = `run_${index}`;
  let mode: 'run' | 'resume' = 'run';
  let kills = 0;
  const killedAt: string[] = [];
  let result: ChildResult | undefined;
  // Unsafe calls that were open (started, not finished, durably) when a process died.
  const cutOff = new Set<string>();
  let finishedBefore = 0;
  for (let p = 0; ; p++) {
    expect(p, `scenario ${index} did not finish within ${steps.length + 3} processes`).toBeLessThan(steps.length + 3);
    const step = steps[p] ?? {};
    const exit = await runChild({ mode, db, runId, model: server.model(), driver }, step);
    if (!exit.killed) {
      result = exit.result;
      expect(result, `scenario ${index}: the run's result`).toMatchObject({ status: 'done', reason: 'final_answer' });
      break;
    }
    kills++;
    killedAt.push(step.crashAt?.replace(/:\d+$/, '') ?? 'random');
    const where = `scenario ${index} (${JSON.stringify(steps)}), after kill ${kills}`;
    const s = await snapshot(db, runId, driver);
    const calls = checkLog(s, where);
    for (const id of openCalls(calls, 'do_unsafe')) cutOff.add(id);
    // Killed just after its k-th tool_finished was durable: k more are in the log.
    const k = /^after-tool-finished:(\d+)$/.exec(step.crashAt ?? '')?.[1];
    if (k !== undefined)
      expect(calls.finished.size, `${where}: tool_finished events durable`).toBeGreaterThanOrEqual(finishedBefore + Number(k));
    finishedBefore = calls.finished.size;
    if (s.events.length === 0) {
      // Killed before run_started was durable: the run never began (no effect may have
      // happened), and its input is not stored, so it cannot be resumed: it is started again.
      expect(s.executions.size + s.applied.size, `${where}: effects of a run that never began`).toBe(0);
      runId = `${runId}_again`;
      mode = 'run';
      continue;
    }
    if (s.record?.status === 'done') break;
    mode = 'resume';
  }
  const s = await snapshot(db, runId, driver);
  const where = `scenario ${index} (${JSON.stringify(steps)}), at the end`;
  const calls = checkLog(s, where);
  const last = s.events.at(-1);
  expect(last, `${where}: last event`).toMatchObject({ type: 'run_finished', status: 'done', reason: 'final_answer' });
  expect(s.record, `${where}: record`).toMatchObject({ status: 'done', reason: 'final_answer' });

  const final = transcript(s.events);
  const ids = callIds(final);
  expect(ids, `${where}: the calls`).toHaveLength(TOOL_CALLS);
  const unknown = ids.filter((id) => calls.finished.get(id)?.outcome === 'unknown');
  expect(new Set(unknown), `${where}: the unsafe calls cut off mid-way, and only those, end as unknown`).toEqual(cutOff);
  const keys = new Set(calls.key.values());
  for (const id of ids) {
    const finished = calls.finished.get(id);
    const name = calls.name.get(id);
    const key = calls.key.get(id) as string;
    expect(finished, `${where}: tool_finished of ${id}`).toBeDefined();
    const applied = s.applied.get(key) ?? 0;
    const executed = s.executions.get(key) ?? 0;
    if (name === 'do_pure') {
      expect(executed, `${where}: ${id} (pure) ran`).toBeGreaterThanOrEqual(1);
      if (kills === 0) expect(executed, `${where}: ${id} (pure) ran once without a crash`).toBe(1);
    } else if (name === 'do_idempotent' || name === 'do_reconcilable') {
      expect(applied, `${where}: ${id} (${name}) applied once for key ${key}`).toBe(1);
    } else {
      expect(name).toBe('do_unsafe');
      expect(executed, `${where}: ${id} (unsafe) ran at most once`).toBeLessThanOrEqual(1);
      expect(applied, `${where}: ${id} (unsafe) applied at most once`).toBeLessThanOrEqual(1);
      if (cutOff.has(id)) expect(finished).toMatchObject({ outcome: 'unknown', errorCode: 'unknown_outcome', result: { isError: true } });
      else expect(applied, `${where}: ${id} (unsafe) applied, not cut off`).toBe(1);
    }
    if (finished?.outcome === 'reconciled') expect(name, `${where}: reconciled ${id}`).toBe('do_reconcilable');
  }
  for (const key of [...s.applied.keys(), ...s.executions.keys()])
    expect(keys.has(key), `${where}: an effect under a key no call of the run has: ${key}`).toBe(true);

  if (twin) {
    // The same transcript as the twin's, an unknown outcome standing for the result it replaced.
    const expected = twin.transcript.map((m, i) => (m.role === 'tool' && unknown.includes(m.toolCallId) ? final[i] : m));
    expect(final, `${where}: the transcript of the crash-free twin`).toEqual(expected);
  }
  rmSync(db, { force: true });
  rmSync(`${db}-wal`, { force: true });
  rmSync(`${db}-shm`, { force: true });
  const outcomes = ids.flatMap((id) => calls.finished.get(id)?.outcome ?? []);
  return {
    kills,
    killedAt,
    outcomes,
    transcript: final,
    last: result ?? { status: 'done', reason: 'final_answer', ms: 0, appends: 0, executions: 0 },
  };
}

interface GatedTwin {
  transcript: Message[];
  /** Appends of each process of the crash-free run (run, approve, approve). */
  appends: number[];
  ms: number;
}

/**
 * One approval-gated scenario: the run pauses at each batch with a gated call; a process
 * that ended paused is followed by one that approves (agent.approve), a killed one by a
 * resume. `steps[p]` kills the p-th process, whatever it does. Checked after every kill
 * and at the end: no gated tool runs (nor starts) before an approving decision is logged
 * ahead of its tool_started, one request and one decision per gated call, and the end is
 * the crash-free twin's.
 */
async function gatedScenario(
  driver: SqliteDriverName,
  index: number,
  steps: Step[],
  twin: GatedTwin | undefined,
): Promise<ScenarioOutcome & { processes: ChildResult[] }> {
  const db = join(dir, `${tag(driver)}-g${index}.db`);
  let runId = `gated_${index}`;
  let mode: 'run' | 'resume' | 'approve' = 'run';
  let kills = 0;
  const killedAt: string[] = [];
  const processes: ChildResult[] = [];
  const label = `gated scenario ${index} (${JSON.stringify(steps)})`;
  for (let p = 0; ; p++) {
    expect(p, `${label} did not finish within ${2 * steps.length + 4} processes`).toBeLessThan(2 * steps.length + 4);
    const step = steps[p] ?? {};
    const exit = await runChild({ mode, db, runId, model: server.model(), gated: true, driver }, step);
    if (!exit.killed) {
      const result = exit.result as ChildResult;
      processes.push(result);
      if (result.status === 'done') {
        expect(result, `${label}: the run's result`).toMatchObject({ status: 'done', reason: 'final_answer' });
        break;
      }
      expect(result, `${label}: a ${mode} that did not finish the run`).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
      const s = await snapshot(db, runId, driver);
      checkApprovals(s, checkLog(s, `${label}, paused`), `${label}, paused`);
      mode = 'approve';
      continue;
    }
    kills++;
    killedAt.push(step.crashAt?.replace(/:\d+$/, '') ?? 'random');
    const where = `${label}, after kill ${kills} (of a ${mode})`;
    const s = await snapshot(db, runId, driver);
    checkApprovals(s, checkLog(s, where), where);
    if (s.events.length === 0) {
      expect(s.executions.size + s.applied.size, `${where}: effects of a run that never began`).toBe(0);
      runId = `${runId}_again`;
      mode = 'run';
      continue;
    }
    if (s.record?.status === 'done') break;
    mode = 'resume';
  }
  const s = await snapshot(db, runId, driver);
  const where = `${label}, at the end`;
  const calls = checkLog(s, where);
  const decided = checkApprovals(s, calls, where);
  expect(s.events.at(-1), `${where}: last event`).toMatchObject({ type: 'run_finished', status: 'done', reason: 'final_answer' });
  expect(s.record, `${where}: record`).toMatchObject({ status: 'done', reason: 'final_answer' });
  const final = transcript(s.events);
  const ids = callIds(final);
  expect(ids, `${where}: the calls`).toHaveLength(GATED_TURNS.flat().length);
  for (const id of ids) {
    const name = calls.name.get(id);
    const key = calls.key.get(id) as string;
    expect(calls.finished.get(id), `${where}: tool_finished of ${id}`).toMatchObject({ result: { isError: false } });
    if (name === 'gated') {
      expect(decided.get(id), `${where}: one approving decision of ${id}`).toMatchObject([{ approved: true }]);
      expect(s.applied.get(key), `${where}: ${id} (gated) applied once`).toBe(1);
    } else {
      expect(decided.has(id), `${where}: a decision on ungated ${id}`).toBe(false);
      if (name === 'do_idempotent') expect(s.applied.get(key), `${where}: ${id} applied once`).toBe(1);
      else expect(s.executions.get(key) ?? 0, `${where}: ${id} (pure) ran`).toBeGreaterThanOrEqual(1);
    }
  }
  const keys = new Set(calls.key.values());
  for (const key of [...s.applied.keys(), ...s.executions.keys()])
    expect(keys.has(key), `${where}: an effect under a key no call of the run has: ${key}`).toBe(true);
  if (twin) expect(final, `${where}: the transcript of the crash-free twin`).toEqual(twin.transcript);
  for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  const outcomes = ids.flatMap((id) => calls.finished.get(id)?.outcome ?? []);
  return { kills, killedAt, outcomes, transcript: final, last: processes.at(-1) as ChildResult, processes };
}

/** The gated scenarios: kills around the pause, around and after the approval, and at random moments. */
function gatedScenarios(twin: GatedTwin): Step[][] {
  const [a0 = 1, a1 = 1] = twin.appends;
  const at = (): Step => ({ killAfterMs: Math.floor(random() * twin.ms * 1.3) });
  return [
    // The run, around the append that makes its pause durable.
    ...['before-append', 'after-append', 'inside-append'].map((point) => [{ crashAt: `${point}:${a0}` }]),
    // The first approve: around its decision's append, before and after the gated tool ran, later.
    ...['before-append', 'after-append', 'inside-append'].map((point) => [{}, { crashAt: `${point}:1` }]),
    [{}, { crashAt: 'before-tool-execute:2' }],
    [{}, { crashAt: `after-tool-effect:${pick(2)}` }],
    [{}, { crashAt: `after-append:${1 + pick(a1 - 1)}` }],
    // The second approve (two gated calls decided in one append).
    [{}, {}, { crashAt: 'after-append:1' }],
    [{}, {}, { crashAt: `before-tool-execute:${pick(3)}` }],
    [{}, {}, { crashAt: `after-tool-effect:${pick(3)}` }],
    [at(), at(), at()],
    [at(), at(), at()],
  ];
}

/** Every targeted point × its hits, kills of the resuming process too, and random-time kills. */
function scenarios(twin: Twin): Step[][] {
  const list: Step[][] = [];
  for (const point of ['before-append', 'after-append', 'inside-append']) {
    for (let hit = 1; hit <= twin.appends; hit++) {
      list.push([{ crashAt: `${point}:${hit}` }]);
    }
  }
  for (const point of ['before-tool-execute', 'after-tool-effect', 'after-tool-finished'])
    for (let hit = 1; hit <= TOOL_CALLS; hit++) list.push([{ crashAt: `${point}:${hit}` }]);
  // A resume killed while it resolves the batch the first process left open.
  for (let i = 0; i < 3; i++) {
    list.push([{ crashAt: `after-tool-effect:${pick(TOOL_CALLS)}` }, { crashAt: 'before-resume-call:1' }]);
    list.push([{ crashAt: `before-tool-execute:${pick(TOOL_CALLS)}` }, { crashAt: `inside-append:${pick(3)}` }]);
    list.push([
      { crashAt: `after-tool-effect:${pick(TOOL_CALLS)}` },
      { crashAt: 'after-tool-effect:1' },
      { crashAt: 'before-resume-call:2' },
    ]);
  }
  // Random moments, over the whole run (the twin's duration, from `ready`), once or twice in a row.
  const at = (): Step => ({ killAfterMs: Math.floor(random() * twin.ms * 1.3) });
  for (let i = 0; i < 16; i++) list.push(i % 4 === 3 ? [at(), at()] : [at()]);
  // Seeded shuffle, so a deadline cuts a different but reproducible selection.
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [list[i], list[j]] = [list[j] as Step[], list[i] as Step[]];
  }
  return list;
}

const tally = (counts: Map<string, number>): string =>
  [...counts]
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

/** The crash-free twin, run once per driver and shared. */
const twinRuns = new Map<SqliteDriverName, Promise<Twin>>();
function twinOnce(driver: SqliteDriverName): Promise<Twin> {
  let twinRun = twinRuns.get(driver);
  if (twinRun) return twinRun;
  twinRun = scenario(driver, 0, [], undefined).then((first) => {
    expect(first.kills).toBe(0);
    expect(first.last.executions, 'the twin runs every call once').toBe(TOOL_CALLS);
    return { transcript: first.transcript, appends: first.last.appends, ms: first.last.ms };
  });
  twinRuns.set(driver, twinRun);
  return twinRun;
}

const gatedTwinRuns = new Map<SqliteDriverName, Promise<GatedTwin>>();
function gatedTwinOnce(driver: SqliteDriverName): Promise<GatedTwin> {
  let gatedTwinRun = gatedTwinRuns.get(driver);
  if (gatedTwinRun) return gatedTwinRun;
  gatedTwinRun = gatedScenario(driver, 0, [], undefined).then((first) => {
    expect(first.kills).toBe(0);
    expect(
      first.processes.map((p) => p.status),
      'the gated twin pauses twice',
    ).toEqual(['paused', 'paused', 'done']);
    expect(first.processes[0]!.executions, 'nothing runs before the first approval').toBe(0);
    return {
      transcript: first.transcript,
      appends: first.processes.map((p) => p.appends),
      ms: Math.max(...first.processes.map((p) => p.ms)),
    };
  });
  gatedTwinRuns.set(driver, gatedTwinRun);
  return gatedTwinRun;
}

/** A driver's name fit for a file name. */
const tag = (driver: SqliteDriverName): string => driver.replace(/\W/g, '');

for (const driver of drivers) {
  describe(`on ${driver}`, () => {
    it('runs killed at every crash point and at random moments end like their crash-free twin', { timeout: 180_000 }, async () => {
      expect(
        existsSync(fileURLToPath(new URL('../../dist/loop/crash-points.js', import.meta.url))),
        'dist/ is missing: run `npm run build` (npm test does)',
      ).toBe(true);
      const began = Date.now();
      let kills = 0;
      let done = 0;
      const reached = new Map<string, number>();
      const resolved = new Map<string, number>();
      let gatedKills = 0;
      let gatedDone = 0;
      try {
        const [twin, gatedTwin] = await Promise.all([twinOnce(driver), gatedTwinOnce(driver)]);
        // The gated scenarios first, so the deadline never cuts them.
        const queue = [
          ...gatedScenarios(gatedTwin).map((steps, i) => ({ steps, index: i + 1, gated: true })),
          ...scenarios(twin).map((steps, i) => ({ steps, index: i + 1, gated: false })),
        ];
        let failed = false;
        const worker = async (): Promise<void> => {
          for (let next = queue.shift(); next && !failed; next = queue.shift()) {
            if (Date.now() - began > BUDGET_MS && kills >= MIN_KILLS) return;
            const outcome = next.gated
              ? await gatedScenario(driver, next.index, next.steps, gatedTwin)
              : await scenario(driver, next.index, next.steps, twin);
            kills += outcome.kills;
            done++;
            if (next.gated) {
              gatedKills += outcome.kills;
              gatedDone++;
            }
            for (const point of outcome.killedAt) reached.set(point, (reached.get(point) ?? 0) + 1);
            for (const kind of outcome.outcomes) resolved.set(kind, (resolved.get(kind) ?? 0) + 1);
          }
        };
        // On a failure the other workers stop after their current scenario, before the temp
        // folder goes: nothing is left running or written after the test.
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
        throw new Error(`crash test (REIN_CRASH_SEED=${seed}): ${(error as Error).message}`, { cause: error });
      }
      const seconds = ((Date.now() - began) / 1000).toFixed(1);
      console.log(
        `crash test on ${driver} (REIN_CRASH_SEED=${seed}): ${kills} kills in ${done} scenarios, ${seconds} s; kills by point: ${tally(reached)}; calls resolved on resume: ${tally(resolved)}; approval-gated: ${gatedKills} kills in ${gatedDone} scenarios`,
      );
      expect(kills).toBeGreaterThanOrEqual(MIN_KILLS);
    });

    // A process killed after its run_finished is durable but before the run's record says
    // `done`: resume finishes the record from the log and runs nothing again.
    it('a run killed after its run_finished is durable is not run again on resume', { timeout: 60_000 }, async () => {
      const twin = await twinOnce(driver);
      await scenario(driver, 1000, [{ crashAt: `after-append:${twin.appends}` }], twin);
    });

    // A parent with a sub-agent, killed at random points (tree-scenarios.ts).
    treeCrashTest(driver);
  });
}
