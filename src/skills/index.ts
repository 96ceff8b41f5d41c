/**
 * `rein/skills`: Agent Skills (`SKILL.md`) for rein. Give `loadSkills()`'s skills to
 * `new Agent({ skills })`; the pieces below are for harnesses that wire skills themselves.
 *
 * @example
 * import { Agent } from 'rein';
 * import { loadSkills } from 'rein/skills';
 * const { skills, diagnostics } = await loadSkills({ cwd: process.cwd() });
 * const agent = new Agent({ model: 'openai/gpt-4o', skills });
 */
export { loadSkills, parseSkillFile } from './load.js';
export type { LoadSkillsOptions } from './load.js';
export type { LoadSkillsResult, Skill, SkillDiagnostic, SkillMode } from './types.js';
export { LOAD_SKILL_TOOL, READ_SKILL_FILE_TOOL, renderSkill, skillNamesIn, skillsCatalog } from './render.js';
export { parseSkillCommands } from './commands.js';
export type { SkillCommands, UnknownSkill } from './commands.js';
export { explainMatches, matchSkills } from './match.js';
export type { MatchOptions, SkillMatch } from './match.js';
export { SkillSession } from './session.js';
export type { ActiveSkill, PreparedInput, PrepareInputOptions, SkillSessionOptions, ToolCheck } from './session.js';
export { createSkillTools } from './tools.js';
export type { LoadSkillDetails, SessionFor, SkillToolsOptions } from './tools.js';
export { skillToolSource } from './tool-source.js';
