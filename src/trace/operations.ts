/**
 * The unit the run's events are turned into: an operation — a run attempt, a model
 * request attempt, a tool call, an approval wait, a compaction — with its times,
 * attributes and outcome. One derivation ({@link RunDerivation}) makes them, live from a
 * running agent and afterwards from a stored log; sinks turn them into OpenTelemetry
 * spans, span records, metrics and log lines.
 */
import type { SpanAttributeValue, SpanStatusCode } from './types.js';

/** What kind of work an operation is. */
export type OperationKind = 'run' | 'chat' | 'tool' | 'approval' | 'compaction';

/** Attributes of an operation, as OpenTelemetry takes them. */
export type Attributes = Record<string, SpanAttributeValue>;

/** Something that happened during an operation (a span event). */
export interface OperationEvent {
  name: string;
  time: number;
  attributes: Attributes;
}

/** A link to another span (a resumed attempt to the one it continues). */
export interface OperationLink {
  traceId: string;
  spanId: string;
  attributes: Attributes;
}

/** One operation of a run. Times are epoch ms (fractions allowed). */
export interface Operation {
  kind: OperationKind;
  /** The span name (`invoke_agent x`, `chat gpt-4o`, `execute_tool read_file`, …). */
  name: string;
  spanKind: 'internal' | 'client';
  runId: string;
  /** The seq of the event it began at (its derived span id is made from it). */
  seq: number;
  step?: number;
  start: number;
  end?: number;
  traceId: string;
  /** Set when it starts: by an OpenTelemetry SDK, else derived from the log. */
  spanId: string;
  parentSpanId?: string;
  /** The sampled flag sent on with its `traceparent`. */
  sampled: boolean;
  traceState?: string;
  /** The operation it runs inside (a run attempt's children); absent for a run attempt. */
  parent?: Operation;
  attributes: Attributes;
  /** Content attributes (prompts, answers, arguments, results): only when content capture is on. */
  content?: Attributes;
  events: OperationEvent[];
  links: OperationLink[];
  status: { code: SpanStatusCode; message?: string };
  /** For log lines: what went in, what came out, or the error. */
  input?: unknown;
  output?: unknown;
  error?: { code: string; message: string; status?: number };
  /** A sink's own object for it (an OpenTelemetry span). */
  handle?: unknown;
  /** How many of `attributes` the span was started with (the rest are set when it ends). */
  startedKeys?: number;
}

/** Where operations go as they start, change and end. */
export interface OperationSink {
  /**
   * Set on the sink whose spans make the ids (an OpenTelemetry SDK's): its `started` runs
   * first and sets `traceId` / `spanId`; without one they are derived from the log.
   */
  readonly assignsIds?: boolean;
  started?(op: Operation): void;
  /** Attributes added after the start (`attributes` already holds them). */
  annotated?(op: Operation, added: Attributes): void;
  /** An event was added to `op.events`. */
  evented?(op: Operation, event: OperationEvent): void;
  /** The operation ended (`end`, `status`, its final attributes set). */
  ended?(op: Operation): void;
}
