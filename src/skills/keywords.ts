/**
 * Keywords of a text for harness matching: lowercased words, stop-words and the
 * boilerplate of skill descriptions removed, lightly stemmed so "merging", "merged" and
 * "merges" meet. Deliberately simple and deterministic: a shared word is evidence only
 * when it carries meaning.
 */

/** English function words, plus the words every skill description uses ("use when the user asks"). */
const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each either else etc even ever every few for from further get gets getting got ' +
    'had has have having he her here hers herself him himself his how however i if in into is it its itself just let lets like ' +
    'make makes many may me might more most much must my myself need needs no nor not now of off often on once one only onto or ' +
    'other others our ours ourselves out over own per please rather same she should since so some something such than that the ' +
    'their theirs them themselves then there these they this those though through thus to too under until up upon us very via ' +
    'was we were what whatever when whenever where whether which while who whom whose why will with within without would yet you ' +
    'your yours yourself yourselves ' +
    // Boilerplate of descriptions and requests: present in all of them, evidence of none.
    'ask asks asked asking help helps helping instruction instructions mention mentions mentioned provide provides ' +
    'skill skills task tasks use used uses using user users want wants wanted way ways work works working'
  ).split(' '),
);

/** The distinct keyword stems of `text`, in order of first appearance. */
export function keywords(text: string): string[] {
  const seen = new Set<string>();
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (word.length < 2 || STOP_WORDS.has(word) || /^\p{N}+$/u.test(word)) continue;
    const stemmed = stem(word);
    if (!STOP_WORDS.has(stemmed)) seen.add(stemmed);
  }
  return [...seen];
}

/**
 * A light suffix-stripping stemmer (plural, -ing, -ed, a final e), enough for the
 * inflections of one word to meet; not a linguistic stemmer, on purpose (no dependency,
 * predictable).
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (/(?:x|ch|sh|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length > 4) w = undouble(w.slice(0, -2));
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

/** "running" → "runn" → "run"; "committed" → "committ" → "commit". */
function undouble(w: string): string {
  const last = w.at(-1);
  return w.length > 3 && last === w.at(-2) && last !== undefined && !'lsz'.includes(last) ? w.slice(0, -1) : w;
}
