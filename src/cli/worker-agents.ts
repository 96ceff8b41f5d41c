/**
 * The agents `rein worker` drives: those of `.rein/agents/` under its root, built by the
 * same workbench as `rein serve` builds them (served-agents.ts: this file's one use of the
 * workbench). A run records its agent's name and the hash of its file at submission; a
 * worker whose file of that name differs, or that has none, refuses the run.
 */
import { createHash } from 'node:crypto';
import { ReinError } from '../errors.js';
import type { Agent } from '../loop/agent.js';
import { canonicalJson } from '../util/canonical-json.js';
import type { AgentDefinition } from '../agents/types.js';
import type { RunRecord, RunStore } from '../store/types.js';
import type { CliIO } from './io.js';
import { DEFAULT_AGENT, loadAgentFiles } from './named-agent.js';
import { openServedAgents } from './served-agents.js';
import type { CliTelemetry } from './telemetry.js';

/** The hash a run records of the agent file it was submitted with (`default` without a file: of nothing). */
export function definitionHash(definition: AgentDefinition | undefined): string {
  const { file: _file, ...fields } = definition ?? ({} as Partial<AgentDefinition>);
  return createHash('sha256')
    .update(canonicalJson(definition ? fields : null))
    .digest('hex');
}

/** The agents of `root` for a worker: a resolver for createWorker, and what closes them. */
export function openWorkerAgents(
  root: string,
  store: RunStore,
  io: CliIO,
  telemetry?: CliTelemetry['options'],
): { resolve: (record: RunRecord, name: string) => Promise<Agent>; close(): Promise<void> } {
  const catalog = openServedAgents({ root, io, ...(telemetry ? { telemetry } : {}) });
  return {
    async resolve(record, name) {
      const { items } = await loadAgentFiles(root, io.env);
      const definition = items.find((a) => a.name === name);
      if (!definition && name !== DEFAULT_AGENT) {
        throw new ReinError(
          'conflict',
          'fatal',
          `agent "${name}" is unknown to this worker: there is no .rein/agents/${name}.md under ${root} (rein agents lists them)`,
        );
      }
      const recorded = (record.config as { metadata?: { agent?: { definitionHash?: unknown } } } | null)?.metadata?.agent?.definitionHash;
      if (typeof recorded === 'string' && recorded !== definitionHash(definition)) {
        throw new ReinError(
          'conflict',
          'fatal',
          `agent "${name}" changed since the run was submitted: its file (${definition?.file ?? 'the built-in default'}) is not the one the run was submitted with`,
        );
      }
      try {
        return await catalog.forStoredRun(record, store);
      } catch (error) {
        throw new ReinError('conflict', 'fatal', `agent "${name}" cannot be built here: ${(error as Error).message}`, { cause: error });
      }
    },
    close: () => catalog.close(),
  };
}
