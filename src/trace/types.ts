/**
 * The public shapes of rein's observability: telemetry options, the logger interface,
 * alerts, and the spans a run's log derives to. None of them names an OpenTelemetry type:
 * `@opentelemetry/api` is optional, and a program without it must still type-check.
 */
import type { ErrorInfo } from '../errors.js';
import type { RunStatus, RunTotals, StopReasonCode } from '../events.js';

/** What rein asks of an OpenTelemetry `TracerProvider` (`@opentelemetry/api`); any SDK's satisfies it. */
export interface TracerProviderLike {
  getTracer(name: string, version?: string, options?: { schemaUrl?: string }): unknown;
}

/** What rein asks of an OpenTelemetry `MeterProvider` (`@opentelemetry/api`); any SDK's satisfies it. */
export interface MeterProviderLike {
  getMeter(name: string, version?: string, options?: { schemaUrl?: string }): unknown;
}

/**
 * OpenTelemetry spans and metrics of an agent's runs (GenAI semantic conventions:
 * `invoke_agent`, `chat`, `execute_tool`; `gen_ai.client.token.usage`,
 * `gen_ai.client.operation.duration`), through `@opentelemetry/api` only. Without an SDK
 * registered (and without the package) nothing is recorded and nothing is paid for.
 */
export interface TelemetryOptions {
  /** Default: the global one (`trace.setGlobalTracerProvider`, what an SDK's `register()` sets). */
  tracerProvider?: TracerProviderLike;
  /** Default: the global one (`metrics.setGlobalMeterProvider`). */
  meterProvider?: MeterProviderLike;
  /** `gen_ai.agent.name`, and the run span's name `invoke_agent {agentName}`. */
  agentName?: string;
  /**
   * Record message content on spans (the system prompt, input and output messages, tool
   * arguments and results), redacted as the log is. Off unless this says so or
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, as the conventions ask.
   */
  captureContent?: boolean;
  /**
   * Send the W3C `traceparent` (and `tracestate`) of the current span to model servers
   * (`model`) and remote MCP servers (`mcp`, HTTP transports), so their own traces join the
   * run's. Off by default: a header to a third party is the user's decision. `true`: both.
   */
  propagate?: boolean | { model?: boolean; mcp?: boolean };
  /** Longest content attribute, in characters (default 8000); longer text is cut with a marker. */
  maxContentChars?: number;
}

/**
 * A structured logger. A pino logger satisfies it (`logger.info(obj, msg)`), as does
 * {@link createJsonLogger}. Each record is a plain object: `trace_id`, `span_id`, `run_id`,
 * `step`, `event`, and per event `tool`, `input`, `output` or `error`, `duration_ms`…; its
 * level is the method called.
 */
export interface Logger {
  debug(record: Record<string, unknown>, message?: string): void;
  info(record: Record<string, unknown>, message?: string): void;
  warn(record: Record<string, unknown>, message?: string): void;
  error(record: Record<string, unknown>, message?: string): void;
}

/** Levels of {@link Logger}, quietest last; `silent` logs nothing. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Why an alert is raised: each is switchable in {@link AlertOptions.on}. */
export type AlertReason = 'fatal_error' | 'tool_errors' | 'budget' | 'awaiting_approval';

/** What an alert says: given to `hooks.onAlert` and POSTed (as JSON) to the webhook. */
export interface Alert {
  /** `run_id:seq` of the event that raised it: the same on every delivery attempt. */
  id: string;
  reason: AlertReason;
  /** One line for people: what happened and what to do. */
  message: string;
  runId: string;
  traceId: string;
  status: RunStatus;
  stopReason: StopReasonCode;
  error?: Pick<ErrorInfo, 'code' | 'kind' | 'message' | 'status'>;
  /** `provider/model`. */
  model: string;
  agentName?: string;
  /** ISO 8601. */
  at: string;
  /** The command that shows the run, or decides what it waits for (`rein approve <run>`). */
  command: string;
  /** {@link AlertOptions.runUrl} with the run's id in it, when configured. */
  url?: string;
  totals: RunTotals;
}

/** A webhook alerts are POSTed to. */
export interface AlertWebhook {
  url: string;
  /** The whole delivery, retries included, ends within this many ms (default 5000). */
  timeoutMs?: number;
  /** Retries after a 5xx, a 429 or a network error (default 3); a 4xx is final. */
  retries?: number;
  /** Extra request headers (an authorization token). */
  headers?: Record<string, string>;
  /** Told when a delivery finally fails (the URL in the error has no credentials). Never throws into the run. */
  onError?: (error: Error, alert: Alert) => void;
}

/**
 * Alerts of an agent's runs: a fatal error, a tripped tool-error breaker, a budget reached,
 * a run paused for a person. Each raises `hooks.onAlert` and the webhook; neither ever
 * blocks or fails the run.
 */
export interface AlertOptions {
  /** Which situations raise an alert (each on unless set to `false`). */
  on?: Partial<Record<AlertReason, boolean>>;
  /** A URL, or the webhook's settings. */
  webhook?: string | AlertWebhook;
  /** A link to a run in your viewer; `{runId}` is replaced, e.g. `https://runs.example/{runId}`. */
  runUrl?: string;
}

/** A span's status as OpenTelemetry has it. */
export type SpanStatusCode = 'unset' | 'ok' | 'error';

/** A span derived from a run's log (`deriveSpans`, `rein trace --json`). Times are epoch ms. */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: 'internal' | 'client';
  startTime: number;
  endTime: number;
  status: { code: SpanStatusCode; message?: string };
  attributes: Record<string, SpanAttributeValue>;
  events: Array<{ name: string; time: number; attributes: Record<string, SpanAttributeValue> }>;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, SpanAttributeValue> }>;
}

/** An attribute value as OpenTelemetry allows it. */
export type SpanAttributeValue = string | number | boolean | string[] | number[];
