/** The sums a run keeps of its model responses. */
import type { RunTotals } from '../events.js';
import type { AssistantMessage } from '../model/types.js';

/** Adds a response's usage to the run's totals. */
export function addUsage(totals: RunTotals, message: AssistantMessage): void {
  const u = message.usage;
  const t = totals.usage;
  t.input += u.input;
  t.output += u.output;
  t.cacheRead += u.cacheRead;
  t.cacheWrite += u.cacheWrite;
  t.reasoning += u.reasoning;
  t.total += u.total;
  if (u.estimated) t.estimated = true;
  if (u.cost) {
    const c = (t.cost ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 });
    c.input += u.cost.input;
    c.output += u.cost.output;
    c.cacheRead += u.cost.cacheRead;
    c.cacheWrite += u.cost.cacheWrite;
    c.total += u.cost.total;
  }
}
