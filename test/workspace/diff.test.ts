import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../src/workspace/diff.js';

const labels = { oldLabel: 'a/f', newLabel: 'b/f' };

/** Applies a unified diff made by unifiedDiff to `old`: an independent check that it is correct. */
function applyPatch(old: string, patch: string): string {
  const oldLines = old.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const out: string[] = [];
  let cursor = 0;
  const lines = patch.split('\n');
  let i = 2; // after the --- and +++ lines
  while (i < lines.length && lines[i] !== '') {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(lines[i]!);
    if (!header) throw new Error(`bad hunk header: ${lines[i]}`);
    const oldStart = Number(header[1]);
    const oldCount = header[2] === undefined ? 1 : Number(header[2]);
    const firstOld = oldCount === 0 ? oldStart : oldStart - 1;
    while (cursor < firstOld) out.push(oldLines[cursor++]!);
    i++;
    while (i < lines.length && /^[ +-]/.test(lines[i]!)) {
      const line = lines[i]!;
      const noNewline = lines[i + 1] === '\\ No newline at end of file';
      const text = line.slice(1) + (noNewline ? '' : '\n');
      if (line[0] === ' ' || line[0] === '-') {
        expect(oldLines[cursor], `context/removed line ${cursor + 1}`).toBe(text);
        cursor++;
      }
      if (line[0] === ' ' || line[0] === '+') out.push(text);
      i += noNewline ? 2 : 1;
    }
  }
  while (cursor < oldLines.length) out.push(oldLines[cursor++]!);
  return out.join('');
}

describe('unifiedDiff', () => {
  it('prints git-style hunks with three lines of context', () => {
    const old = '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n';
    const next = '1\n2\nX\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n';
    expect(unifiedDiff(old, next, labels)).toBe(
      '--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n@@ -10,3 +10,4 @@\n 10\n 11\n 12\n+13\n',
    );
  });

  it('merges changes closer than twice the context into one hunk', () => {
    const diff = unifiedDiff('a\nb\nc\nd\ne\nf\ng\n', 'A\nb\nc\nd\ne\nf\nG\n', labels);
    expect(diff.match(/^@@/gm)).toHaveLength(1);
    expect(diff).toContain('@@ -1,7 +1,7 @@');
  });

  it('shows a new file against /dev/null and a missing final newline', () => {
    expect(unifiedDiff('', 'hello\nworld', { oldLabel: '/dev/null', newLabel: 'b/x' })).toBe(
      '--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+hello\n+world\n\\ No newline at end of file\n',
    );
    expect(unifiedDiff('a\nb', 'a\nb\n', labels)).toBe('--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n');
  });

  it('is empty for equal texts', () => {
    expect(unifiedDiff('same\n', 'same\n', labels)).toBe('');
  });

  it('is minimal for a moved block', () => {
    const diff = unifiedDiff('a\nb\nc\nd\n', 'b\nc\nd\na\n', labels);
    expect(diff.split('\n').filter((l) => /^[+-][^+-]/.test(l))).toEqual(['-a', '+a']);
  });

  it('applies back to the new text, for many random edits', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const old = Array.from({ length: random(30) }, () => `line ${random(8)}\n`).join('') + (random(3) === 0 ? 'tail' : '');
      const lines = old.match(/[^\n]*\n|[^\n]+$/g) ?? [];
      for (let edits = random(6); edits > 0; edits--) {
        const at = random(lines.length + 1);
        if (random(2) === 0 && lines.length > 0) lines.splice(at, 1);
        else lines.splice(at, 0, `new ${random(5)}\n`);
      }
      const next = lines.join('');
      const diff = unifiedDiff(old, next, labels);
      if (old === next) expect(diff).toBe('');
      else expect(applyPatch(old, diff)).toBe(next);
    }
  });

  it('stays correct (if not minimal) for a rewrite too large to trace', () => {
    const old = Array.from({ length: 3000 }, (_, i) => `old ${i}\n`).join('');
    const next = Array.from({ length: 3000 }, (_, i) => `new ${i}\n`).join('');
    const diff = unifiedDiff(old, next, labels);
    expect(applyPatch(old, diff)).toBe(next);
  });
});
