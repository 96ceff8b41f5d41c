/**
 * The skills of one run: which are active, how they got there, what to inject, and which
 * tools they leave the model.
 */
import { ReinError } from '../errors.js';
import { FINAL_ANSWER_TOOL } from '../tools/final-answer.js';
import { nameGlobMatcher } from '../tools/name-glob.js';
import { parseSkillCommands, type UnknownSkill } from './commands.js';
import { toolNameOf } from './front-matter.js';
import { matchSkills, type MatchOptions } from './match.js';
import { LOAD_SKILL_TOOL, READ_SKILL_FILE_TOOL, renderSkill } from './render.js';
import type { Skill, SkillMode } from './types.js';

/** Options of a {@link SkillSession}. */
export interface SkillSessionOptions {
  /**
   * Tools that stay available whatever the active skills allow (default: `load_skill`,
   * `read_skill_file` and `final_answer`, which the harness itself needs).
   */
  alwaysAllowedTools?: readonly string[];
}

/** An active skill and how it became active. */
export interface ActiveSkill {
  skill: Skill;
  mode: SkillMode;
}

/** What {@link SkillSession.prepareInput} made of a user input. */
export interface PreparedInput {
  /** The input for the model, without `/skill:name` tokens of known skills. */
  text: string;
  /**
   * The instructions of the skills newly activated by this input, wrapped, to put in the
   * user turn before `text`; undefined when nothing new was activated.
   */
  injection: string | undefined;
  /** The skills this input newly activated, in order: explicit first, then matched. */
  activated: ActiveSkill[];
  /** `/skill:name` tokens naming no loaded skill. */
  unknown: UnknownSkill[];
}

/** Options of {@link SkillSession.prepareInput}. */
export interface PrepareInputOptions {
  /** Harness matching: on by default; `false` turns it off, an object tunes it. */
  match?: boolean | MatchOptions;
}

/** What {@link SkillSession.checkTool} answers. */
export type ToolCheck = { allowed: true } | { allowed: false; reason: string };

const DEFAULT_ALWAYS_ALLOWED = [LOAD_SKILL_TOOL, READ_SKILL_FILE_TOOL, FINAL_ANSWER_TOOL];

/**
 * Tracks the skills active in one run, from any of the three loading modes, and injects
 * each skill once per run.
 *
 * `allowed-tools` semantics: a skill that declares it narrows the run's tools, while it is
 * active, to what it lists. Several active skills that declare it allow the union of their
 * lists (each workflow keeps what it needs); skills that declare nothing add nothing and
 * lift nothing. The skill tools and `final_answer` stay allowed. With no active skill
 * declaring `allowed-tools`, nothing is narrowed.
 *
 * @example
 * const session = new SkillSession(skills);
 * const { text, injection } = session.prepareInput(userInput);
 * const input = injection ? `${injection}\n\n${text}` : text;
 * const tools = session.filterTools(allTools); // before each turn
 */
export class SkillSession {
  readonly skills: readonly Skill[];
  private readonly byName: Map<string, Skill>;
  private readonly activeSkills = new Map<string, ActiveSkill>();
  private readonly alwaysAllowed: readonly string[];
  private readonly listeners = new Set<() => void>();
  private allowedCache: { patterns: Set<string>; test: (name: string) => boolean } | undefined | null = null;

  constructor(skills: readonly Skill[], options: SkillSessionOptions = {}) {
    this.skills = skills;
    this.byName = new Map(skills.map((skill) => [skill.name, skill]));
    this.alwaysAllowed = options.alwaysAllowedTools ?? DEFAULT_ALWAYS_ALLOWED;
  }

  /** The loaded skill of that name. */
  get(name: string): Skill | undefined {
    return this.byName.get(name);
  }

  /** Whether the skill of that name is active in this run. */
  isActive(name: string): boolean {
    return this.activeSkills.has(name);
  }

  /** The active skills, in order of activation. */
  active(): ActiveSkill[] {
    return [...this.activeSkills.values()];
  }

  /**
   * Activates a skill. Answers the text to inject (the wrapped instructions and the list
   * of the skill's files) the first time a skill is activated in the run by `explicit` or
   * `matched`; undefined when it was already active, or for `model` (the `load_skill`
   * result carries the instructions) and `restored` (the history already has them).
   * Throws a `not_found` {@link ReinError} for a name no loaded skill has.
   */
  activate(skill: Skill | string, mode: SkillMode = 'explicit'): string | undefined {
    const found = typeof skill === 'string' ? this.byName.get(skill) : skill;
    if (found === undefined) {
      throw new ReinError('not_found', 'correctable', `unknown skill "${String(skill)}": loaded skills are ${this.names() || '(none)'}`);
    }
    if (this.activeSkills.has(found.name)) return undefined;
    this.activeSkills.set(found.name, { skill: found, mode });
    this.changed();
    return mode === 'explicit' || mode === 'matched' ? renderSkill(found) : undefined;
  }

  /**
   * Marks skills active again without injecting them, for a resumed run whose history
   * already holds their instructions. Answers the names that no loaded skill has.
   */
  restore(names: Iterable<string>): string[] {
    const missing: string[] = [];
    for (const name of names) {
      if (this.byName.has(name)) this.activate(name, 'restored');
      else missing.push(name);
    }
    return missing;
  }

  /**
   * Explicit and harness-matched loading for one user input: activates the skills named
   * by `/skill:name`, then (unless `match: false`) those whose description matches the
   * rest of the input, and answers the text to send and the instructions to inject.
   * Skills already active are not injected again.
   */
  prepareInput(input: string, options: PrepareInputOptions = {}): PreparedInput {
    const commands = parseSkillCommands(input, this.skills);
    const activated: ActiveSkill[] = [];
    const injections: string[] = [];
    const add = (skill: Skill, mode: SkillMode) => {
      const injection = this.activate(skill, mode);
      if (injection === undefined) return;
      injections.push(injection);
      activated.push({ skill, mode });
    };
    for (const skill of commands.activated) add(skill, 'explicit');
    if (options.match !== false) {
      const candidates = this.skills.filter((skill) => !this.activeSkills.has(skill.name));
      const matchOptions = typeof options.match === 'object' ? options.match : {};
      for (const skill of matchSkills(commands.text, candidates, matchOptions)) add(skill, 'matched');
    }
    return {
      text: commands.text,
      injection: injections.length > 0 ? injections.join('\n\n') : undefined,
      activated,
      unknown: commands.unknown,
    };
  }

  /**
   * The tool names and globs the active skills allow (plus the always-allowed tools), or
   * undefined when no active skill narrows the tools. Argument patterns of entries
   * (`bash(git *)`) are dropped here: narrowing is by tool; the patterns stay on the skill
   * for a permission policy.
   */
  allowedTools(): Set<string> | undefined {
    return this.allowed()?.patterns;
  }

  /** Whether the active skills leave the tool of that name to the model. */
  isToolAllowed(name: string): boolean {
    const allowed = this.allowed();
    return allowed === undefined || allowed.test(name);
  }

  /**
   * {@link isToolAllowed} with a reason the model can act on, for a `beforeToolCall` hook
   * that blocks calls to tools the active skills do not allow.
   */
  checkTool(name: string): ToolCheck {
    if (this.isToolAllowed(name)) return { allowed: true };
    const narrowing = this.active()
      .filter((a) => a.skill.allowedTools !== undefined)
      .map((a) => `"${a.skill.name}"`);
    const which = narrowing.length === 1 ? `skill ${narrowing[0]} is` : `skills ${narrowing.join(', ')} are`;
    const allowed = [...(this.allowedTools() ?? [])].join(', ');
    return { allowed: false, reason: `tool "${name}" is not allowed while ${which} active; allowed tools: ${allowed}` };
  }

  /**
   * The tools the model may be offered now: `tools` itself when no active skill narrows them,
   * else those the skills allow. The same input gets the same array back until the skills
   * change, so what is built per tool list downstream (tool selection, token counts) is kept.
   * Treat the result as read-only.
   */
  filterTools<T extends { name: string }>(tools: readonly T[]): T[] {
    const allowed = this.allowed();
    if (allowed === undefined) return tools as T[];
    const last = this.filtered;
    if (last !== undefined && last.input === tools && last.allowed === allowed) return last.output as T[];
    const output = tools.filter((tool) => allowed.test(tool.name));
    this.filtered = { input: tools, allowed, output };
    return output;
  }

  /** Calls `listener` whenever a skill is activated; returns an unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private filtered: { input: readonly unknown[]; allowed: object; output: readonly unknown[] } | undefined;

  private allowed(): { patterns: Set<string>; test: (name: string) => boolean } | undefined {
    if (this.allowedCache !== null) return this.allowedCache;
    const declaring = this.active().filter((a) => a.skill.allowedTools !== undefined);
    if (declaring.length === 0) return (this.allowedCache = undefined);
    const patterns = new Set(this.alwaysAllowed);
    for (const { skill } of declaring) for (const entry of skill.allowedTools ?? []) patterns.add(toolNameOf(entry));
    return (this.allowedCache = { patterns, test: nameGlobMatcher(patterns) });
  }

  private changed(): void {
    this.allowedCache = null;
    for (const listener of [...this.listeners]) listener();
  }

  private names(): string {
    return this.skills.map((s) => s.name).join(', ');
  }
}
