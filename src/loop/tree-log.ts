/**
 * The log of a tree of runs as one stream (issue 23): the root's events with those of every
 * descendant, in the order they happened, each descendant's marked with its depth — what
 * the root's listeners saw live. `rein show`, `replay` and `trace` follow children with it.
 */
import type { RunEvent } from '../events.js';
import type { RunStore } from '../store/types.js';
import { runsOfTree } from './tree-approval.js';

/**
 * Every event of the tree under `rootRunId`, merged by time (each run's own events stay in
 * seq order; at the same instant a parent's come before its child's). A run with no
 * children gives its own log, unchanged.
 */
export async function eventsOfTree(store: RunStore, rootRunId: string): Promise<RunEvent[]> {
  const runs = await runsOfTree(store, rootRunId);
  if (runs.length <= 1) return store.loadEvents(rootRunId);
  const logs = await Promise.all(
    runs.map(async ({ record, depth }) => (await store.loadEvents(record.id)).map((event) => (depth === 0 ? event : { ...event, depth }))),
  );
  const merged: RunEvent[] = [];
  const heads = logs.map(() => 0);
  for (;;) {
    let best = -1;
    for (let i = 0; i < logs.length; i++) {
      const event = (logs[i] as RunEvent[])[heads[i] as number];
      if (event === undefined) continue;
      const current = best === -1 ? undefined : (logs[best] as RunEvent[])[heads[best] as number];
      if (current === undefined || event.at < current.at) best = i;
    }
    if (best === -1) return merged;
    merged.push((logs[best] as RunEvent[])[heads[best] as number] as RunEvent);
    heads[best] = (heads[best] as number) + 1;
  }
}
