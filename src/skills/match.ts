/**
 * Harness matching, the second loading mode: the harness compares the user's input with
 * each skill's description and name and activates the skills that share enough keywords,
 * before the model sees the turn.
 */
import { keywords } from './keywords.js';
import type { Skill } from './types.js';

/** Options of {@link matchSkills}. */
export interface MatchOptions {
  /** Distinct shared keywords a skill needs to match (default 2): one shared word is coincidence. */
  minMatches?: number;
  /** At most this many skills match one input, best first (default 2). */
  limit?: number;
}

/** A matched skill and the keywords that matched it (for logs: "why was this injected?"). */
export interface SkillMatch {
  skill: Skill;
  matched: string[];
}

/**
 * Skills whose description and name share at least `minMatches` keywords with `input`,
 * best first (most shared keywords, then the larger share of the skill's own keywords,
 * then name), at most `limit`. Deterministic. Skills with `disable-model-invocation` never
 * match: in the Agent Skills format only the user may activate those (`/skill:name`).
 *
 * @example
 * const [skill] = matchSkills('merge these two PDF files', skills); // the pdf skill, if any
 */
export function matchSkills(input: string, skills: readonly Skill[], options: MatchOptions = {}): Skill[] {
  return explainMatches(input, skills, options).map((m) => m.skill);
}

/** {@link matchSkills}, with the keywords that matched each skill. */
export function explainMatches(input: string, skills: readonly Skill[], options: MatchOptions = {}): SkillMatch[] {
  const minMatches = Math.max(1, options.minMatches ?? 2);
  const limit = Math.max(0, options.limit ?? 2);
  const words = new Set(keywords(input));
  if (words.size === 0 || limit === 0) return [];
  const scored: Array<SkillMatch & { coverage: number }> = [];
  for (const skill of skills) {
    if (skill.disableModelInvocation) continue;
    const own = skillKeywords(skill);
    const matched = own.filter((word) => words.has(word));
    if (matched.length < minMatches) continue;
    scored.push({ skill, matched, coverage: matched.length / own.length });
  }
  scored.sort(
    (a, b) =>
      b.matched.length - a.matched.length ||
      b.coverage - a.coverage ||
      (a.skill.name < b.skill.name ? -1 : a.skill.name > b.skill.name ? 1 : 0),
  );
  return scored.slice(0, limit).map(({ skill, matched }) => ({ skill, matched }));
}

// Keywords of a skill are computed once per skill object; skills are immutable once loaded.
const cache = new WeakMap<Skill, string[]>();

function skillKeywords(skill: Skill): string[] {
  let words = cache.get(skill);
  if (words === undefined) {
    words = keywords(`${skill.name.replace(/-/g, ' ')} ${skill.description}`);
    cache.set(skill, words);
  }
  return words;
}
