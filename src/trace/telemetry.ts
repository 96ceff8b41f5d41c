/**
 * An agent's observability, per run: which of spans, metrics, log lines, alerts and
 * propagated trace headers apply (decided at each run's start, as an SDK may be registered
 * at any time), and the run's observer that feeds its events to them. A run for which
 * none applies gets no observer, and costs nothing more than one resolved promise.
 */
import type { Context, Meter, Tracer, TracerProvider, MeterProvider } from '@opentelemetry/api';
import { performance } from 'node:perf_hooks';
import type { RunEvent } from '../events.js';
import { newTraceId } from '../ids.js';
import type { Redactor } from '../security/redact.js';
import { raiseAlert, type AlertTargets } from './alerts.js';
import { RunDerivation } from './derive.js';
import { LogSink } from './log-sink.js';
import { createInstruments, MetricsSink, type Instruments } from './metrics.js';
import type { OperationSink } from './operations.js';
import { hasGlobalTracer, isNoopMeter, loadedOtelApi, loadOtelApi, type OtelApi } from './otel-api.js';
import { OtelSpanSink } from './otel-sink.js';
import { withTraceHeaders } from './propagation.js';
import { formatTraceparent, type ParentContext } from './trace-context.js';
import type { Logger, TelemetryOptions } from './types.js';

/** What an agent's telemetry is built from (resolved by the agent's constructor). */
export interface TelemetrySettings {
  /** `undefined`: the default (the global providers); `false`: no spans or metrics. */
  telemetry: TelemetryOptions | false | undefined;
  logger?: Logger;
  alerts?: AlertTargets;
  redactor: Redactor;
  model: { provider: string; id: string };
  request: { maxTokens?: number; temperature?: number; stream?: boolean };
  env: Record<string, string | undefined>;
}

/** How a run begins, for its observer. */
export interface ObserveStart {
  runId: string;
  /** `new`: its first attempt starts now; `continue`: once its log is loaded ({@link RunObserver.continueFrom}). */
  kind: 'new' | 'continue';
  /** The caller's W3C trace context (already checked). */
  parent?: ParentContext;
}

const DEFAULT_MAX_CONTENT = 8000;

/**
 * The instruments made on each meter: once per meter in the process, not per agent (a
 * program that makes an agent per request would otherwise ask the SDK for nine
 * instruments, each looked up by name, on every agent's first run).
 */
const instrumentsByMeter = new WeakMap<object, Instruments>();

/** The {@link Instruments} of `meter`, made on first need. */
function instrumentsOf(meter: Meter): Instruments {
  let made = instrumentsByMeter.get(meter);
  if (!made) {
    made = createInstruments(meter);
    instrumentsByMeter.set(meter, made);
  }
  return made;
}

/** The telemetry of one agent. */
export class AgentTelemetry {
  private readonly propagate: { model: boolean; mcp: boolean };
  private readonly captureContent: boolean;

  constructor(private readonly settings: TelemetrySettings) {
    const t = settings.telemetry || undefined;
    const p = t?.propagate;
    this.propagate = p === true ? { model: true, mcp: true } : { model: Boolean(p && p.model), mcp: Boolean(p && p.mcp) };
    this.captureContent = t?.captureContent ?? /^true$/i.test(settings.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? '');
  }

  /**
   * The observer of a run that starts now, or `undefined` when nothing observes it; at
   * once (no promise) once the API is loaded, so a run nothing observes costs no await.
   * Never throws or rejects.
   */
  open(start: ObserveStart): RunObserver | undefined | Promise<RunObserver | undefined> {
    const api = this.settings.telemetry === false ? undefined : loadedOtelApi();
    if (api === null)
      return loadOtelApi().then(
        () => this.open(start),
        (error: unknown) => void warnOnce(error),
      );
    try {
      return this.openWith(start, api);
    } catch (error) {
      warnOnce(error);
      return undefined;
    }
  }

  private openWith(start: ObserveStart, api: OtelApi | undefined): RunObserver | undefined {
    const { settings } = this;
    const options = settings.telemetry || undefined;
    let tracer: Tracer | undefined;
    let meter: Meter | undefined;
    if (api) {
      if (options?.tracerProvider || hasGlobalTracer(api))
        tracer = ((options?.tracerProvider as TracerProvider | undefined) ?? api.trace.getTracerProvider()).getTracer('rein');
      const candidate = ((options?.meterProvider as MeterProvider | undefined) ?? api.metrics.getMeterProvider()).getMeter('rein');
      if (!isNoopMeter(api, candidate)) meter = candidate;
    }
    const propagates = this.propagate.model || this.propagate.mcp;
    if (!tracer && !meter && !settings.logger && !settings.alerts && !propagates) return undefined;
    // The caller's own span (its active context), when it has one and gave no traceparent.
    let parent = start.parent;
    let callerContext: Context | undefined;
    if (!parent && api) {
      const active = api.context.active();
      const span = api.trace.getSpanContext(active);
      if (span && api.isSpanContextValid(span)) {
        callerContext = active;
        parent = {
          traceId: span.traceId,
          spanId: span.spanId,
          sampled: (span.traceFlags & api.TraceFlags.SAMPLED) === api.TraceFlags.SAMPLED,
        };
        const state = span.traceState?.serialize();
        if (state) parent.traceState = state;
      }
    }
    const sinks: OperationSink[] = [];
    if (tracer && api) sinks.push(new OtelSpanSink(api, tracer, callerContext));
    if (meter) sinks.push(new MetricsSink(instrumentsOf(meter), options?.agentName));
    if (settings.logger) sinks.push(new LogSink(settings.logger, settings.redactor, 4000));
    const derivation = new RunDerivation({
      keepIo: settings.logger !== undefined,
      runId: start.runId,
      // An SDK makes the trace id of a run with no parent; otherwise it is the parent's, or rein's own.
      traceId: parent?.traceId ?? (tracer ? '' : newTraceId()),
      ...(options?.agentName ? { agentName: options.agentName } : {}),
      request: settings.request,
      ...(this.captureContent
        ? { content: { redactor: settings.redactor, maxChars: options?.maxContentChars ?? DEFAULT_MAX_CONTENT } }
        : {}),
      sinks,
      now: hiResNow,
    });
    const observer = new RunObserver(derivation, {
      api: tracer ? api : undefined,
      propagate: this.propagate,
      settings,
      ...(options?.agentName ? { agentName: options.agentName } : {}),
    });
    if (start.kind === 'new') derivation.startAttempt(0, hiResNow(), parent ? { parent } : {});
    return observer;
  }
}

const origin = performance.timeOrigin;
// Read several times per event: the global `performance` is a lazy getter, and the
// method re-checks its receiver on each call; a bound copy of perf_hooks' skips both.
const perfNow = performance.now.bind(performance);
/** Epoch ms with the sub-millisecond part `performance.now()` has. */
function hiResNow(): number {
  return origin + perfNow();
}

let warned = false;
/** Telemetry failing is never the run's failure; it is said once per process. */
function warnOnce(error: unknown): void {
  if (warned) return;
  warned = true;
  process.emitWarning(`rein telemetry failed and is off for this run: ${error instanceof Error ? error.message : String(error)}`, {
    code: 'REIN_TELEMETRY',
  });
}

/** What a run's observer needs besides its derivation. */
interface ObserverContext {
  /** Set when spans are made through the API (tools then run in their span's context). */
  api: OtelApi | undefined;
  propagate: { model: boolean; mcp: boolean };
  settings: TelemetrySettings;
  agentName?: string;
}

/** Feeds one run's events to its telemetry. */
export class RunObserver {
  constructor(
    private readonly derivation: RunDerivation,
    private readonly context: ObserverContext,
  ) {}

  /** The run's trace id (a new run's, once its first attempt started; a continued run's, once its log is read). */
  get traceId(): string {
    return this.derivation.traceId;
  }

  /** Whether tools must run through {@link runTool} (their span's context, or the trace headers for MCP). */
  get wrapsTools(): boolean {
    return this.context.api !== undefined || this.context.propagate.mcp;
  }

  /** Whether model requests carry the trace headers ({@link modelHeaders}). */
  get propagatesToModel(): boolean {
    return this.context.propagate.model;
  }

  /** A continued run (resume, approve): takes in its log, then starts its new attempt at `seq`. */
  continueFrom(events: readonly RunEvent[], seq: number): void {
    try {
      this.derivation.absorb(events);
      this.derivation.startAttempt(seq, hiResNow());
    } catch (error) {
      warnOnce(error);
    }
  }

  /** The ids the run's start event records: its attempt's span and, for a child run, the caller's span. */
  spanFields(): { spanId: string; parentSpanId?: string } | undefined {
    const run = this.derivation.run;
    if (!run) return undefined;
    return { spanId: run.spanId, ...(run.parentSpanId === undefined ? {} : { parentSpanId: run.parentSpanId }) };
  }

  onEvent(event: RunEvent): void {
    try {
      this.derivation.onEvent(event);
      if (event.type === 'run_finished' && this.context.settings.alerts) {
        const { settings, agentName } = this.context;
        raiseAlert(settings.alerts as AlertTargets, event, {
          model: `${settings.model.provider}/${settings.model.id}`,
          traceId: this.derivation.traceId,
          ...(agentName ? { agentName } : {}),
        });
      }
    } catch (error) {
      warnOnce(error);
    }
  }

  /** The `traceparent` (and `tracestate`) of the model request being sent. */
  readonly modelHeaders = (): Record<string, string> | undefined => headersOf(this.derivation.current());

  /** Runs a tool call inside its span: the OpenTelemetry context for code the tool runs, and the headers for its MCP requests. */
  runTool<T>(toolCallId: string, fn: () => T): T {
    const op = this.derivation.current(toolCallId);
    if (!op) return fn();
    const { api, propagate } = this.context;
    const headers = propagate.mcp ? headersOf(op) : undefined;
    const run = headers ? () => withTraceHeaders(headers, fn) : fn;
    const span = op.handle as Parameters<OtelApi['trace']['setSpan']>[1] | undefined;
    if (api && span) return api.context.with(api.trace.setSpan(api.context.active(), span), run);
    return run();
  }

  /** The run is over here: anything still open is ended as interrupted. */
  close(): void {
    try {
      this.derivation.finish();
    } catch (error) {
      warnOnce(error);
    }
  }
}

function headersOf(
  op: { traceId: string; spanId: string; sampled: boolean; traceState?: string } | undefined,
): Record<string, string> | undefined {
  if (!op || !op.traceId || !op.spanId) return undefined;
  const headers: Record<string, string> = { traceparent: formatTraceparent(op.traceId, op.spanId, op.sampled) };
  if (op.traceState) headers.tracestate = op.traceState;
  return headers;
}
