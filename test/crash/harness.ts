/**
 * The crash test's machinery: spawning the child (test/crash/child.mjs) and killing it,
 * reading a run's log and the tools' effect tables back, and the invariants a log must hold
 * after every kill and at the end of a run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { messagesFromEvents } from '../../src/loop/fold.js';
import type { Message, ModelRef, ToolCall } from '../../src/model/types.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { SqliteDriverName } from '../../src/store/sqlite-driver.js';
import { openSqliteFile } from '../../src/store/sqlite-file.js';
import type { RunRecord } from '../../src/store/types.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const childPath = fileURLToPath(new URL('./child.mjs', import.meta.url));
const dist = pathToFileURL(`${root}dist/`).href;

/** How one process of a scenario dies: at an armed crash point, after a delay, or not at all. */
export interface Step {
  crashAt?: string;
  killAfterMs?: number;
}

/** What the child printed when it ended on its own. */
export interface ChildResult {
  status: string;
  reason: string;
  error?: unknown;
  ms: number;
  appends: number;
  executions: number;
}

export interface ChildExit {
  killed: boolean;
  result?: ChildResult;
  code: number | null;
  stderr: string;
}

/**
 * The crash test's model turns: 8 calls of every effect over 3 turns, then the answer. They
 * depend only on how many answers the history holds, so a request asked again after a crash
 * gets the same answer.
 */
export const CRASH_TURNS: ReadonlyArray<ReadonlyArray<[tool: string, n: number]>> = [
  [
    ['do_pure', 1],
    ['do_idempotent', 2],
  ],
  [
    ['do_reconcilable', 3],
    ['do_unsafe', 4],
  ],
  [
    ['do_unsafe', 5],
    ['do_pure', 6],
    ['do_idempotent', 7],
    ['do_reconcilable', 8],
  ],
];

const live = new Set<ChildProcess>();

/** Runs (or resumes) `runId` in a fresh process, dying as `step` says. Rejects if it hangs for `hangMs`. */
export function runChild(
  cfg: {
    mode: 'run' | 'resume' | 'approve';
    db: string;
    runId: string;
    model: ModelRef;
    gated?: boolean;
    leadModel?: ModelRef;
    driver: SqliteDriverName;
  },
  step: Step = {},
  hangMs = 30_000,
): Promise<ChildExit> {
  const env = { ...process.env };
  delete env.REIN_CRASH_AT;
  if (step.crashAt) env.REIN_CRASH_AT = step.crashAt;
  const child = spawn(process.execPath, [childPath, JSON.stringify({ ...cfg, dist })], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    const ready = !stdout.includes('ready\n');
    stdout += d;
    if (ready && stdout.includes('ready\n') && step.killAfterMs !== undefined) {
      setTimeout(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'), step.killAfterMs);
    }
  });
  const hang = setTimeout(() => child.kill('SIGKILL'), hangMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(hang);
      live.delete(child);
      const line = stdout.trim().split('\n').at(-1) ?? '';
      if (signal === 'SIGKILL') return resolve({ killed: true, code, stderr });
      if (code !== 0 || !line.startsWith('{')) return reject(new Error(`child ended with code ${code} / ${signal}: ${stderr || stdout}`));
      resolve({ killed: false, result: JSON.parse(line) as ChildResult, code, stderr });
    });
  });
}

/** Kills and reaps every child still running (after a failed test). */
export async function reapChildren(): Promise<void> {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** A run as the file holds it: its record, its log, the tools' effect tables, the integrity check. */
export interface Snapshot {
  integrity: unknown;
  record: RunRecord | undefined;
  events: RunEvent[];
  executions: Map<string, number>;
  applied: Map<string, number>;
  /** Keys of calls whose tool ran before their tool_started was durable. */
  early: string[];
  /** Executions of the approval-gated tool, by key. */
  gated: Map<string, number>;
  /** Keys of gated calls that ran without an approval logged before their tool_started. */
  unapproved: string[];
}

/** Reads a run back from its SQLite file (no child may be running on it). */
export async function snapshot(db: string, runId: string, driver: SqliteDriverName): Promise<Snapshot> {
  // The integrity check first, on a plain connection, before the store's set-up writes anything.
  const raw = openSqliteFile(db, 'the crash test', { driver });
  let integrity: unknown;
  const executions = new Map<string, number>();
  const applied = new Map<string, number>();
  let early: string[] = [];
  const gated = new Map<string, number>();
  let unapproved: string[] = [];
  try {
    integrity = raw.pragma('integrity_check');
    const tables = new Set(raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").values() as string[]);
    if (tables.has('fx_exec'))
      for (const r of raw.prepare('SELECT key, n FROM fx_exec').all() as Array<{ key: string; n: number }>) executions.set(r.key, r.n);
    if (tables.has('fx_exec'))
      for (const r of raw.prepare("SELECT key, n FROM fx_exec WHERE tool = 'gated'").all() as Array<{ key: string; n: number }>)
        gated.set(r.key, r.n);
    if (tables.has('fx_unapproved')) unapproved = raw.prepare('SELECT key FROM fx_unapproved').values() as string[];
    if (tables.has('fx_early')) early = raw.prepare('SELECT key FROM fx_early').values() as string[];
    if (tables.has('fx_applied'))
      for (const r of raw.prepare('SELECT key, count FROM fx_applied').all() as Array<{ key: string; count: number }>)
        applied.set(r.key, r.count);
  } finally {
    raw.close();
  }
  const store = new SqliteStore({ path: db, driver });
  try {
    const record = await store.getRun(runId);
    return { integrity, record, events: record ? await store.loadEvents(runId) : [], executions, applied, early, gated, unapproved };
  } finally {
    await store.close();
  }
}

/** What a log shows of its tool calls: name, idempotency key, and `tool_finished` events. */
export interface Calls {
  name: Map<string, string>;
  key: Map<string, string>;
  finished: Map<string, Extract<RunEvent, { type: 'tool_finished' }>>;
}

/**
 * The invariants of every log, crashed or not: seq contiguous from 0 and matching the
 * record, `run_started` first, one idempotency key per call, at most one `tool_finished`
 * per call, and the file intact. Returns the log's calls.
 */
export function checkLog(s: Snapshot, where: string): Calls {
  expect(s.integrity, `${where}: PRAGMA integrity_check`).toBe('ok');
  expect(
    s.events.map((e) => e.seq),
    `${where}: seq contiguous`,
  ).toEqual(s.events.map((_, i) => i));
  expect(s.record?.eventCount ?? 0, `${where}: event count`).toBe(s.events.length);
  if (s.events.length > 0) expect(s.events[0]!.type, `${where}: first event`).toBe('run_started');
  expect(s.early, `${where}: tools that ran before their call was durable`).toEqual([]);
  const calls: Calls = { name: new Map(), key: new Map(), finished: new Map() };
  for (const e of s.events) {
    if (e.type === 'tool_started') {
      const key = calls.key.get(e.toolCallId);
      expect(key ?? e.idempotencyKey, `${where}: one key for ${e.toolCallId}`).toBe(e.idempotencyKey);
      calls.key.set(e.toolCallId, e.idempotencyKey);
      calls.name.set(e.toolCallId, e.name);
    } else if (e.type === 'tool_finished') {
      expect(calls.finished.has(e.toolCallId), `${where}: a second tool_finished of ${e.toolCallId}`).toBe(false);
      expect(calls.key.has(e.toolCallId), `${where}: tool_finished of ${e.toolCallId} without tool_started`).toBe(true);
      calls.finished.set(e.toolCallId, e);
    }
  }
  return calls;
}

/** Calls of `tool` whose start is durable and whose end is not: a kill now leaves them open. */
export function openCalls(calls: Calls, tool: string): string[] {
  return [...calls.name].filter(([id, name]) => name === tool && !calls.finished.has(id)).map(([id]) => id);
}

/** The run's final transcript, without what legitimately differs between runs (response ids). */
export function transcript(events: RunEvent[]): Message[] {
  return messagesFromEvents(events).map((m) => {
    if (m.role !== 'assistant') return m;
    const { responseId: _drop, ...rest } = m;
    return rest as Message;
  });
}

/** The ids of every tool call of a transcript, in order. */
export function callIds(messages: Message[]): string[] {
  return messages.flatMap((m) =>
    m.role === 'assistant' ? m.content.filter((c): c is ToolCall => c.type === 'tool_call').map((c) => c.id) : [],
  );
}

/**
 * No gated tool runs before its approval: every execution of the gated tool (its table, and
 * what the tool itself saw when it ran) belongs to a call whose approving `approval_decided`
 * has a lower seq than the call's first `tool_started`; no gated call even starts without
 * one; at most one request and one decision per call. Returns each gated call's decisions.
 */
export function checkApprovals(
  s: Snapshot,
  calls: Calls,
  where: string,
): Map<string, Array<Extract<RunEvent, { type: 'approval_decided' }>>> {
  expect(s.unapproved, `${where}: gated calls that ran without a prior approval (seen by the tool)`).toEqual([]);
  const requested = new Map<string, number>();
  const decided = new Map<string, Array<Extract<RunEvent, { type: 'approval_decided' }>>>();
  const firstStart = new Map<string, number>();
  for (const e of s.events) {
    if (e.type === 'approval_requested') requested.set(e.toolCallId, (requested.get(e.toolCallId) ?? 0) + 1);
    else if (e.type === 'approval_decided') decided.set(e.toolCallId, [...(decided.get(e.toolCallId) ?? []), e]);
    else if (e.type === 'tool_started' && !firstStart.has(e.toolCallId)) firstStart.set(e.toolCallId, e.seq);
  }
  for (const [id, n] of requested) expect(n, `${where}: approval_requested events of ${id}`).toBe(1);
  for (const [id, list] of decided) {
    expect(list, `${where}: approval_decided events of ${id}`).toHaveLength(1);
    expect(requested.has(id), `${where}: ${id} decided without a request`).toBe(true);
  }
  const approvedBefore = (id: string): boolean => (decided.get(id) ?? []).some((d) => d.approved && d.seq < (firstStart.get(id) ?? -1));
  for (const [id, name] of calls.name)
    if (name === 'gated') expect(approvedBefore(id), `${where}: gated ${id} started without a prior approval`).toBe(true);
  const idOfKey = new Map([...calls.key].map(([id, key]) => [key, id]));
  for (const key of s.gated.keys()) {
    const id = idOfKey.get(key);
    expect(id, `${where}: a gated execution under a key no started call has: ${key}`).toBeDefined();
    expect(approvedBefore(id as string), `${where}: gated ${id} ran without an approval logged before its tool_started`).toBe(true);
  }
  return decided;
}
