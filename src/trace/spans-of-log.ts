/**
 * The spans of a stored run, derived from its log alone (`rein trace`): the same
 * derivation as the live spans, with each event's own time. It works for any log,
 * including runs recorded before rein had telemetry and runs recorded offline; span ids
 * are the ones the log recorded (a run attempt's) or derived from the run's id and the
 * event's seq, so the same log always gives the same spans.
 */
import type { RunEvent } from '../events.js';
import type { Redactor } from '../security/redact.js';
import { RunDerivation } from './derive.js';
import type { Operation, OperationSink } from './operations.js';
import type { SpanRecord } from './types.js';

/** Options of {@link spansOfLog}. */
export interface SpansOfLogOptions {
  agentName?: string;
  /** Record message content (redacted by this redactor, cut to `maxContentChars`). */
  content?: { redactor: Redactor; maxChars?: number };
}

/** A span record of an ended operation. */
export function spanRecord(op: Operation): SpanRecord {
  const record: SpanRecord = {
    traceId: op.traceId,
    spanId: op.spanId,
    name: op.name,
    kind: op.spanKind,
    startTime: op.start,
    endTime: op.end ?? op.start,
    status: { ...op.status },
    attributes: { ...op.attributes, ...op.content },
    events: op.events.map((e) => ({ name: e.name, time: e.time, attributes: { ...e.attributes } })),
    links: op.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId, attributes: { ...l.attributes } })),
  };
  if (op.parentSpanId !== undefined) record.parentSpanId = op.parentSpanId;
  return record;
}

/**
 * The spans of a run's stored events, in start order. An attempt whose process died
 * (no `run_finished`) ends at its last event, marked `rein.run.interrupted`.
 *
 * @example
 * const spans = spansOfLog(await store.loadEvents(runId));
 * console.log(spans.map((s) => `${s.name} ${s.endTime - s.startTime} ms`).join('\n'));
 */
export function spansOfLog(events: readonly RunEvent[], options: SpansOfLogOptions = {}): SpanRecord[] {
  const ended: Array<{ op: Operation; order: number }> = [];
  let order = 0;
  const sink: OperationSink = { ended: (op) => void ended.push({ op, order: order++ }) };
  const first = events[0];
  const derivation = new RunDerivation({
    runId: first?.runId ?? '',
    traceId: first?.type === 'run_started' ? first.traceId : '',
    ...(options.agentName ? { agentName: options.agentName } : {}),
    ...(options.content ? { content: { redactor: options.content.redactor, maxChars: options.content.maxChars ?? 8000 } } : {}),
    sinks: [sink],
  });
  for (const event of events) derivation.onEvent(event);
  derivation.finish();
  return ended.sort((a, b) => a.op.start - b.op.start || a.op.seq - b.op.seq || a.order - b.order).map((e) => spanRecord(e.op));
}
