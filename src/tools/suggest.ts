/**
 * "Did you mean …" for unknown tool names. Models misspell, change case or separators
 * (`getCurrentTime` for `get_current_time`) and sometimes prefix a namespace
 * (`functions.calculate`); one good suggestion saves a wasted turn.
 */

/** The candidate closest to `name`, or undefined when none is plausibly meant. */
export function closestName(name: string, candidates: readonly string[]): string | undefined {
  const target = canonical(name);
  const lastSegment = canonical(name.slice(name.lastIndexOf('.') + 1));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const c = canonical(candidate);
    if (c === target || c === lastSegment) return candidate;
    const distance = editDistance(target, c);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // About one edit per three characters, at least one: "serach" → "search" is one transposition.
  const allowed = Math.max(1, Math.floor(target.length / 3));
  return bestDistance <= allowed ? best : undefined;
}

function canonical(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/** Optimal string alignment distance: Levenshtein plus adjacent transpositions ("serach"). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, d[(i - 2) * cols + j - 2]! + 1);
      }
      d[i * cols + j] = value;
    }
  }
  return d[rows * cols - 1]!;
}
