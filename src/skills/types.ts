/**
 * The shapes of skills: a folder with a `SKILL.md` (Agent Skills format) as rein loads it,
 * and what loading reports about the files it could not use.
 */

/**
 * One skill, loaded from `<dir>/SKILL.md`. The front matter is validated; `body` is the
 * markdown after it, which is what the model reads once the skill is active.
 */
export interface Skill {
  /** Lowercase letters, digits and single hyphens, at most 64 characters; equals the folder name. */
  name: string;
  /** What the skill does and when to use it: the model (and harness matching) decide from this. */
  description: string;
  /**
   * The tools the skill's workflow needs, as written (`read_file`, `github__*`,
   * `bash(git status*)`). While the skill is active, the run is narrowed to these (by the
   * name before any parenthesis) plus the skill tools. Absent: the skill narrows nothing.
   */
  allowedTools?: string[];
  /** Only the user can activate it (`/skill:name`): it is left out of the catalog, matching and `load_skill`. */
  disableModelInvocation: boolean;
  /** The skill's folder (absolute). Files the body mentions are relative to it. */
  dir: string;
  /** The `SKILL.md` file (absolute). */
  file: string;
  /** The markdown after the front matter, trimmed. */
  body: string;
}

/** A file that was skipped while loading, and why (written for the person who maintains it). */
export interface SkillDiagnostic {
  file: string;
  reason: string;
}

/** What {@link loadSkills} found. */
export interface LoadSkillsResult {
  /** Valid skills, in precedence order (the first of a name wins). */
  skills: Skill[];
  /** Files that were skipped, each with a reason; the other skills still load. */
  diagnostics: SkillDiagnostic[];
}

/** How a skill became active in a run. */
export type SkillMode =
  /** The user wrote `/skill:name`. */
  | 'explicit'
  /** The harness matched the input against the skill's description. */
  | 'matched'
  /** The model called `load_skill`. */
  | 'model'
  /** Restored from an earlier part of the run (a resume), without a new injection. */
  | 'restored';
