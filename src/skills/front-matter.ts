/**
 * Splitting a `SKILL.md` into its YAML front matter and its markdown body, and checking
 * the front matter against the Agent Skills format (agentskills.io/specification).
 */
import type { Skill } from './types.js';

/** The most characters a skill name may have (Agent Skills format). */
export const MAX_NAME_LENGTH = 64;
/** The most characters a description may have (Agent Skills format). */
export const MAX_DESCRIPTION_LENGTH = 1024;

/** Lowercase alphanumerics separated by single hyphens: no leading, trailing or doubled hyphen. */
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** A tool name or glob, optionally with an argument pattern in parentheses (`bash(git *)`). */
const TOOL_ENTRY = /^[A-Za-z0-9_*?.-]+(?:\(.*\))?$/s;

/** The YAML text and the body of a file, or why there is no front matter. */
export type SplitResult = { ok: true; yaml: string; body: string } | { ok: false; reason: string };

/**
 * Splits `---\n<yaml>\n---\n<body>`. The opening fence must be the first line (after an
 * optional byte-order mark); the closing fence is the next line that is exactly `---`.
 */
export function splitFrontMatter(text: string): SplitResult {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const opening = /^---[ \t]*\r?\n/.exec(source);
  if (!opening) {
    return { ok: false, reason: 'no front matter: the file must start with a line "---", then YAML with name and description, then "---"' };
  }
  const rest = source.slice(opening[0].length);
  const closing = /^---[ \t]*$/m.exec(rest);
  if (!closing) return { ok: false, reason: 'front matter is not closed: add a line "---" after the YAML' };
  const yaml = rest.slice(0, closing.index);
  const body = rest.slice(closing.index + closing[0].length).trim();
  return { ok: true, yaml, body };
}

/** The validated front-matter fields of a skill. */
export type SkillMeta = Pick<Skill, 'name' | 'description' | 'allowedTools' | 'disableModelInvocation'>;

/**
 * Checks parsed front matter. `folder` is the name of the skill's folder, which `name`
 * must equal. Unknown keys (`license`, `metadata`, `compatibility`, …) are allowed.
 * Answers every problem at once, so one edit fixes the file.
 */
export function checkFrontMatter(data: unknown, folder: string): { ok: true; meta: SkillMeta } | { ok: false; reason: string } {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, reason: 'front matter must be a YAML mapping with at least name and description' };
  }
  const fields = data as Record<string, unknown>;
  const problems: string[] = [];
  const name = fields.name;
  if (name === undefined) problems.push(`name is missing: add "name: ${folder}"`);
  else if (typeof name !== 'string') problems.push(`name must be a string; got ${describe(name)}`);
  else if (name.length > MAX_NAME_LENGTH) problems.push(`name is ${name.length} characters; at most ${MAX_NAME_LENGTH} are allowed`);
  else if (!NAME.test(name)) problems.push(`name "${name}" must be lowercase letters, digits and single hyphens (e.g. "pdf-tools")`);
  else if (name !== folder) problems.push(`name "${name}" must equal its folder name "${folder}": rename one of them`);

  const description = fields.description;
  if (description === undefined) problems.push('description is missing: say what the skill does and when to use it');
  else if (typeof description !== 'string') problems.push(`description must be a string; got ${describe(description)}`);
  else if (description.trim() === '') problems.push('description is empty: say what the skill does and when to use it');
  else if (description.length > MAX_DESCRIPTION_LENGTH) {
    problems.push(`description is ${description.length} characters; at most ${MAX_DESCRIPTION_LENGTH} are allowed`);
  }

  const tools = parseAllowedTools(fields['allowed-tools']);
  if (!tools.ok) problems.push(tools.reason);

  const disable = fields['disable-model-invocation'];
  if (disable !== undefined && typeof disable !== 'boolean') {
    problems.push(`disable-model-invocation must be true or false; got ${describe(disable)}`);
  }

  if (problems.length > 0) return { ok: false, reason: problems.join('; ') };
  const meta: SkillMeta = {
    name: name as string,
    description: (description as string).trim(),
    disableModelInvocation: disable === true,
  };
  if (tools.ok && tools.value !== undefined) meta.allowedTools = tools.value;
  return { ok: true, meta };
}

/**
 * `allowed-tools` as a list: a string separated by spaces or commas (spaces inside
 * parentheses belong to the entry: `bash(git status*)`), or a YAML list of strings.
 */
export function parseAllowedTools(value: unknown): { ok: true; value: string[] | undefined } | { ok: false; reason: string } {
  if (value === undefined || value === null) return { ok: true, value: undefined };
  let entries: string[];
  if (typeof value === 'string') entries = splitOutsideParens(value);
  else if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
    entries = (value as string[]).map((item) => item.trim()).filter((item) => item !== '');
  } else {
    return { ok: false, reason: `allowed-tools must be a string ("read_file grep") or a list of tool names; got ${describe(value)}` };
  }
  const bad = entries.filter((entry) => !TOOL_ENTRY.test(entry));
  if (bad.length > 0) {
    return { ok: false, reason: `allowed-tools has entries that are not tool names: ${bad.map((b) => JSON.stringify(b)).join(', ')}` };
  }
  return { ok: true, value: entries };
}

/** The tool name of an `allowed-tools` entry: what comes before an argument pattern. */
export function toolNameOf(entry: string): string {
  const paren = entry.indexOf('(');
  return paren === -1 ? entry : entry.slice(0, paren);
}

function splitOutsideParens(text: string): string[] {
  const entries: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth++;
    else if (char === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === ',' || /\s/.test(char))) {
      if (current !== '') entries.push(current);
      current = '';
    } else current += char;
  }
  if (current !== '') entries.push(current);
  return entries;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}
