/**
 * The part of an agent's telemetry that lives in the core: checking the options in the
 * constructor, and loading the rest of `trace/` (and `@opentelemetry/api`) on the first
 * run, so importing rein never pays for observability it may not use.
 */
import { ReinError } from '../errors.js';
import { isRecord } from '../util/json.js';
import type { Redactor } from '../security/redact.js';
import type { AlertTargets } from './alerts.js';
import { missingOtelApi, otelApiInstalled } from './otel-api.js';
import type { AgentTelemetry, ObserveStart, RunObserver, TelemetrySettings } from './telemetry.js';
import { parseTraceparent, type ParentContext } from './trace-context.js';
import type { Alert, AlertOptions, AlertWebhook, Logger, TelemetryOptions } from './types.js';
import { checkWebhook } from './webhook.js';

const TELEMETRY_KEYS = ['tracerProvider', 'meterProvider', 'agentName', 'captureContent', 'propagate', 'maxContentChars'];
const ALERT_KEYS = ['on', 'webhook', 'runUrl'];
const ALERT_REASONS = ['fatal_error', 'tool_errors', 'budget', 'awaiting_approval'];

function refuse(what: string, takes: string): never {
  throw new ReinError('config', 'fatal', `${what}: expected ${takes}`);
}

function known(where: string, value: Record<string, unknown>, keys: string[]): void {
  for (const key of Object.keys(value))
    if (!keys.includes(key)) throw new ReinError('config', 'fatal', `${where}.${key} is not an option (known: ${keys.join(', ')})`);
}

/** Checks `telemetry`, `logger` and `alerts` of an agent's options; a `config` error naming the first that cannot work. */
export function checkTelemetryOptions(options: { telemetry?: unknown; logger?: unknown; alerts?: unknown }): void {
  const { telemetry, logger, alerts } = options;
  if (telemetry !== undefined && telemetry !== false) {
    if (!isRecord(telemetry)) refuse('telemetry', 'an object of telemetry options, or false');
    known('telemetry', telemetry, TELEMETRY_KEYS);
    if (telemetry.tracerProvider !== undefined && typeof (telemetry.tracerProvider as { getTracer?: unknown })?.getTracer !== 'function')
      refuse('telemetry.tracerProvider', 'an OpenTelemetry TracerProvider (with getTracer)');
    if (telemetry.meterProvider !== undefined && typeof (telemetry.meterProvider as { getMeter?: unknown })?.getMeter !== 'function')
      refuse('telemetry.meterProvider', 'an OpenTelemetry MeterProvider (with getMeter)');
    if (telemetry.agentName !== undefined && (typeof telemetry.agentName !== 'string' || telemetry.agentName.trim() === ''))
      refuse('telemetry.agentName', 'a non-empty string');
    if (telemetry.captureContent !== undefined && typeof telemetry.captureContent !== 'boolean')
      refuse('telemetry.captureContent', 'true or false');
    const p = telemetry.propagate;
    if (
      p !== undefined &&
      typeof p !== 'boolean' &&
      !(isRecord(p) && Object.keys(p).every((k) => (k === 'model' || k === 'mcp') && typeof p[k] === 'boolean'))
    ) {
      refuse('telemetry.propagate', 'true, false, or { model?: boolean, mcp?: boolean }');
    }
    const max = telemetry.maxContentChars;
    if (max !== undefined && !(typeof max === 'number' && Number.isInteger(max) && max >= 1))
      refuse('telemetry.maxContentChars', 'a whole number of characters, at least 1');
    if ((telemetry.tracerProvider !== undefined || telemetry.meterProvider !== undefined) && !otelApiInstalled())
      throw missingOtelApi('telemetry.tracerProvider / meterProvider');
  }
  if (logger !== undefined) {
    const l = logger as Record<string, unknown> | null;
    if (typeof l !== 'object' || l === null || !['debug', 'info', 'warn', 'error'].every((m) => typeof l[m] === 'function')) {
      refuse('logger', 'a logger with debug, info, warn and error methods (a pino logger, or createJsonLogger())');
    }
  }
  if (alerts !== undefined) {
    if (!isRecord(alerts)) refuse('alerts', `an object with ${ALERT_KEYS.join(', ')}`);
    known('alerts', alerts, ALERT_KEYS);
    if (alerts.on !== undefined) {
      if (!isRecord(alerts.on)) refuse('alerts.on', `an object of ${ALERT_REASONS.join(', ')} → true or false`);
      for (const [key, value] of Object.entries(alerts.on)) {
        if (!ALERT_REASONS.includes(key))
          throw new ReinError('config', 'fatal', `alerts.on.${key} is not an alert (known: ${ALERT_REASONS.join(', ')})`);
        if (typeof value !== 'boolean') refuse(`alerts.on.${key}`, 'true or false');
      }
    }
    if (alerts.webhook !== undefined) {
      if (typeof alerts.webhook !== 'string' && !isRecord(alerts.webhook))
        refuse('alerts.webhook', 'a URL, or { url, timeoutMs, retries, headers, onError }');
      checkWebhook(alerts.webhook as string | AlertWebhook, 'alerts.webhook');
    }
    if (alerts.runUrl !== undefined && typeof alerts.runUrl !== 'string')
      refuse('alerts.runUrl', 'a URL with {runId} where the run id goes');
  }
}

/** A run's `traceparent` option (with `tracestate`), checked; `undefined` when not given. */
export function parentOf(options: { traceparent?: unknown; tracestate?: unknown }): ParentContext | undefined {
  if (options.traceparent === undefined) return undefined;
  if (typeof options.traceparent !== 'string') refuse('run options traceparent', 'a W3C traceparent string');
  if (options.tracestate !== undefined && typeof options.tracestate !== 'string')
    refuse('run options tracestate', 'a W3C tracestate string');
  return parseTraceparent(options.traceparent, 'traceparent', options.tracestate as string | undefined);
}

/** What the agent hands over to build its telemetry. */
export interface TelemetryInput {
  telemetry: TelemetryOptions | false | undefined;
  logger: Logger | undefined;
  alerts: AlertOptions | undefined;
  onAlert: ((alert: Alert) => void | Promise<void>) | undefined;
  redactor: Redactor;
  model: { provider: string; id: string };
  request: TelemetrySettings['request'];
}

/** Where `@opentelemetry/api` 1.x keeps what an SDK registered, in every copy of the API (its `global-utils`). */
const OTEL_GLOBALS = Symbol.for('opentelemetry.js.api.1');

/**
 * Whether an SDK registered a global tracer or meter provider, through any copy of the API:
 * read without loading the API. Until one does, the API's globals are no-ops, and a run
 * with nothing else to observe it needs neither the API nor rein's telemetry module.
 */
function globalProviderRegistered(): boolean {
  const registered = (globalThis as Record<symbol, { trace?: unknown; metrics?: unknown } | undefined>)[OTEL_GLOBALS];
  return registered !== undefined && (registered.trace !== undefined || registered.metrics !== undefined);
}

/** An agent's telemetry, loaded on the first run that something observes. */
export class LazyTelemetry {
  private loading: Promise<AgentTelemetry> | undefined;
  private loaded: AgentTelemetry | undefined;
  private readonly settings: TelemetrySettings;
  /** Nothing of the agent's own observes its runs (no providers, logger, alerts or propagation): only a global SDK can. */
  private readonly quiet: boolean;
  /** Whether a globally registered SDK counts (`telemetry: false` turns spans and metrics off). */
  private readonly globals: boolean;

  constructor(input: TelemetryInput) {
    let alerts: AlertTargets | undefined;
    if (input.alerts || input.onAlert) {
      const options = input.alerts ?? {};
      alerts = {
        options,
        redactor: input.redactor,
        ...(options.webhook === undefined ? {} : { webhook: checkWebhook(options.webhook, 'alerts.webhook') }),
        ...(input.onAlert ? { onAlert: input.onAlert } : {}),
        ...(input.logger ? { logger: input.logger } : {}),
      };
    }
    const t = input.telemetry || undefined;
    const p = t?.propagate;
    const propagates = p === true || (typeof p === 'object' && (p.model === true || p.mcp === true));
    this.quiet = !input.logger && !alerts && !t?.tracerProvider && !t?.meterProvider && !propagates;
    this.globals = input.telemetry !== false;
    this.settings = {
      telemetry: input.telemetry,
      ...(input.logger ? { logger: input.logger } : {}),
      ...(alerts ? { alerts } : {}),
      redactor: input.redactor,
      model: input.model,
      request: input.request,
      env: process.env,
    };
  }

  /**
   * The observer of a run that starts now (see `AgentTelemetry.open`): at once once the
   * telemetry module and the API are loaded, else a promise. Never throws or rejects.
   */
  open(start: ObserveStart): RunObserver | undefined | Promise<RunObserver | undefined> {
    // The first run of a process with no SDK registered loads nothing (10–14 ms of a first run).
    if (this.quiet && !(this.globals && globalProviderRegistered())) return undefined;
    if (this.loaded) return this.loaded.open(start);
    this.loading ??= import('./telemetry.js').then((m) => (this.loaded = new m.AgentTelemetry(this.settings)));
    return this.loading.then(
      (telemetry) => telemetry.open(start),
      () => undefined,
    );
  }
}
