/**
 * Explicit mode, the first loading mode: the user writes `/skill:name` anywhere in the
 * input and the harness injects that skill's body. Works for every skill, including those
 * with `disable-model-invocation` (that flag exists for exactly this).
 */
import { closestName } from '../tools/suggest.js';
import type { Skill } from './types.js';

/** A `/skill:name` naming no loaded skill. */
export interface UnknownSkill {
  /** The name as written. */
  name: string;
  /** The closest loaded skill name, when one is plausibly meant. */
  suggestion?: string;
  /** Ready to show the user: what is wrong and what exists. */
  message: string;
}

/** What {@link parseSkillCommands} found in an input. */
export interface SkillCommands {
  /**
   * The input without the `/skill:name` tokens of known skills (their bodies are injected
   * instead), whitespace tidied. Tokens of unknown skills are left as written. May be
   * empty when the input was only commands.
   */
  text: string;
  /** The skills named, once each, in order of appearance. */
  activated: Skill[];
  unknown: UnknownSkill[];
}

/** `/skill:` at the start of the input or after whitespace or an opening bracket; the name ends at whitespace or punctuation. */
const COMMAND = /(^|[\s([{])\/skill:([A-Za-z0-9_-]*)([ \t]*)/g;

/**
 * Finds the `/skill:name` commands of an input.
 *
 * @example
 * const { text, activated } = parseSkillCommands('/skill:release-notes for v2.1', skills);
 * // text: 'for v2.1', activated: [the release-notes skill]
 */
export function parseSkillCommands(input: string, skills: readonly Skill[]): SkillCommands {
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const activated: Skill[] = [];
  const unknown: UnknownSkill[] = [];
  const text = input.replace(COMMAND, (token: string, before: string, name: string) => {
    // A trailing hyphen or underscore is punctuation after the name ("/skill:pdf-").
    const clean = name.replace(/[-_]+$/, '');
    const skill = byName.get(clean) ?? byName.get(clean.toLowerCase());
    if (skill) {
      if (!activated.includes(skill)) activated.push(skill);
      // The spaces after the token go with it: "fix /skill:x this" → "fix this"; line breaks stay.
      return before;
    }
    if (!unknown.some((u) => u.name === clean)) unknown.push(unknownSkill(clean, skills));
    return token;
  });
  return { text: activated.length === 0 ? input : text.trim(), activated, unknown };
}

function unknownSkill(name: string, skills: readonly Skill[]): UnknownSkill {
  const names = skills.map((s) => s.name);
  const suggestion = name === '' ? undefined : closestName(name, names);
  const available = names.length === 0 ? 'no skills are loaded' : `available: ${names.join(', ')}`;
  const message =
    name === ''
      ? `"/skill:" needs a skill name (${available})`
      : `unknown skill "${name}"${suggestion ? `: did you mean "${suggestion}"?` : ''} (${available})`;
  return suggestion === undefined ? { name, message } : { name, suggestion, message };
}
