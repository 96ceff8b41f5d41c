/**
 * Reading markdown the way GitHub renders it, as far as the docs tests need: headings and
 * their anchors, links, tables. Fenced code blocks hold neither headings nor links.
 */

/** The lines of `text` outside fenced code blocks (``` or ~~~), with their 1-based numbers. */
export function proseLines(text: string): Array<{ line: string; number: number }> {
  const out: Array<{ line: string; number: number }> = [];
  let fence: string | undefined;
  for (const [i, line] of text.split('\n').entries()) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      continue;
    }
    if (fence === undefined) out.push({ line, number: i + 1 });
  }
  return out;
}

/** A heading's text as its anchor reads it (GitHub's slugger: lower case, punctuation dropped, each space a hyphen). */
export function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The headings of a document, each with its level, text and anchor (a repeated anchor gets `-1`, `-2`, …). */
export function headingsOf(text: string): Array<{ level: number; text: string; anchor: string }> {
  const seen = new Map<string, number>();
  const out: Array<{ level: number; text: string; anchor: string }> = [];
  for (const { line } of proseLines(text)) {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    const base = slugOf(match[2] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.push({ level: (match[1] as string).length, text: match[2] as string, anchor: count === 0 ? base : `${base}-${count}` });
  }
  return out;
}

/** Every inline link `[text](target)` (not in code), with its line. Images count: their file must exist too. */
export function linksOf(text: string): Array<{ target: string; number: number }> {
  const out: Array<{ target: string; number: number }> = [];
  for (const { line, number } of proseLines(text)) {
    // Inline code is not a link: `[a](b)` inside backticks stays text.
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: match[1] as string, number });
  }
  return out;
}

/** The cells of a table row (`| a | b \| c |` → ['a', 'b | c']), or undefined for a line that is no row. */
export function rowCells(line: string): string[] | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('|') || !trimmed.endsWith('|')) return undefined;
  return trimmed
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

/**
 * The rows of the first table after the heading whose text is `heading`, before the next
 * heading (header and separator rows left out); undefined when there is no such heading.
 */
export function tableUnder(text: string, heading: string): string[][] | undefined {
  const lines = proseLines(text).map((l) => l.line);
  const start = lines.findIndex((l) => /^#{1,6}\s/.test(l) && l.replace(/^#{1,6}\s+/, '').trim() === heading);
  if (start === -1) return undefined;
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,6}\s/.test(line)) break;
    const cells = rowCells(line);
    if (cells) rows.push(cells);
    else if (rows.length > 0) break;
  }
  // The header and the |---| separator.
  return rows.slice(2);
}

/** The text from the heading `heading` to the next heading of the same or a higher level (headings in code blocks do not count). */
export function sectionUnder(text: string, heading: string): string | undefined {
  const lines = text.split('\n');
  const prose = new Set(proseLines(text).map((l) => l.number - 1));
  const isHeading = (i: number, maxLevel = 6): boolean => prose.has(i) && new RegExp(`^#{1,${maxLevel}}\\s`).test(lines[i] as string);
  const start = lines.findIndex((l, i) => isHeading(i) && l.replace(/^#{1,6}\s+/, '').trim() === heading);
  if (start === -1) return undefined;
  const level = (/^#+/.exec(lines[start] as string)?.[0] ?? '#').length;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (isHeading(i, level)) {
      end = i;
      break;
    }
  }
  return lines.slice(start + 1, end).join('\n');
}

/** The fenced code blocks of `text`, each with its info string (`ts`, `json`, `''`) and body. */
export function codeBlocksOf(text: string): Array<{ lang: string; body: string }> {
  const out: Array<{ lang: string; body: string }> = [];
  const pattern = /^(`{3,})([^\n`]*)\n([\s\S]*?)\n\1[ \t]*$/gm;
  for (const match of text.matchAll(pattern)) out.push({ lang: (match[2] as string).trim(), body: match[3] as string });
  return out;
}
