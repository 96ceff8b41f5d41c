/**
 * Agents defined on disk: `.rein/agents/<name>.md`, YAML front matter and the system prompt
 * as the body. One file serves `rein run --agent`, `rein chat --agent` and `rein serve`.
 */
import type { RunLimits } from '../events.js';

/** The permission modes an agent file may choose (the `--mode` flag's). */
export type AgentMode = 'default' | 'acceptEdits' | 'plan' | 'yolo';

/** One agent, as its file defines it (validated). */
export interface AgentDefinition {
  /** Lowercase letters, digits and single hyphens; equals the file name without `.md`. */
  name: string;
  /** What the agent is for (shown by `rein agents` and `GET /v1/agents`). */
  description: string;
  /** `provider/model`, e.g. `openai/gpt-4o-mini`. */
  model: string;
  /** The model server (for `openai/…` any OpenAI-compatible one); absent: the provider's own. */
  baseUrl?: string;
  /**
   * The tools the agent may use, by name or `*` glob (workspace, seed and MCP tools alike):
   * `--tools` of `rein run`. An empty list means no tools at all; absent: every tool.
   */
  tools?: string[];
  /** The permission mode (`--mode`); absent: `default`. */
  mode?: AgentMode;
  /** Limits of each run (absent ones: rein's defaults). */
  limits?: Partial<RunLimits>;
  /** A JSON Schema the run's answer must match (the model ends by calling `final_answer`). */
  outputSchema?: Record<string, unknown>;
  /**
   * Sub-agents, by the names of their agent files: the agent gets a tool named after each,
   * which runs that agent as a child run (see docs/sub-agents.md).
   */
  agents?: string[];
  /** What a parent passes when it calls this agent as a sub-agent; absent: `{ task: string }`. */
  inputSchema?: Record<string, unknown>;
  /** The system prompt: the markdown after the front matter, trimmed ('' for none). */
  system: string;
  /** The file it was read from (absolute); absent for the built-in `default`. */
  file?: string;
}

/** A problem found in an agent file: which file, which field, and what to do about it. */
export interface AgentDiagnostic {
  file: string;
  /** The front-matter field at fault (`limits.maxSteps`); absent for the file as a whole. */
  field?: string;
  message: string;
  /** `error`: the file is skipped; `warning`: the agent loads, the field is ignored. */
  severity: 'error' | 'warning';
}

/** What {@link loadAgents} found. */
export interface LoadAgentsResult {
  /** Valid agents, each name once (the project's before the user's). */
  items: AgentDefinition[];
  diagnostics: AgentDiagnostic[];
}
