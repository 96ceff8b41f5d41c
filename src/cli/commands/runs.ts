/** `rein runs`: the recent runs in the store. */
import { ReinError } from '../../errors.js';
import type { RunRecord, RunStore } from '../../store/types.js';
import { EXIT, type Command } from '../io.js';
import { parseCommandLine } from '../flags.js';
import { formatMs, formatUsd } from '../render.js';
import { reportSetupError } from './run.js';
import { openStoreFor } from './store-command.js';

const usage = `rein runs [--status done|stopped|failed|aborted|paused|running] [--limit N] [--json] [--store <path|url>]

Lists the most recent runs in the store, newest first: id, status, reason, steps, tokens,
cost and age; on a Postgres store, also the worker that holds each running run. A sub-agent's
run is listed under its parent, indented (a tree of runs); --json prints each record, with
its parentRunId (and "worker" when one holds it).`;

const STATUSES = ['done', 'stopped', 'failed', 'aborted', 'paused', 'running'];

export const command: Command = {
  description: 'list recent runs',
  usage,
  async run(argv, io) {
    let json = argv.includes('--json');
    try {
      const parsed = parseCommandLine(
        argv,
        io,
        usage,
        { status: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' }, store: { type: 'string' } },
        { positionals: false },
      );
      if (!parsed) return EXIT.ok;
      const { values } = parsed;
      json = Boolean(values.json);
      if (values.status !== undefined && !STATUSES.includes(values.status)) {
        throw new ReinError('config', 'fatal', `--status expects one of ${STATUSES.join(', ')}, got "${values.status}"`);
      }
      const limit = values.limit === undefined ? 20 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1)
        throw new ReinError('config', 'fatal', `--limit expects a positive whole number, got "${values.limit}"`);
      const store = await openStoreFor(values.store, io);
      try {
        const runs = await store.listRuns({ limit, ...(values.status ? { status: values.status as RunRecord['status'] } : {}) });
        const holders = store.queue ? await holdersOf(store, runs) : undefined;
        if (json)
          for (const run of runs)
            io.stdout.write(`${JSON.stringify(holders?.has(run.id) ? { ...run, worker: holders.get(run.id) } : run)}\n`);
        else io.stdout.write(table(runs, Date.now(), holders));
      } finally {
        await store.close();
      }
      return EXIT.ok;
    } catch (error) {
      return reportSetupError(error, io, json);
    }
  },
};

/** The runs as trees: each root (newest first), then its descendants under it, oldest first, with their depth. */
function asTrees(runs: RunRecord[]): Array<{ run: RunRecord; depth: number }> {
  const ids = new Set(runs.map((r) => r.id));
  const children = new Map<string, RunRecord[]>();
  for (const run of runs) {
    if (run.parentRunId === undefined || !ids.has(run.parentRunId)) continue;
    children.set(run.parentRunId, [...(children.get(run.parentRunId) ?? []), run]);
  }
  const out: Array<{ run: RunRecord; depth: number }> = [];
  const visit = (run: RunRecord, depth: number): void => {
    out.push({ run, depth });
    for (const child of (children.get(run.id) ?? []).sort((a, b) => a.createdAt - b.createdAt)) visit(child, Math.max(depth, 0) + 1);
  };
  // A run whose parent is not in the list (older, or filtered out) stands on its own, marked.
  for (const run of runs)
    if (run.parentRunId === undefined || !ids.has(run.parentRunId)) visit(run, run.parentRunId === undefined ? 0 : -1);
  return out;
}

/** Which live worker holds each running run (a Postgres store's fleet). */
async function holdersOf(store: RunStore, runs: RunRecord[]): Promise<Map<string, string> | undefined> {
  const { FleetView } = await import('../../worker/fleet-view.js');
  const fleet = await FleetView.of(store);
  if (!fleet) return undefined;
  try {
    return await fleet.holders(runs.filter((r) => r.status === 'running').map((r) => r.id));
  } finally {
    await fleet.close();
  }
}

function table(runs: RunRecord[], now: number, holders?: Map<string, string>): string {
  if (runs.length === 0) return 'no runs yet\n';
  const rows = asTrees(runs).map(({ run: r, depth }) => [
    depth === 0 ? r.id : depth < 0 ? `↳ ${r.id}` : `${'  '.repeat(depth - 1)}└ ${r.id}`,
    r.status,
    r.reason ?? '',
    String(r.totals?.steps ?? ''),
    String(r.totals?.usage.total ?? ''),
    r.totals?.usage.cost ? formatUsd(r.totals.usage.cost.total) : '',
    `${formatMs(now - r.createdAt)} ago`,
    r.model,
    ...(holders ? [holders.get(r.id) ?? ''] : []),
  ]);
  const head = ['RUN', 'STATUS', 'REASON', 'STEPS', 'TOKENS', 'COST', 'AGE', 'MODEL', ...(holders ? ['WORKER'] : [])];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...rows.map(line)].join('\n')}\n`;
}
