/**
 * Where permission rules come from besides code: `permissions` in `.rein/settings.json`
 * (the project's, from the working directory up to the repository root, and the user's in
 * `~/.rein/`) and the CLI's `--allow` / `--ask` / `--deny` / `--mode` flags.
 */
import { join, resolve } from 'node:path';
import { readJsonFile } from '../config/json-file.js';
import { ReinError } from '../errors.js';
import { isRecord } from '../util/json.js';
import { projectDirs } from '../util/repo-root.js';
import { parsePermissionMode, type PermissionDecision, type PermissionMode, type PermissionOptions } from './policy.js';
import { parsePermissionRule } from './rule.js';

/** One problem found in a settings file: which file, which key, what to do. */
export interface PermissionDiagnostic {
  file: string;
  /** `permissions.allow[2]`; absent when the whole file is the problem. */
  key?: string;
  message: string;
}

/** What {@link loadPermissionsConfig} found. */
export interface LoadedPermissions {
  /** Every good setting, merged: project files nearest first, then the user's. */
  options: PermissionOptions;
  diagnostics: PermissionDiagnostic[];
  /** The settings files that were read, in merge order. */
  files: string[];
}

const LISTS = ['allow', 'ask', 'deny'] as const;
const KEYS = new Set(['mode', 'allow', 'ask', 'deny', 'defaults']);
const RISKS = new Set(['read', 'write', 'execute', 'unknown']);

/**
 * Options from the CLI flags. Each flag value may hold several rules separated by commas
 * outside parentheses and braces (`--allow read_file,grep`). Throws one `config`
 * {@link ReinError} naming every bad rule or mode.
 *
 * @example
 * permissionsFromFlags({ allow: ['bash(git status*)', 'read_file,grep'], mode: 'acceptEdits' });
 */
export function permissionsFromFlags(flags: { allow?: string[]; ask?: string[]; deny?: string[]; mode?: string }): PermissionOptions {
  const options: PermissionOptions = {};
  const problems: string[] = [];
  for (const list of LISTS) {
    const rules = (flags[list] ?? []).flatMap(splitRules);
    for (const rule of rules) {
      try {
        parsePermissionRule(rule);
      } catch (error) {
        problems.push(`--${list}: ${(error as Error).message}`);
      }
    }
    if (rules.length > 0) options[list] = rules;
  }
  if (flags.mode !== undefined) {
    try {
      options.mode = parsePermissionMode(flags.mode);
    } catch (error) {
      problems.push(`--mode: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ReinError('config', 'fatal', problems.join('\n'));
  return options;
}

/** Splits `a,b(c, d),{e,f}` on the commas outside parentheses and braces. */
function splitRules(value: string): string[] {
  const rules: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of value) {
    if (c === '(' || c === '{') depth++;
    else if ((c === ')' || c === '}') && depth > 0) depth--;
    if (c === ',' && depth === 0) {
      rules.push(current);
      current = '';
    } else current += c;
  }
  rules.push(current);
  return rules.map((r) => r.trim()).filter((r) => r !== '');
}

/**
 * Layers of options merged into one: rule lists concatenated in order, the first mode and
 * the first default per risk win. Pass the strongest layer first (flags, then files).
 */
export function mergePermissionOptions(...layers: PermissionOptions[]): PermissionOptions {
  const merged: PermissionOptions = {};
  for (const layer of layers) {
    if (merged.mode === undefined && layer.mode !== undefined) merged.mode = layer.mode;
    for (const list of LISTS) {
      if (layer[list]?.length) merged[list] = [...(merged[list] ?? []), ...(layer[list] ?? [])];
    }
    if (layer.defaults) merged.defaults = { ...layer.defaults, ...merged.defaults };
  }
  return merged;
}

/**
 * Reads `permissions` from the project's `.rein/settings.json` files (from `cwd` up to the
 * folder holding `.git`; only `cwd` itself outside a repository) and from
 * `<home>/.rein/settings.json`. One bad file or rule is reported and skipped; the rest
 * still apply. A project file may not choose `yolo`: only the user's file or a flag can.
 *
 * @example
 * const { options, diagnostics } = await loadPermissionsConfig({ cwd: process.cwd(), home: os.homedir() });
 * for (const d of diagnostics) console.warn(`${d.file}${d.key ? ` (${d.key})` : ''}: ${d.message}`);
 */
export async function loadPermissionsConfig(where: { cwd: string; home: string }): Promise<LoadedPermissions> {
  const user = join(resolve(where.home), '.rein', 'settings.json');
  const project = projectDirs(where.cwd)
    .map((dir) => join(dir, '.rein', 'settings.json'))
    .filter((f) => f !== user);
  const diagnostics: PermissionDiagnostic[] = [];
  const layers: PermissionOptions[] = [];
  const files: string[] = [];
  for (const [file, isProject] of [...project.map((f) => [f, true] as const), [user, false] as const]) {
    const layer = await readSettings(file, isProject, diagnostics);
    if (layer) {
      layers.push(layer);
      files.push(file);
    }
  }
  return { options: mergePermissionOptions(...layers), diagnostics, files };
}

/** One settings file's `permissions`, or undefined when the file is absent or unusable. */
async function readSettings(file: string, isProject: boolean, diagnostics: PermissionDiagnostic[]): Promise<PermissionOptions | undefined> {
  const read = await readJsonFile(file);
  if (read.kind === 'missing') return undefined;
  if (read.kind === 'unreadable') {
    diagnostics.push({ file, message: `cannot read it (${read.reason}): fix its permissions or remove it` });
    return undefined;
  }
  if (read.kind === 'invalid') {
    diagnostics.push({ file, message: `not valid JSON (${read.where}): fix the syntax; its permissions are ignored until then` });
    return undefined;
  }
  const settings = read.data;
  if (!isRecord(settings)) {
    diagnostics.push({ file, message: 'must hold a JSON object such as {"permissions": {"allow": ["read_file"]}}' });
    return undefined;
  }
  const section = settings.permissions;
  if (section === undefined) return {};
  if (!isRecord(section)) {
    diagnostics.push({ file, key: 'permissions', message: 'must be an object with mode, allow, ask, deny or defaults' });
    return undefined;
  }
  const report = (key: string, message: string) => diagnostics.push({ file, key: `permissions.${key}`, message });
  const options: PermissionOptions = {};
  for (const key of Object.keys(section)) {
    if (!KEYS.has(key)) report(key, `unknown key: permissions takes ${[...KEYS].join(', ')}`);
  }
  for (const list of LISTS) {
    const value = section[list];
    if (value === undefined) continue;
    if (!Array.isArray(value)) {
      report(list, `must be an array of rules such as ["bash(git status*)"], got ${typeof value}`);
      continue;
    }
    const rules: string[] = [];
    value.forEach((rule: unknown, i) => {
      try {
        rules.push(parsePermissionRule(rule as string).text);
      } catch (error) {
        report(`${list}[${i}]`, `${(error as Error).message} (this rule is skipped; the others apply)`);
      }
    });
    if (rules.length > 0) options[list] = rules;
  }
  if (section.mode !== undefined) readMode(section.mode, isProject, options, report);
  if (section.defaults !== undefined) readDefaults(section.defaults, options, report);
  return options;
}

function readMode(value: unknown, isProject: boolean, options: PermissionOptions, report: (key: string, message: string) => void): void {
  let mode: PermissionMode;
  try {
    mode = parsePermissionMode(value as string);
  } catch (error) {
    report('mode', (error as Error).message);
    return;
  }
  // A repository must not switch off every question for whoever opens it.
  if (mode === 'yolo' && isProject) {
    report('mode', 'a project settings file cannot choose yolo: set it in ~/.rein/settings.json or pass --mode yolo (ignored)');
    return;
  }
  options.mode = mode;
}

function readDefaults(value: unknown, options: PermissionOptions, report: (key: string, message: string) => void): void {
  if (!isRecord(value)) {
    report('defaults', 'must be an object such as {"execute": "deny"}');
    return;
  }
  const defaults: NonNullable<PermissionOptions['defaults']> = {};
  for (const [risk, decision] of Object.entries(value)) {
    if (!RISKS.has(risk)) report(`defaults.${risk}`, 'unknown risk: use read, write, execute or unknown');
    else if (decision !== 'allow' && decision !== 'ask' && decision !== 'deny')
      report(`defaults.${risk}`, `must be "allow", "ask" or "deny", got ${JSON.stringify(decision)}`);
    else defaults[risk as keyof typeof defaults] = decision as PermissionDecision;
  }
  if (Object.keys(defaults).length > 0) options.defaults = defaults;
}
