/**
 * Turning free text into an FTS5 query that cannot be misread: user text is never parsed
 * as FTS5 syntax (`AND`, `NEAR(`, `"`, `*`, `col:`, `^` …). Each word becomes a quoted
 * string and the words are OR-ed, so bm25 ranks by how many and how rare the shared
 * words are.
 */

/**
 * Words that match almost every note. A query of nothing else searches nothing: memory is
 * consulted on every turn, and "do it" must not pull in random notes.
 */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can do does for from has have how i if in is it its me my no not of on or our so that the ' +
    'their them then there these they this to was we were what when where which who why will with you your'
  ).split(' '),
);

/** At most this many words are searched: a pasted page must not become a huge query. */
const MAX_TERMS = 32;

/**
 * The FTS5 MATCH expression for `text`, or undefined when it has no searchable word
 * (only punctuation, only stop-words).
 * Words are split the way FTS5's `unicode61` tokenizer splits them (letters and digits),
 * lowercased, de-duplicated and quoted.
 */
export function ftsQuery(text: string): string | undefined {
  const words = text.toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];
  const unique = [...new Set(words)];
  const terms = unique.filter((word) => !STOP_WORDS.has(word)).slice(0, MAX_TERMS);
  if (terms.length === 0) return undefined;
  // The words hold only letters, digits and marks, so quoting them needs no escaping.
  return terms.map((term) => `"${term}"`).join(' OR ');
}
