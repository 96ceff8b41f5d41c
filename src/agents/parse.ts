/**
 * Reading one agent file: its front matter checked field by field, every problem reported
 * at once with the field and what to write instead (the quality of SKILL.md diagnostics).
 */
import { splitFrontMatter, parseAllowedTools } from '../skills/front-matter.js';
import { KNOWN_PROVIDERS } from '../model/resolve.js';
import { MAX_TIMER_MS } from '../process/timing.js';
import { closestName } from '../tools/suggest.js';
import type { NumericLimit, RunLimits } from '../events.js';
import type { AgentDefinition, AgentDiagnostic, AgentMode } from './types.js';

/** The most characters an agent name may have. */
export const MAX_AGENT_NAME_LENGTH = 64;
/** Lowercase alphanumerics separated by single hyphens (as skill names). */
export const AGENT_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** The fields an agent file may hold. */
export const AGENT_FIELDS = [
  'name',
  'description',
  'model',
  'baseUrl',
  'tools',
  'mode',
  'limits',
  'outputSchema',
  'agents',
  'inputSchema',
] as const;
/** The permission modes, as `--mode` takes them. */
export const AGENT_MODES: readonly AgentMode[] = ['default', 'acceptEdits', 'plan', 'yolo'];

/** Each limit an agent file (and a run request) may set: whole numbers or not, and the unit in words. */
export const LIMIT_FIELDS: Record<NumericLimit, { whole: boolean; what: string; max?: number }> = {
  maxSteps: { whole: true, what: 'model calls' },
  timeoutMs: { whole: true, what: 'milliseconds for the whole run', max: MAX_TIMER_MS },
  maxTokens: { whole: true, what: 'tokens for the whole run' },
  maxCostUsd: { whole: false, what: 'US dollars' },
  noProgressRepeats: { whole: true, what: 'repeats of the same call' },
  maxConsecutiveToolErrors: { whole: true, what: 'failing tool results in a row' },
};

/** Where a file lives decides what it may choose: a project's file cannot switch off every question. */
export interface AgentFileOrigin {
  /** True for a file of the project (`<root>/.rein/agents/`), false for the user's (`~/.rein/agents/`). */
  project: boolean;
}

/** The outcome of reading one file: the agent (with warnings), or only diagnostics. */
export interface ParsedAgentFile {
  agent?: AgentDefinition;
  diagnostics: AgentDiagnostic[];
}

/**
 * Parses the text of `<dir>/<stem>.md`. Errors skip the file; warnings (an unknown field)
 * leave the agent usable. `outputSchema` is checked for shape here; whether it compiles is
 * checked by the loader.
 */
export async function parseAgentFile(text: string, file: string, stem: string, origin: AgentFileOrigin): Promise<ParsedAgentFile> {
  const split = splitFrontMatter(text);
  if (!split.ok) {
    const reason = split.reason.replace('YAML with name and description', 'YAML with name, description and model');
    return { diagnostics: [{ file, message: reason, severity: 'error' }] };
  }
  const { parse } = await import('yaml');
  let data: unknown;
  try {
    data = parse(split.yaml, { prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    const first = (error as Error).message.split('\n')[0] ?? '';
    return { diagnostics: [{ file, message: `invalid YAML in the front matter: ${first}`, severity: 'error' }] };
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return {
      diagnostics: [
        { file, message: 'the front matter must be a YAML mapping with at least name, description and model', severity: 'error' },
      ],
    };
  }
  const fields = data as Record<string, unknown>;
  const diagnostics: AgentDiagnostic[] = [];
  const error = (field: string, message: string): void => void diagnostics.push({ file, field, message, severity: 'error' });

  for (const key of Object.keys(fields)) {
    if ((AGENT_FIELDS as readonly string[]).includes(key)) continue;
    const guess = closestName(key, AGENT_FIELDS);
    diagnostics.push({
      file,
      field: key,
      message: `unknown field, ignored${guess ? ` (did you mean ${guess}?)` : ''}: an agent file takes ${AGENT_FIELDS.join(', ')}`,
      severity: 'warning',
    });
  }

  const name = checkName(fields.name, stem, error);
  const description = checkDescription(fields.description, error);
  const model = checkModel(fields.model, error);
  const baseUrl = checkBaseUrl(fields.baseUrl, error);
  const tools = checkTools(fields.tools, error);
  const mode = checkMode(fields.mode, origin, error);
  const limits = checkLimits(fields.limits, 'limits', error);
  const outputSchema = checkOutputSchema(fields.outputSchema, error);
  const agents = checkAgents(fields.agents, name, error);
  const inputSchema = checkInputSchema(fields.inputSchema, error);

  if (diagnostics.some((d) => d.severity === 'error')) return { diagnostics };
  const agent: AgentDefinition = {
    name: name as string,
    description: description as string,
    model: model as string,
    system: split.body,
    file,
  };
  if (baseUrl !== undefined) agent.baseUrl = baseUrl;
  if (tools !== undefined) agent.tools = tools;
  if (mode !== undefined) agent.mode = mode;
  if (limits !== undefined) agent.limits = limits;
  if (outputSchema !== undefined) agent.outputSchema = outputSchema;
  if (agents !== undefined) agent.agents = agents;
  if (inputSchema !== undefined) agent.inputSchema = inputSchema;
  return { agent, diagnostics };
}

type Report = (field: string, message: string) => void;

function checkName(value: unknown, stem: string, error: Report): string | undefined {
  if (value === undefined) return void error('name', `missing: add "name: ${stem}" (the file name without .md)`);
  if (typeof value !== 'string') return void error('name', `must be a string; got ${describe(value)}`);
  if (value.length > MAX_AGENT_NAME_LENGTH)
    return void error('name', `is ${value.length} characters; at most ${MAX_AGENT_NAME_LENGTH} are allowed`);
  if (!AGENT_NAME.test(value))
    return void error('name', `"${value}" must be lowercase letters, digits and single hyphens (e.g. "code-reviewer")`);
  if (value !== stem) return void error('name', `"${value}" must equal the file name "${stem}.md" without .md: rename one of them`);
  return value;
}

function checkDescription(value: unknown, error: Report): string | undefined {
  if (value === undefined) return void error('description', 'missing: say what the agent does and when to use it');
  if (typeof value !== 'string') return void error('description', `must be a string; got ${describe(value)}`);
  if (value.trim() === '') return void error('description', 'is empty: say what the agent does and when to use it');
  if (value.length > 1024) return void error('description', `is ${value.length} characters; at most 1024 are allowed`);
  return value.trim();
}

function checkModel(value: unknown, error: Report): string | undefined {
  if (value === undefined) return void error('model', 'missing: add "model: <provider>/<model>", e.g. "model: openai/gpt-4o-mini"');
  if (typeof value !== 'string' || value.trim() === '')
    return void error('model', `must be "<provider>/<model>", e.g. "openai/gpt-4o-mini"; got ${describe(value)}`);
  const spec = value.trim();
  const slash = spec.indexOf('/');
  if (slash <= 0 || slash === spec.length - 1)
    return void error('model', `"${spec}" must be "<provider>/<model>", e.g. "openai/${spec.replace(/\//g, '') || 'gpt-4o-mini'}"`);
  const provider = spec.slice(0, slash);
  if (!KNOWN_PROVIDERS.includes(provider)) {
    const guess = closestName(provider, KNOWN_PROVIDERS);
    return void error(
      'model',
      `unknown provider "${provider}"${guess ? ` (did you mean ${guess}?)` : ''}: rein knows ${KNOWN_PROVIDERS.join(', ')}. For another OpenAI-compatible server use openai/<model> with baseUrl`,
    );
  }
  return spec;
}

function checkBaseUrl(value: unknown, error: Report): string | undefined {
  if (value === undefined || value === null) return undefined;
  let protocol: string | undefined;
  try {
    protocol = typeof value === 'string' ? new URL(value).protocol : undefined;
  } catch {
    protocol = undefined;
  }
  // The value is not quoted back: a URL may carry a password.
  if (protocol !== 'http:' && protocol !== 'https:')
    return void error('baseUrl', 'must be an http:// or https:// URL up to the API version, e.g. http://127.0.0.1:11434/v1');
  return value as string;
}

function checkTools(value: unknown, error: Report): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.length === 0) return [];
  const parsed = parseAllowedTools(value);
  if (!parsed.ok) return void error('tools', parsed.reason.replace('allowed-tools', 'tools'));
  const entries = parsed.value ?? [];
  const patterns = entries.filter((entry) => entry.includes('('));
  if (patterns.length > 0) {
    return void error(
      'tools',
      `lists tools by name or glob (read_file, github__*); argument patterns such as ${patterns[0]} belong in permission rules (.rein/settings.json)`,
    );
  }
  return entries;
}

function checkMode(value: unknown, origin: AgentFileOrigin, error: Report): AgentMode | undefined {
  if (value === undefined || value === null) return undefined;
  const mode = typeof value === 'string' ? AGENT_MODES.find((m) => m.toLowerCase() === value.toLowerCase()) : undefined;
  if (!mode) return void error('mode', `must be one of ${AGENT_MODES.join(', ')}; got ${describe(value)}`);
  // As with .rein/settings.json: a repository must not switch off every question for whoever runs its agents.
  if (mode === 'yolo' && origin.project) {
    return void error('mode', 'a project agent file cannot choose yolo: put the agent in ~/.rein/agents/, or pass --mode yolo to rein run');
  }
  return mode;
}

/**
 * Checks a `limits` mapping (of an agent file, or of a run request: `where` names it in the
 * messages). Each limit is a positive number, whole where it counts things.
 */
export function checkLimits(value: unknown, where: string, error: Report): Partial<RunLimits> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    return void error(where, `must be a mapping such as { maxSteps: 20, timeoutMs: 600000 }; got ${describe(value)}`);
  const limits: Partial<RunLimits> = {};
  let ok = true;
  const known = Object.keys(LIMIT_FIELDS);
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const spec = LIMIT_FIELDS[key as NumericLimit];
    const field = `${where}.${key}`;
    if (!spec) {
      const guess = closestName(key, known);
      error(field, `unknown limit${guess ? ` (did you mean ${guess}?)` : ''}: the limits are ${known.join(', ')}`);
      ok = false;
      continue;
    }
    const whole = spec.whole ? Number.isInteger(raw) : true;
    if (typeof raw !== 'number' || !Number.isFinite(raw) || raw <= 0 || !whole) {
      error(field, `must be a positive ${spec.whole ? 'whole ' : ''}number of ${spec.what}; got ${describe(raw)}`);
      ok = false;
      continue;
    }
    if (spec.max !== undefined && raw > spec.max) {
      error(field, `is more than a timer can wait (${spec.max} ms, about 24.8 days); leave it out for no limit`);
      ok = false;
      continue;
    }
    limits[key as NumericLimit] = raw;
  }
  return ok ? limits : undefined;
}

function checkOutputSchema(value: unknown, error: Report): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    return void error(
      'outputSchema',
      `must be a JSON Schema written as a YAML mapping (e.g. { type: object, properties: { verdict: { type: string } } }); got ${describe(value)}`,
    );
  return value as Record<string, unknown>;
}

/** `agents`: the sub-agents this agent may hand work to, by name (each another agent file). */
function checkAgents(value: unknown, self: string | undefined, error: Report): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value))
    return void error('agents', `must be a list of agent names, e.g. [reviewer, researcher]; got ${describe(value)}`);
  const out: string[] = [];
  for (const entry of value) {
    if (typeof entry !== 'string' || !AGENT_NAME.test(entry))
      return void error(
        'agents',
        `each entry must be the name of an agent file (lowercase letters, digits, hyphens), e.g. reviewer; got ${describe(entry)}`,
      );
    if (entry === self) return void error('agents', `"${entry}" is this agent itself: an agent cannot list itself as a sub-agent`);
    if (out.includes(entry)) return void error('agents', `"${entry}" is listed twice`);
    out.push(entry);
  }
  return out;
}

/** `inputSchema`: what the parent passes when it calls this agent as a sub-agent (default `{ task: string }`). */
function checkInputSchema(value: unknown, error: Report): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value) || (value as { type?: unknown }).type !== 'object') {
    return void error(
      'inputSchema',
      `must be a JSON Schema of an object written as a YAML mapping (e.g. { type: object, properties: { diff: { type: string } }, required: [diff] }); got ${describe(value)}`,
    );
  }
  return value as Record<string, unknown>;
}

/** A value as a message shows it. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}
