/**
 * What the server is given: the store, and the agents it may run — only agents defined on
 * disk, built by whoever starts the server (the CLI builds them as `rein run` would).
 */
import type { RunLimits } from '../events.js';
import type { Agent } from '../loop/agent.js';
import type { RunRecord, RunStore } from '../store/types.js';

/** An agent the server can run, as clients see it. */
export interface ServedAgent {
  name: string;
  description: string;
  /** `provider/model`. */
  model: string;
  /** The agent's own limits (its file's, else rein's defaults): a request may only lower them. */
  limits: RunLimits;
}

/**
 * The seam between the server and the agents on disk. The server never builds an agent
 * itself: a request names one, and this builds it.
 */
export interface AgentCatalog {
  /** The agents that can be run now (read again each time: a file edited takes effect). */
  list(): Promise<ServedAgent[]>;
  /**
   * The agent for a new run of `name` with `limits` (already checked against the agent's),
   * logging to `store`; `task` is recorded with the run. Throws a `config` ReinError when the
   * agent cannot be built.
   */
  forNewRun(request: { name: string; limits: Partial<RunLimits>; task: string; store: RunStore }): Promise<Agent>;
  /**
   * The agent that continues the stored run `record` (its agent and limits are in its
   * record), logging to `store`. Throws a `config` ReinError when it cannot be rebuilt.
   */
  forStoredRun(record: RunRecord, store: RunStore): Promise<Agent>;
  /** Stops what the agents started (MCP servers, memory). */
  close(): Promise<void>;
}

/** What a run's record says about the server and the agent it belongs to (its config's metadata). */
export interface ServedRunMetadata {
  agent?: { name?: string };
  server?: { task?: string };
}

/** The agent and task of a stored run, from its record. */
export function servedMetadata(record: RunRecord): { agent: string | null; task: string | null; server: boolean } {
  const config = record.config as { metadata?: ServedRunMetadata & { cli?: unknown } } | null;
  const metadata = config && typeof config === 'object' ? config.metadata : undefined;
  const agent = typeof metadata?.agent?.name === 'string' ? metadata.agent.name : metadata?.cli ? 'default' : null;
  const task = typeof metadata?.server?.task === 'string' ? metadata.server.task : null;
  return { agent, task, server: metadata?.server !== undefined };
}

/**
 * How a server that only queues runs (`rein serve --no-execute`) hands them on: runs are
 * submitted to the workers instead of run in the server, and an approval of a queued run
 * is stored with the run's new job (src/worker/approve-queued.ts, given by the CLI).
 */
export interface QueueMode {
  /** Whether `record` is a run of the queue (decided through {@link QueueMode.approve}). */
  isQueued(record: RunRecord): boolean;
  approve(runId: string, decision: { approved: boolean; reason?: string; toolCallId?: string; argumentsHash?: string }): Promise<unknown>;
}
