/**
 * Export over OTLP/HTTP as the standard `OTEL_*` variables configure it: the SDK the CLI
 * sets up for `rein run` / `rein chat` when `OTEL_EXPORTER_OTLP_ENDPOINT` (or a signal's
 * own endpoint) is set, and the export of a stored run's spans (`rein trace --export`).
 * The OpenTelemetry SDK and exporter packages are optional: loaded only here, only then,
 * and a missing one is named. The exporters read their endpoint, headers, timeout and
 * compression from the environment themselves (`OTEL_EXPORTER_OTLP_*`); the protocol is
 * `http/protobuf` unless `OTEL_EXPORTER_OTLP_PROTOCOL` (or the signal's) says `http/json`.
 */
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ReinError } from '../errors.js';
import { isMissing } from './otel-api.js';
import type { SpanRecord } from './types.js';

type Env = Record<string, string | undefined>;
type Signal = 'traces' | 'metrics';

/** The packages each use needs, for the message that names what to install. */
const PACKAGES = {
  base: ['@opentelemetry/api', '@opentelemetry/resources'],
  traces: ['@opentelemetry/sdk-trace-base'],
  metrics: ['@opentelemetry/sdk-metrics'],
  'http/protobuf': { traces: '@opentelemetry/exporter-trace-otlp-proto', metrics: '@opentelemetry/exporter-metrics-otlp-proto' },
  'http/json': { traces: '@opentelemetry/exporter-trace-otlp-http', metrics: '@opentelemetry/exporter-metrics-otlp-http' },
} as const;

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

/** Whether the environment asks for OTLP export of `signal` (an endpoint set, the exporter not `none`, the SDK not disabled). */
export function otlpWanted(env: Env, signal: Signal): boolean {
  if (/^true$/i.test(env.OTEL_SDK_DISABLED ?? '')) return false;
  const exporter = (signal === 'traces' ? env.OTEL_TRACES_EXPORTER : env.OTEL_METRICS_EXPORTER)?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return (
    set(env.OTEL_EXPORTER_OTLP_ENDPOINT) ||
    set(signal === 'traces' ? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT : env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)
  );
}

/** The OTLP protocol of `signal`; a `config` error for one rein cannot send. */
export function otlpProtocol(env: Env, signal: Signal): 'http/protobuf' | 'http/json' {
  const own = signal === 'traces' ? env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL : env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL;
  const value = (set(own) ? own : set(env.OTEL_EXPORTER_OTLP_PROTOCOL) ? env.OTEL_EXPORTER_OTLP_PROTOCOL : 'http/protobuf').trim();
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new ReinError(
    'config',
    'fatal',
    `OTEL_EXPORTER_OTLP_${signal === 'traces' ? 'TRACES_' : 'METRICS_'}PROTOCOL (or OTEL_EXPORTER_OTLP_PROTOCOL) is "${value}": rein exports over http/protobuf or http/json (not grpc)`,
  );
}

/** Where `signal` goes, for messages (no credentials: the URL's query and user are left out). */
export function otlpEndpoint(env: Env, signal: Signal): string {
  const own = signal === 'traces' ? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT : env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
  const raw = set(own) ? own : `${(env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').replace(/\/+$/, '')}/v1/${signal}`;
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(an endpoint that is not a URL)';
  }
}

/**
 * A `config` error when the endpoint `signal` goes to is not an http:// or https:// URL:
 * the exporters would otherwise say so on every export and send to their default
 * (localhost) instead. The value itself is not repeated: it may hold credentials.
 */
export function checkEndpoint(env: Env, signal: Signal): void {
  const name = signal === 'traces' ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT';
  const own = env[name];
  const variable = set(own) ? name : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const raw = (set(own) ? own : (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '')).trim();
  let protocol: string | undefined;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol === 'http:' || protocol === 'https:') return;
  throw new ReinError(
    'config',
    'fatal',
    `${variable} is ${protocol === undefined ? 'not a URL' : `a ${protocol} URL`}: set it to the OTLP/HTTP collector's http:// or https:// URL, e.g. http://127.0.0.1:4318 (or unset it to export nothing)`,
  );
}

/**
 * What OpenTelemetry's diagnostic logger says, on one line: an error (which the SDK's
 * error handler passes as JSON of its stack, message and name) by its message, never its
 * stack.
 */
export function diagText(message: string, args: readonly unknown[]): string {
  const parts = [message, ...args].map((part) => {
    if (part instanceof Error) return part.message;
    if (typeof part === 'string' && part.startsWith('{')) {
      try {
        const parsed = JSON.parse(part) as { message?: unknown };
        if (typeof parsed.message === 'string') return parsed.message;
      } catch {
        // Not JSON: shown as it is, below.
      }
    }
    return typeof part === 'string' ? part : String(part);
  });
  // A stack still inside a message (`Error: …\n    at …`) is cut at its first frame.
  return parts
    .join(' ')
    .replace(/\n\s+at [\s\S]*$/, '')
    .replace(/\s*\n\s*/g, ' ');
}

/** Imports an optional package, or throws naming every package of `needed` to install. */
async function need<T>(name: string, needed: readonly string[], purpose: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if (!isMissing(error, name)) throw error;
    throw new ReinError(
      'config',
      'fatal',
      `${purpose} needs OpenTelemetry packages that are not installed: npm install ${[...new Set(needed)].join(' ')}`,
      { cause: error },
    );
  }
}

function packagesFor(env: Env, signals: Signal[]): string[] {
  const out: string[] = [...PACKAGES.base];
  for (const signal of signals) out.push(...PACKAGES[signal], PACKAGES[otlpProtocol(env, signal)][signal]);
  return out;
}

async function resourceFor(env: Env, needed: string[], purpose: string, version: string): Promise<unknown> {
  const resources = await need<typeof import('@opentelemetry/resources')>('@opentelemetry/resources', needed, purpose);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over rein's defaults.
  return resources
    .resourceFromAttributes({ 'service.name': 'rein', 'service.version': version })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
}

async function spanExporter(env: Env, needed: string[], purpose: string): Promise<SpanExporter> {
  const name = PACKAGES[otlpProtocol(env, 'traces')].traces;
  const mod = await need<{ OTLPTraceExporter: new () => SpanExporter }>(name, needed, purpose);
  return new mod.OTLPTraceExporter();
}

/** A live SDK for the CLI's runs, and what flushes and stops it. */
export interface OtlpSdk {
  tracerProvider?: TracerProvider;
  meterProvider?: MeterProvider;
  /** Flushes what is buffered and stops; resolves within the exporters' own timeouts. Never rejects. */
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK the environment asks for (spans through a batch span
 * processor, metrics through a periodic reader, both over OTLP/HTTP), with OpenTelemetry's
 * own warnings and export errors told to `report`. `undefined` when no export is asked for.
 */
export async function startOtlpSdk(
  env: Env,
  options: { version: string; report: (message: string) => void },
): Promise<OtlpSdk | undefined> {
  const signals = (['traces', 'metrics'] as const).filter((s) => otlpWanted(env, s));
  if (signals.length === 0) return undefined;
  const purpose = 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const needed = packagesFor(env, signals);
  const api = await need<typeof import('@opentelemetry/api')>('@opentelemetry/api', needed, purpose);
  const level = (env.OTEL_LOG_LEVEL ?? 'warn').trim().toUpperCase();
  const diagLevel = (api.DiagLogLevel as unknown as Record<string, number>)[level] ?? api.DiagLogLevel.WARN;
  for (const signal of signals) checkEndpoint(env, signal);
  const say = (message: string, args: unknown[]) => options.report(`OpenTelemetry: ${diagText(message, args)}`);
  api.diag.setLogger(
    {
      error: (message, ...args) => say(message, args),
      warn: (message, ...args) => say(message, args),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    { logLevel: diagLevel, suppressOverrideMessage: true },
  );
  const resource = await resourceFor(env, needed, purpose, options.version);
  const stops: Array<() => Promise<void>> = [];
  const sdk: OtlpSdk = {
    shutdown: async () => {
      await Promise.allSettled(stops.map((stop) => stop()));
    },
  };
  if (signals.includes('traces')) {
    const base = await need<typeof import('@opentelemetry/sdk-trace-base')>('@opentelemetry/sdk-trace-base', needed, purpose);
    const provider = new base.BasicTracerProvider({
      resource: resource as never,
      spanProcessors: [new base.BatchSpanProcessor(await spanExporter(env, needed, purpose))],
    });
    sdk.tracerProvider = provider;
    stops.push(() => provider.shutdown());
  }
  if (signals.includes('metrics')) {
    const metrics = await need<typeof import('@opentelemetry/sdk-metrics')>('@opentelemetry/sdk-metrics', needed, purpose);
    const name = PACKAGES[otlpProtocol(env, 'metrics')].metrics;
    const mod = await need<{ OTLPMetricExporter: new () => import('@opentelemetry/sdk-metrics').PushMetricExporter }>(
      name,
      needed,
      purpose,
    );
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
    const reader = new metrics.PeriodicExportingMetricReader({
      exporter: new mod.OTLPMetricExporter(),
      exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 60_000,
    });
    const provider = new metrics.MeterProvider({ resource: resource as never, readers: [reader] });
    sdk.meterProvider = provider;
    stops.push(() => provider.shutdown());
  }
  return sdk;
}

const hr = (ms: number): [number, number] => {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
};

/** A span record as the SDK's `ReadableSpan`, which the OTLP exporters take. */
function readable(record: SpanRecord, resource: unknown): ReadableSpan {
  const spanContext = { traceId: record.traceId, spanId: record.spanId, traceFlags: 1 };
  return {
    name: record.name,
    kind: record.kind === 'client' ? 2 : 0,
    spanContext: () => spanContext,
    ...(record.parentSpanId
      ? { parentSpanContext: { traceId: record.traceId, spanId: record.parentSpanId, traceFlags: 1, isRemote: true } }
      : {}),
    startTime: hr(record.startTime),
    endTime: hr(record.endTime),
    duration: hr(record.endTime - record.startTime),
    status: {
      code: record.status.code === 'error' ? 2 : record.status.code === 'ok' ? 1 : 0,
      ...(record.status.message ? { message: record.status.message } : {}),
    },
    attributes: record.attributes,
    links: record.links.map((l) => ({
      context: { traceId: l.traceId, spanId: l.spanId, traceFlags: 1, isRemote: true },
      attributes: l.attributes,
    })),
    events: record.events.map((e) => ({ name: e.name, time: hr(e.time), attributes: e.attributes })),
    ended: true,
    resource: resource as ReadableSpan['resource'],
    instrumentationScope: { name: 'rein' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/**
 * Sends span records (a stored run's) to the OTLP endpoint the environment names, with
 * their own ids and times. Resolves with where they went; throws a ReinError when export
 * is not configured, a package is missing, or the endpoint refused them.
 */
export async function exportSpanRecords(records: SpanRecord[], env: Env, version: string): Promise<{ endpoint: string; spans: number }> {
  if (!otlpWanted(env, 'traces')) {
    throw new ReinError(
      'config',
      'fatal',
      'nowhere to export to: set OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), e.g. http://127.0.0.1:4318',
    );
  }
  const purpose = 'rein trace --export';
  const needed = [...PACKAGES.base, PACKAGES[otlpProtocol(env, 'traces')].traces];
  const resource = await resourceFor(env, needed, purpose, version);
  const exporter = await spanExporter(env, needed, purpose);
  const endpoint = otlpEndpoint(env, 'traces');
  try {
    const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
      exporter.export(
        records.map((r) => readable(r, resource)),
        resolve,
      ),
    );
    if (result.code !== 0)
      throw new ReinError(
        'network',
        'fatal',
        `the OTLP endpoint ${endpoint} did not take the spans: ${result.error?.message ?? 'export failed'}`,
        { cause: result.error },
      );
  } finally {
    await exporter.shutdown().catch(() => undefined);
  }
  return { endpoint, spans: records.length };
}
