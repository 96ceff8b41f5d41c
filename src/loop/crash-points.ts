/**
 * Crash points: named places where the crash test (test/crash/) kills the process with
 * SIGKILL, to prove a run survives dying exactly there. `REIN_CRASH_AT=<point>:<hit>` arms
 * one point, e.g. `after-tool-started:2` kills the process the 2nd time that point is
 * reached. Unset (always, outside that test), every call is one check of a constant.
 *
 * Points: `before-append` / `after-append` (around the store append of a write point),
 * `before-tool-execute` (a call's start is durable, the tool not yet dispatched),
 * `after-tool-finished` (its `tool_finished` is durable), `before-resume-call` (a resume
 * is about to resolve a call the crashed process left open). Test tools and stores may
 * name their own points (the crash test's tools call `after-tool-effect`).
 */

/** The armed point, read once: the hot path pays nothing when the variable is unset. */
const armed = parse(process.env.REIN_CRASH_AT);
let hits = 0;

/** Kills this process with SIGKILL if `name` is the armed point and this is its armed hit. */
export function crashPoint(name: string): void {
  if (armed === undefined || armed.point !== name) return;
  hits++;
  // kill(2) delivers an unblocked signal to the calling process before it returns: no
  // instruction after this line runs.
  if (hits === armed.hit) process.kill(process.pid, 'SIGKILL');
}

function parse(value: string | undefined): { point: string; hit: number } | undefined {
  if (!value) return undefined;
  const at = value.lastIndexOf(':');
  const hit = at === -1 ? 1 : Number(value.slice(at + 1));
  return { point: at === -1 ? value : value.slice(0, at), hit: Number.isInteger(hit) && hit > 0 ? hit : 1 };
}
