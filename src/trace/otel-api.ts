/**
 * The one place rein loads `@opentelemetry/api`: by dynamic import, on a run's start, never
 * at import time. The package is optional: without it nothing is traced or measured and
 * nothing is paid for; asked for explicitly without it, the error names the package.
 */
import { createRequire } from 'node:module';
import { ReinError } from '../errors.js';

/** The `@opentelemetry/api` module. */
export type OtelApi = typeof import('@opentelemetry/api');

const PACKAGE = '@opentelemetry/api';
let loading: Promise<OtelApi | undefined> | undefined;
/** The module once loaded (`undefined`: not installed); `null` until then. */
let loaded: OtelApi | undefined | null = null;

/** The API module, or `undefined` when it is not installed (loaded once per process). */
export function loadOtelApi(): Promise<OtelApi | undefined> {
  loading ??= import(PACKAGE).then(
    (mod: OtelApi & { default?: OtelApi }) => (loaded = mod.trace ? mod : mod.default),
    (error: unknown) => {
      if (isMissing(error, PACKAGE)) return (loaded = undefined);
      throw error;
    },
  );
  return loading;
}

/** The API module if {@link loadOtelApi} has loaded it (`undefined`: not installed); `null` before. */
export function loadedOtelApi(): OtelApi | undefined | null {
  return loaded;
}

/** Whether the API package can be found from rein (a synchronous check for the constructor). */
export function otelApiInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve(PACKAGE);
    return true;
  } catch {
    return false;
  }
}

/** The error for an option that needs `@opentelemetry/api` when it is not installed. */
export function missingOtelApi(option: string): ReinError {
  return new ReinError(
    'config',
    'fatal',
    `${option} needs the OpenTelemetry API: npm install ${PACKAGE} (and an OpenTelemetry SDK to record what it is given)`,
  );
}

/** True when `error` is Node's "cannot find package `name`" (not a failure inside it). */
export function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes(name);
}

/**
 * Whether an SDK took the global tracer provider: the API's global is a proxy whose
 * delegate stays the no-op provider until one registers (a fresh proxy shows which object
 * that is, without reaching into the API's internals).
 */
export function hasGlobalTracer(api: OtelApi): boolean {
  const global = api.trace.getTracerProvider();
  if (!(global instanceof api.ProxyTracerProvider)) return true;
  return global.getDelegate() !== noopsOf(api).tracerProvider;
}

/** Whether a meter records anything: the no-op meter is an instance of the API's own no-op class. */
export function isNoopMeter(api: OtelApi, meter: unknown): boolean {
  return meter instanceof noopsOf(api).meterClass;
}

const noops = new WeakMap<OtelApi, { tracerProvider: unknown; meterClass: abstract new () => unknown }>();

/** The API's no-op tracer provider and meter class, found once per API module (asked on every run's start). */
function noopsOf(api: OtelApi): { tracerProvider: unknown; meterClass: abstract new () => unknown } {
  let found = noops.get(api);
  if (!found) {
    found = {
      tracerProvider: new api.ProxyTracerProvider().getDelegate(),
      meterClass: api.createNoopMeter().constructor as abstract new () => unknown,
    };
    noops.set(api, found);
  }
  return found;
}
