/**
 * A unified line diff (the `diff -u` / `git diff` format) for approval prompts and edit
 * results. Myers' O((N+M)·D) algorithm over the lines between the common prefix and
 * suffix; when the difference is too large to trace within a memory budget, the changed
 * middle is shown as removed-then-added — still a correct diff, only not a minimal one.
 */

/** Options of {@link unifiedDiff}. */
export interface UnifiedDiffOptions {
  /** Label of the old side (`a/src/x.ts`, or `/dev/null` for a new file). */
  oldLabel: string;
  /** Label of the new side. */
  newLabel: string;
  /** Unchanged lines shown around each change (3). */
  context?: number;
}

type Op = 'equal' | 'delete' | 'insert';

/** Trace entries beyond this (V-array cells over all D) fall back to the coarse diff. */
const TRACE_BUDGET = 4_000_000;

/**
 * The unified diff turning `oldText` into `newText`, or `''` when they are equal. Lines
 * keep their terminators for comparison, so a changed line ending or a missing final
 * newline shows (with the usual `\ No newline at end of file`).
 *
 * @example
 * unifiedDiff('a\nb\n', 'a\nc\n', { oldLabel: 'a/x', newLabel: 'b/x' });
 * // '--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n'
 */
export function unifiedDiff(oldText: string, newText: string, options: UnifiedDiffOptions): string {
  if (oldText === newText) return '';
  const a = splitKeepingEnds(oldText);
  const b = splitKeepingEnds(newText);
  const ops = diffLines(a, b);
  const context = options.context ?? 3;
  let out = `--- ${options.oldLabel}\n+++ ${options.newLabel}\n`;
  for (const hunk of hunks(ops, context)) {
    out += hunkHeader(ops, hunk.start, hunk.end);
    for (let i = hunk.start; i < hunk.end; i++) {
      const op = ops[i]!;
      const line = op.kind === 'insert' ? b[op.newIndex]! : a[op.oldIndex]!;
      out += (op.kind === 'equal' ? ' ' : op.kind === 'delete' ? '-' : '+') + printable(line);
    }
  }
  return out;
}

/** Lines with their `\n` kept; the last one may lack it. `''` is no lines. */
function splitKeepingEnds(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', start)) {
    lines.push(text.slice(start, i + 1));
    start = i + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

function printable(line: string): string {
  return line.endsWith('\n') ? line : `${line}\n\\ No newline at end of file\n`;
}

interface Step {
  kind: Op;
  oldIndex: number;
  newIndex: number;
}

/** The edit script from `a` to `b`, one step per line, in order. */
function diffLines(a: readonly string[], b: readonly string[]): Step[] {
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) {
    suffix++;
  }
  // Lines become small integers: comparing numbers in the inner loop, not strings.
  const ids = new Map<string, number>();
  const idOf = (line: string): number => {
    let id = ids.get(line);
    if (id === undefined) ids.set(line, (id = ids.size));
    return id;
  };
  const middleA = a.slice(prefix, a.length - suffix).map(idOf);
  const middleB = b.slice(prefix, b.length - suffix).map(idOf);
  const middle = myers(middleA, middleB) ?? coarse(middleA.length, middleB.length);

  const steps: Step[] = [];
  for (let i = 0; i < prefix; i++) steps.push({ kind: 'equal', oldIndex: i, newIndex: i });
  let oldIndex = prefix;
  let newIndex = prefix;
  for (const kind of middle) {
    steps.push({ kind, oldIndex, newIndex });
    if (kind !== 'insert') oldIndex++;
    if (kind !== 'delete') newIndex++;
  }
  for (let i = 0; i < suffix; i++) steps.push({ kind: 'equal', oldIndex: oldIndex + i, newIndex: newIndex + i });
  return steps;
}

/** Every old line removed, then every new line added. */
function coarse(n: number, m: number): Op[] {
  return [...new Array<Op>(n).fill('delete'), ...new Array<Op>(m).fill('insert')];
}

/** Myers' greedy shortest edit script; undefined when its trace would exceed the budget. */
function myers(a: readonly number[], b: readonly number[]): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return [];
  const offset = max + 1;
  const width = 2 * max + 3;
  const maxD = Math.max(1, Math.floor(TRACE_BUDGET / width));
  const v = new Int32Array(width);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    if (d > maxD) return undefined;
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!);
      let x = down ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m, offset);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], n: number, m: number, offset: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const down = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : v[offset + prevK]!;
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push('equal');
      x--;
      y--;
    }
    if (d > 0) ops.push(x === prevX ? 'insert' : 'delete');
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

/** Ranges of steps to print: each change with `context` equal lines around, overlapping ones merged. */
function hunks(steps: readonly Step[], context: number): Array<{ start: number; end: number }> {
  const ranges: Array<{ start: number; end: number }> = [];
  for (let i = 0; i < steps.length; i++) {
    if (steps[i]!.kind === 'equal') continue;
    let end = i;
    while (end < steps.length && steps[end]!.kind !== 'equal') end++;
    const start = Math.max(0, i - context);
    const stop = Math.min(steps.length, end + context);
    const last = ranges[ranges.length - 1];
    if (last && start <= last.end) last.end = stop;
    else ranges.push({ start, end: stop });
    i = end - 1;
  }
  return ranges;
}

function hunkHeader(steps: readonly Step[], start: number, end: number): string {
  let oldCount = 0;
  let newCount = 0;
  for (let i = start; i < end; i++) {
    const kind = steps[i]!.kind;
    if (kind !== 'insert') oldCount++;
    if (kind !== 'delete') newCount++;
  }
  const first = steps[start]!;
  // An empty side names the line before the hunk (0 at the very top), as diff -u does.
  const oldStart = oldCount === 0 ? first.oldIndex : first.oldIndex + 1;
  const newStart = newCount === 0 ? first.newIndex : first.newIndex + 1;
  return `@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@\n`;
}

function range(start: number, count: number): string {
  return count === 1 ? String(start) : `${start},${count}`;
}
