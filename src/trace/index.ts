/**
 * `rein/trace`: observability helpers beside the agent's `telemetry`, `logger` and
 * `alerts` options — a stored run's spans (`spansOfLog`) and their tree (`traceTree`), the
 * JSON-lines logger and its file form, W3C trace context, waiting for alerts in flight,
 * and OTLP export of span records. None of it loads an OpenTelemetry package until used.
 */
export { spansOfLog, spanRecord } from './spans-of-log.js';
export type { SpansOfLogOptions } from './spans-of-log.js';
export { traceTree, duration } from './tree.js';
export { createJsonLogger, openFileLogger, parseLogLevel, LOG_LEVELS } from './logger.js';
export type { FileLogger } from './logger.js';
export { formatTraceparent, parseTraceparent } from './trace-context.js';
export type { ParentContext } from './trace-context.js';
export { settleAlerts, alertReasonOf } from './alerts.js';
export { alertPayload } from './webhook.js';
export { exportSpanRecords, otlpEndpoint, otlpProtocol, otlpWanted, startOtlpSdk } from './otlp.js';
export type { OtlpSdk } from './otlp.js';
export { ATTR, METRIC, REIN as REIN_ATTR } from './semconv.js';
export type {
  Alert,
  AlertOptions,
  AlertReason,
  AlertWebhook,
  Logger,
  LogLevel,
  MeterProviderLike,
  SpanAttributeValue,
  SpanRecord,
  SpanStatusCode,
  TelemetryOptions,
  TracerProviderLike,
} from './types.js';
