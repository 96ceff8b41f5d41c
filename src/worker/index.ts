/**
 * `rein/worker`: runs as jobs on Postgres across processes and machines (docs/workers.md).
 * `agent.submit(input)` queues a run; {@link createWorker} drives queued runs; the fleet's
 * model limits and its view (`rein workers`) live here too. Importing this entry loads
 * neither pg nor pg-boss: each is imported when a worker starts.
 */
export { createWorker, agentNameOf } from './worker.js';
export type { Worker, WorkerAgents, WorkerEvent, WorkerOptions } from './worker.js';
export type { ModelLimits } from './fleet-limits.js';
export { FleetView, LIVE_MS } from './fleet-view.js';
export type { WorkerInfo } from './fleet-view.js';
export { approveQueued, isQueuedRun } from './approve-queued.js';
export type { QueuedDecision } from './approve-queued.js';
