/**
 * "Where did you mean?" for an edit whose old text is not in the file. Models mostly miss
 * by whitespace (tabs for spaces, a trailing blank), by a line that changed since they
 * read it, or by copying read_file's line numbers; showing the closest region and its first
 * differing line lets the next call succeed.
 */

/** The region of a file most like the text searched for. */
export interface ClosestRegion {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  /** The file's lines of the region, without line terminators. */
  lines: string[];
  /** Similarity in [0, 1]: the mean over the region's lines. */
  score: number;
  /** The first line where file and searched text differ, if they differ within the region. */
  difference?: { line: number; fileText: string; searchedText: string; whitespaceOnly: boolean };
}

/** Above this many line comparisons, lines are compared for (trimmed) equality only. */
const FUZZY_BUDGET = 300_000;
/** Below this similarity nothing is "close". */
const MIN_SCORE = 0.3;

/**
 * The window of the file's lines (as many as the searched text has) most similar to
 * `searched`, line by line; undefined when nothing is reasonably close.
 */
export function closestRegion(content: string, searched: string): ClosestRegion | undefined {
  const fileLines = splitLines(content);
  const wanted = splitLines(searched);
  if (wanted.length > 0 && wanted[wanted.length - 1] === '' && searched.endsWith('\n')) wanted.pop();
  if (wanted.length === 0 || fileLines.length === 0) return undefined;
  const size = Math.min(wanted.length, fileLines.length);
  const fuzzy = fileLines.length * size <= FUZZY_BUDGET;
  const wantedKeys = wanted.map(prepare);
  const fileKeys = fileLines.map(prepare);

  let best = -1;
  let bestScore = 0;
  for (let start = 0; start + size <= fileLines.length; start++) {
    let total = 0;
    for (let i = 0; i < size; i++) total += similarity(fileKeys[start + i]!, wantedKeys[i]!, fuzzy);
    const score = total / wanted.length;
    if (score > bestScore) {
      best = start;
      bestScore = score;
    }
  }
  if (best < 0 || bestScore < MIN_SCORE) return undefined;
  const lines = fileLines.slice(best, best + size);
  const region: ClosestRegion = { startLine: best + 1, endLine: best + size, lines, score: bestScore };
  for (let i = 0; i < size; i++) {
    if (lines[i] === wanted[i]) continue;
    const whitespaceOnly = squash(lines[i]!) === squash(wanted[i]!);
    region.difference = { line: best + 1 + i, fileText: lines[i]!, searchedText: wanted[i]!, whitespaceOnly };
    break;
  }
  return region;
}

interface LineKey {
  trimmed: string;
  squashed: string;
  bigrams: Map<string, number> | undefined;
}

function splitLines(text: string): string[] {
  return text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

function squash(line: string): string {
  return line.replace(/\s+/g, '');
}

function prepare(line: string): LineKey {
  const trimmed = line.trim();
  return { trimmed, squashed: squash(trimmed), bigrams: undefined };
}

function similarity(a: LineKey, b: LineKey, fuzzy: boolean): number {
  if (a.trimmed === b.trimmed) return 1;
  if (a.squashed === b.squashed) return 0.95;
  if (!fuzzy) return 0;
  return dice(a, b);
}

function bigramsOf(key: LineKey): Map<string, number> {
  if (key.bigrams) return key.bigrams;
  const counts = new Map<string, number>();
  const text = key.squashed;
  for (let i = 0; i < text.length - 1; i++) {
    const pair = text.slice(i, i + 2);
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  key.bigrams = counts;
  return counts;
}

/** Sørensen–Dice coefficient over character bigrams (a squashed line of n characters has n − 1). */
function dice(a: LineKey, b: LineKey): number {
  const total = Math.max(0, a.squashed.length - 1) + Math.max(0, b.squashed.length - 1);
  if (total === 0) return 0;
  const countsA = bigramsOf(a);
  let shared = 0;
  for (const [pair, count] of bigramsOf(b)) shared += Math.min(count, countsA.get(pair) ?? 0);
  return (2 * shared) / total;
}
