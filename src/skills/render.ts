/**
 * What the model reads about skills: the catalog in the system layer (model-decided mode)
 * and a skill's instructions once it is active (every mode).
 */
import type { Message } from '../model/types.js';
import { formatFileList, listSkillFiles } from './files.js';
import type { Skill } from './types.js';

/** The tool the model loads a skill with. */
export const LOAD_SKILL_TOOL = 'load_skill';
/** The tool the model reads a skill's other files with. */
export const READ_SKILL_FILE_TOOL = 'read_skill_file';

/**
 * The system-layer text for model-decided loading: each model-invocable skill's name and
 * description, and how to load one. Empty when there is none, so callers can append it
 * unconditionally. Skills with `disable-model-invocation` are left out (only the user can
 * start them).
 *
 * @example
 * const system = [basePrompt, skillsCatalog(skills)].filter(Boolean).join('\n\n');
 */
export function skillsCatalog(skills: readonly Skill[]): string {
  const visible = skills.filter((skill) => !skill.disableModelInvocation);
  if (visible.length === 0) return '';
  const lines = [
    '<available_skills>',
    `Skills are instructions for particular kinds of task. When the task at hand matches a skill's description, call ${LOAD_SKILL_TOOL} with its name before you start, then follow the instructions it returns. Files the instructions mention are read with ${READ_SKILL_FILE_TOOL}. Do not load a skill the task does not need.`,
  ];
  for (const skill of visible) lines.push(`<skill name="${skill.name}">${escapeText(skill.description)}</skill>`);
  lines.push('</available_skills>');
  return lines.join('\n');
}

/**
 * A skill's instructions as the model reads them, in an unambiguous wrapper, followed by
 * the files of its folder it can read with `read_skill_file` (names only: their contents
 * are disclosed when asked for). `listing` is the folder's, when the caller has it already.
 */
export function renderSkill(skill: Skill, listing: { files: string[]; truncated: number } = listSkillFiles(skill.dir)): string {
  const parts = [
    `<skill name="${skill.name}">`,
    skill.body === '' ? '(this skill has no instructions beyond its description)' : skill.body,
    '</skill>',
  ];
  if (listing.files.length > 0) {
    parts.push(
      `Files of the skill "${skill.name}" (read one with ${READ_SKILL_FILE_TOOL} { "skill": "${skill.name}", "path": "<file>" }; paths in the instructions are relative to the skill folder):`,
      formatFileList(listing),
    );
  }
  return parts.join('\n');
}

/**
 * The names of the skills whose instructions a history holds: injected into a user turn
 * (explicit, matched) or returned by a successful `load_skill`. A resumed run hands them
 * to {@link SkillSession.restore}, so nothing is injected twice and `allowed-tools` still
 * narrows.
 */
export function skillNamesIn(messages: readonly Message[]): string[] {
  const names = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') continue;
    if (message.role === 'tool' && (message.toolName !== LOAD_SKILL_TOOL || message.isError)) continue;
    const parts = typeof message.content === 'string' ? [message.content] : message.content.map((p) => (p.type === 'text' ? p.text : ''));
    for (const text of parts) for (const match of text.matchAll(/^<skill name="([a-z0-9-]+)">$/gm)) names.add(match[1] as string);
  }
  return [...names];
}

/** Keeps a description from closing the element it is written in. */
function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
