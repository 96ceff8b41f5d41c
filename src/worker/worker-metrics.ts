/**
 * The queue's metrics, beside the runs' own (docs/observability.md): how many runs wait in
 * the queue (`rein.queue.depth`, an observable gauge read at each export) and how long a run
 * waited before a worker took it (`rein.queue.pickup.duration`). Through the OpenTelemetry
 * API when it is installed (the global meter provider, or the meter given); without it
 * nothing is measured.
 */
import type { Meter } from '@opentelemetry/api';
import { loadOtelApi } from '../trace/otel-api.js';
import { DURATION_BUCKETS, METRIC } from '../trace/semconv.js';

/** What a worker records. */
export interface WorkerMetrics {
  /** A run taken `ms` after it became ready in the queue. */
  pickedUp(ms: number): void;
}

/** The worker's instruments on `meter` (default: the global provider's `rein` meter); `depth` answers the gauge (last known count). */
export async function workerMetrics(meter: Meter | undefined, depth: () => number | undefined): Promise<WorkerMetrics> {
  const chosen = meter ?? (await loadOtelApi())?.metrics.getMeter('rein');
  if (!chosen) return { pickedUp: () => undefined };
  const pickup = chosen.createHistogram(METRIC.queuePickup, {
    description: 'How long a queued run waited before a worker took it',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const gauge = chosen.createObservableGauge(METRIC.queueDepth, {
    description: 'Runs waiting in the queue for a worker (ready or to be retried)',
    unit: '{run}',
  });
  gauge.addCallback((result) => {
    const value = depth();
    if (value !== undefined) result.observe(value);
  });
  return { pickedUp: (ms) => pickup.record(ms / 1000) };
}
