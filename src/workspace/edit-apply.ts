/**
 * The text side of edit_file, with no I/O: find the old text exactly, refuse when it is
 * missing (showing the closest region) or ambiguous (showing every place), and replace.
 * The same function computes the approval preview and the edit itself, so what a person
 * approves is what happens.
 */
import { closestRegion } from './closest-match.js';
import { formatCount, lineAt, numberedLine, usesCrlf } from './text.js';

/** One requested replacement. */
export interface EditRequest {
  oldText: string;
  newText: string;
  /** Replace every occurrence instead of requiring exactly one. */
  replaceAll?: boolean;
}

/** The edited text, or why the edit cannot be made (written for the model). */
export type EditResult = { ok: true; content: string; replacements: number; lines: number[] } | { ok: false; message: string };

const MAX_LISTED_LINES = 20;

/**
 * Applies `request` to `content` (`shown` names the file in messages). Line endings
 * follow the file: in a CRLF file, the `\n` of old and new text are read as `\r\n`, so
 * the file stays CRLF; in an LF file a stray `\r\n` from the model is read as `\n`.
 *
 * @example
 * applyEdit('a = 1\nb = 2\n', { oldText: 'b = 2', newText: 'b = 3' }, 'x.py');
 * // { ok: true, content: 'a = 1\nb = 3\n', replacements: 1, lines: [2] }
 */
export function applyEdit(content: string, request: EditRequest, shown: string): EditResult {
  const { oldText, newText } = request;
  if (oldText === '') {
    return fail('old_text is empty. Give the exact text to replace; to create or overwrite a whole file, use write_file');
  }
  if (oldText === newText) return fail('old_text and new_text are identical, so there is nothing to change');

  const crlf = usesCrlf(content);
  const adapt = (text: string): string => (crlf ? text.replace(/\r?\n/g, '\r\n') : text.replace(/\r\n/g, '\n'));
  // The file's own line endings first; the text as sent for the odd line of a mixed file.
  const variants = [{ old: adapt(oldText), replacement: adapt(newText) }];
  if (variants[0]!.old !== oldText) variants.push({ old: oldText, replacement: newText });

  for (const { old, replacement } of variants) {
    const positions = occurrences(content, old);
    if (positions.length === 0) continue;
    const lines = lineNumbers(content, positions);
    if (positions.length > 1 && !request.replaceAll) return fail(ambiguous(shown, lines));
    let edited = '';
    let from = 0;
    for (const position of positions) {
      edited += content.slice(from, position) + replacement;
      from = position + old.length;
    }
    edited += content.slice(from);
    return { ok: true, content: edited, replacements: positions.length, lines };
  }
  return fail(notFound(shown, content, oldText));
}

function fail(message: string): EditResult {
  return { ok: false, message };
}

/** Start indices of the non-overlapping occurrences of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

function lineNumbers(text: string, positions: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let from = 0;
  for (const position of positions) {
    line = lineAt(text, position, from, line);
    from = position;
    lines.push(line);
  }
  return lines;
}

function ambiguous(shown: string, lines: readonly number[]): string {
  const listed = lines.slice(0, MAX_LISTED_LINES).join(', ');
  const more = lines.length > MAX_LISTED_LINES ? ` and ${lines.length - MAX_LISTED_LINES} more` : '';
  return (
    `old_text occurs ${formatCount(lines.length)} times in ${shown} (starting at lines ${listed}${more}). ` +
    `Include more surrounding lines in old_text so that it matches exactly one place, ` +
    `or set replace_all: true to replace all ${formatCount(lines.length)}.`
  );
}

function notFound(shown: string, content: string, oldText: string): string {
  let message = `old_text was not found in ${shown}.`;
  if (/^\s*\d+\t/.test(oldText) && oldText.split('\n').every((line) => line === '' || /^\s*\d+\t/.test(line))) {
    message +=
      ' Its lines start with line numbers and a tab, as read_file shows them: those are not part of the file. Send the text without them.';
  }
  const region = closestRegion(content, oldText);
  if (!region) {
    return `${message} Nothing similar is in the file either: it may have changed since you read it. Read it again with read_file and copy the text exactly.`;
  }
  const span = region.startLine === region.endLine ? `line ${region.startLine}` : `lines ${region.startLine}–${region.endLine}`;
  message += ` The closest match is ${span}:\n`;
  message += region.lines.map((line, i) => numberedLine(region.startLine + i, line)).join('\n');
  const diff = region.difference;
  if (diff) {
    message += `\nFirst difference, line ${diff.line}: the file has ${JSON.stringify(diff.fileText)} but old_text has ${JSON.stringify(diff.searchedText)}`;
    message += diff.whitespaceOnly ? ' (they differ only in whitespace: indentation, tabs or trailing spaces).' : '.';
  }
  return `${message}\nSend old_text exactly as it is in the file, including whitespace, and try again.`;
}
