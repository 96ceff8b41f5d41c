/**
 * Model-decided mode, the third loading mode: the model reads the catalog in its system
 * layer, calls `load_skill` and gets the instructions back as the tool result; the
 * skill's other files are disclosed one at a time through `read_skill_file`.
 */
import { closestName } from '../tools/suggest.js';
import { defineTool } from '../tools/define.js';
import type { Tool, ToolOutput } from '../tools/types.js';
import { formatFileList, listSkillFiles, readSkillText, resolveSkillPath } from './files.js';
import { LOAD_SKILL_TOOL, READ_SKILL_FILE_TOOL, renderSkill } from './render.js';
import type { SkillSession } from './session.js';
import type { Skill } from './types.js';

/** Options of {@link createSkillTools}. */
export interface SkillToolsOptions {
  /** `read_skill_file` shows about this many characters per call (default 12 000); the model pages with `startLine`. */
  maxChars?: number;
  /** Files are read up to this many bytes (default 1 MiB). */
  maxFileBytes?: number;
}

/** The `details` of a successful `load_skill` result. */
export interface LoadSkillDetails {
  skill: string;
  files: string[];
}

/**
 * The session of a run: one {@link SkillSession}, or a function from the run id to its
 * session, for an agent whose tools outlive a run.
 */
export type SessionFor = SkillSession | ((runId: string) => SkillSession);

/**
 * `load_skill` and `read_skill_file` over `skills`, activating skills in `session`. Both
 * are `read` / `pure`: they only read the skill folders. A skill with
 * `disable-model-invocation` is refused to the model unless the user activated it in
 * this run (`/skill:name`).
 *
 * @example
 * const session = new SkillSession(skills);
 * const agent = new Agent({ model, system: skillsCatalog(skills), tools: [...createSkillTools(skills, session)] });
 */
export function createSkillTools(skills: readonly Skill[], session: SessionFor, options: SkillToolsOptions = {}): Tool[] {
  const maxChars = options.maxChars ?? 12_000;
  const maxBytes = options.maxFileBytes ?? 1024 * 1024;
  const sessionOf = typeof session === 'function' ? session : () => session;
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const modelInvocable = () => skills.filter((s) => !s.disableModelInvocation).map((s) => s.name);

  /** The skill the model named, or an error result saying what exists. */
  const lookup = (name: string, runId: string): Skill | ToolOutput => {
    const skill = byName.get(name) ?? byName.get(name.trim().toLowerCase());
    const available = modelInvocable();
    const list = available.length > 0 ? `available skills: ${available.join(', ')}` : 'no skill can be loaded by the model';
    if (skill === undefined) {
      const suggestion = closestName(name, available);
      return error(`unknown skill "${name}"${suggestion ? `: did you mean "${suggestion}"?` : ''}; ${list}`);
    }
    // A user-only skill the user started in this run is the model's to read and reload.
    if (skill.disableModelInvocation && !sessionOf(runId).isActive(skill.name)) {
      return error(`skill "${skill.name}" can only be started by the user (with /skill:${skill.name}); ${list}`);
    }
    return skill;
  };

  const loadSkill = defineTool({
    name: LOAD_SKILL_TOOL,
    description:
      'Load a skill: returns its instructions, which you then follow, and the list of its files. ' +
      'Call it when the task matches a skill of the available_skills catalog, before starting the task.',
    parameters: {
      type: 'object',
      properties: { name: { type: 'string', description: 'The skill name, exactly as in the catalog.' } },
      required: ['name'],
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    execute: ({ name }, ctx): ToolOutput => {
      const found = lookup(String(name), ctx.runId);
      if (!isSkill(found)) return found;
      sessionOf(ctx.runId).activate(found, 'model');
      // The instructions come back on every call, even for an active skill: the earlier
      // result may have been compacted away, and the model asked because it needs them.
      const listing = listSkillFiles(found.dir);
      const details: LoadSkillDetails = { skill: found.name, files: listing.files };
      return { content: renderSkill(found, listing), details };
    },
  });

  const readSkillFile = defineTool({
    name: READ_SKILL_FILE_TOOL,
    description:
      "Read a file of a skill's folder (such as references/guide.md), or list a folder of it. " +
      'Paths are relative to the skill folder, as in the instructions load_skill returned. Long files come in parts: pass startLine to read on.',
    parameters: {
      type: 'object',
      properties: {
        skill: { type: 'string', description: 'The skill name.' },
        path: { type: 'string', description: 'Path inside the skill folder, e.g. "references/api.md"; "." lists the whole folder.' },
        startLine: { type: 'integer', minimum: 1, default: 1, description: 'First line to show (1-based), for reading on in a long file.' },
      },
      required: ['skill', 'path'],
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    execute: ({ skill: name, path, startLine }, ctx): ToolOutput => {
      const found = lookup(String(name), ctx.runId);
      if (!isSkill(found)) return found;
      const target = resolveSkillPath(found.dir, String(path));
      if (!target.ok) {
        const listing = listSkillFiles(found.dir);
        const hint =
          listing.files.length > 0
            ? `\nFiles of "${found.name}":\n${formatFileList(listing)}`
            : `\nThe skill "${found.name}" has no other files.`;
        return error(`${target.reason}${hint}`);
      }
      if (target.kind === 'directory') {
        const listing = listSkillFiles(found.dir, target.relative);
        const where = target.relative === '' ? `the skill "${found.name}"` : `${target.relative}/ of the skill "${found.name}"`;
        return listing.files.length === 0 ? `No files in ${where}.` : `Files in ${where}:\n${formatFileList(listing)}`;
      }
      const first = typeof startLine === 'number' ? startLine : 1;
      const window = readSkillText(target.path, first, maxChars, maxBytes);
      if (window.binary) return error(`${target.relative} is a binary file (${target.size} bytes) and cannot be shown as text`);
      if (window.total === 0) return `${target.relative} is empty.`;
      if (first > window.total) return error(`${target.relative} has ${window.total} lines; startLine ${first} is past the end`);
      const notes: string[] = [];
      if (window.from > 1 || window.to < window.total) {
        notes.push(
          `[lines ${window.from}–${window.to} of ${window.total}${window.to < window.total ? `; call again with startLine: ${window.to + 1} to read on` : ''}]`,
        );
      }
      if (target.size > maxBytes) notes.push(`[only the first ${maxBytes} bytes of ${target.size} can be read]`);
      return notes.length === 0 ? window.text : `${window.text}\n${notes.join('\n')}`;
    },
  });

  return [loadSkill, readSkillFile];
}

function isSkill(value: Skill | ToolOutput): value is Skill {
  return typeof value === 'object' && 'body' in value && 'dir' in value;
}

function error(text: string): ToolOutput {
  return { content: text, isError: true };
}
