/**
 * What jsonrepair fixed, named for the event log. jsonrepair answers only with the fixed
 * text, so the slips are found here by reading the text the way JSON would, outside its
 * strings: a reader of the log (or a person tuning a prompt for a weaker model) sees which
 * habits the model has, not only that something was wrong.
 */

const PYTHON_LITERALS = new Set(['True', 'False', 'None']);
const JSON_LITERALS = new Set(['true', 'false', 'null']);

/** The slips in `text`, in the order of first appearance; `['other syntax']` when none of the named ones is found. */
export function describeSyntaxRepairs(text: string): string[] {
  const found = new Set<string>();
  // What the previous token was: a value ends where a comma, colon or closer must follow.
  let afterValue = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === '\u2018' || ch === '\u201c') {
      if (ch !== '"') found.add(ch === "'" ? 'single quotes' : 'typographic quotes');
      if (afterValue) found.add('missing commas');
      i = endOfString(text, i);
      afterValue = true;
    } else if (ch === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
      found.add('comments');
      i = text[i + 1] === '/' ? lineEnd(text, i) : blockEnd(text, i);
    } else if (ch === '#') {
      found.add('comments');
      i = lineEnd(text, i);
    } else if (ch === '{' || ch === '[') {
      if (afterValue) found.add('missing commas');
      afterValue = false;
      i++;
    } else if (ch === '}' || ch === ']') {
      afterValue = true;
      i++;
    } else if (ch === ',' || ch === ':') {
      afterValue = false;
      i++;
    } else if (/[A-Za-z_$]/.test(ch)) {
      const word = /^[A-Za-z_$][\w$]*/.exec(text.slice(i))![0];
      if (afterValue) found.add('missing commas');
      i += word.length;
      if (/^\s*:/.test(text.slice(i))) found.add('unquoted keys');
      else if (PYTHON_LITERALS.has(word)) found.add('Python literals');
      else if (!JSON_LITERALS.has(word)) found.add('unquoted strings');
      afterValue = true;
    } else if (/[-+\d.]/.test(ch)) {
      if (afterValue) found.add('missing commas');
      i += /^[-+\d.eE]+/.exec(text.slice(i))![0].length;
      afterValue = true;
    } else {
      i++;
    }
  }
  return found.size > 0 ? [...found] : ['other syntax'];
}

/** The index after the string opened at `start` (by any quote jsonrepair accepts), or the end of the text. */
function endOfString(text: string, start: number): number {
  const open = text[start]!;
  const close = open === '\u2018' ? '\u2019' : open === '\u201c' ? '\u201d' : open;
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === close) return i + 1;
  }
  return text.length;
}

function lineEnd(text: string, start: number): number {
  const at = text.indexOf('\n', start);
  return at === -1 ? text.length : at + 1;
}

function blockEnd(text: string, start: number): number {
  const at = text.indexOf('*/', start + 2);
  return at === -1 ? text.length : at + 2;
}
