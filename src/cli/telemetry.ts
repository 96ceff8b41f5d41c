/**
 * The CLI's observability from its flags and the environment: `--traceparent` /
 * `TRACEPARENT`, `--log-file` / `REIN_LOG_FILE` (with `REIN_LOG_LEVEL`), `--alert-webhook`
 * / `REIN_ALERT_WEBHOOK`, OTLP export from the standard `OTEL_*` variables, trace context
 * sent on per `REIN_TRACE_PROPAGATION`, content capture per
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`. Nothing of it loads unless asked.
 */
import type { Meter } from '@opentelemetry/api';
import { ReinError } from '../errors.js';
import type { AgentOptions, RunOptions } from '../loop/options.js';
import type { CliIO } from './io.js';
import { redactUrlPasswords } from './url-passwords.js';
import { terminalLine } from './terminal-text.js';
import { packageVersion } from './version.js';

/** The flags that set it (shared by `rein run` and `rein chat`). */
export interface TelemetryFlagValues {
  traceparent?: string;
  'log-file'?: string;
  'alert-webhook'?: string;
}

/** What a CLI session's agent and runs get, and what ends it. */
export interface CliTelemetry {
  options: Pick<AgentOptions, 'telemetry' | 'logger' | 'alerts'>;
  runOptions: Pick<RunOptions, 'traceparent' | 'tracestate'>;
  /** Waits for alerts in flight (each bounded by its timeout), flushes the exporters, closes the log file. */
  close(): Promise<void>;
}

/** The meter of a CLI session's telemetry for rein's own instruments (a worker's queue), when OTLP exports metrics. */
export function cliMeter(options: CliTelemetry['options'] | undefined): Meter | undefined {
  const telemetry = options?.telemetry;
  // The provider is the OpenTelemetry SDK's (otlp.ts), whose meters are the API's `Meter`.
  return telemetry ? (telemetry.meterProvider?.getMeter('rein') as Meter | undefined) : undefined;
}

const given = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

/** `REIN_TRACE_PROPAGATION`: where trace context may go. */
function propagation(value: string | undefined): { model: boolean; mcp: boolean } | undefined {
  if (!given(value)) return undefined;
  const words = value
    .split(',')
    .map((w) => w.trim().toLowerCase())
    .filter(Boolean);
  const known = ['model', 'mcp', 'all', 'none'];
  const bad = words.find((w) => !known.includes(w));
  if (bad !== undefined)
    throw new ReinError(
      'config',
      'fatal',
      `REIN_TRACE_PROPAGATION takes model, mcp, all or none (comma-separated), got ${JSON.stringify(bad)}`,
    );
  if (words.includes('none')) return undefined;
  return { model: words.includes('model') || words.includes('all'), mcp: words.includes('mcp') || words.includes('all') };
}

/**
 * Sets up what the flags and environment ask for; a bad value (a malformed traceparent, a
 * log file that cannot be opened, a webhook that is not an http(s) URL, a missing
 * OpenTelemetry package) is a `config` error before anything runs.
 */
export async function openCliTelemetry(values: TelemetryFlagValues, io: CliIO): Promise<CliTelemetry> {
  const env = io.env;
  const closers: Array<() => Promise<void> | void> = [];
  const close = async (): Promise<void> => {
    for (const closer of closers.splice(0).reverse()) {
      try {
        await closer();
      } catch (error) {
        io.stderr.write(`rein: ${terminalLine((error as Error).message)}\n`);
      }
    }
  };
  try {
    const options: CliTelemetry['options'] = {};
    const runOptions: CliTelemetry['runOptions'] = {};
    const traceparent = values.traceparent ?? (given(env.TRACEPARENT) ? env.TRACEPARENT : undefined);
    if (traceparent !== undefined) {
      const { parseTraceparent } = await import('../trace/trace-context.js');
      parseTraceparent(traceparent, values.traceparent !== undefined ? '--traceparent' : 'TRACEPARENT');
      runOptions.traceparent = traceparent.trim();
      if (given(env.TRACESTATE)) runOptions.tracestate = env.TRACESTATE.trim();
    }
    const logFile = values['log-file'] ?? (given(env.REIN_LOG_FILE) ? env.REIN_LOG_FILE : undefined);
    if (logFile !== undefined) {
      const { openFileLogger, parseLogLevel } = await import('../trace/logger.js');
      const level = given(env.REIN_LOG_LEVEL) ? parseLogLevel(env.REIN_LOG_LEVEL, 'REIN_LOG_LEVEL') : 'info';
      const logger = openFileLogger(logFile, { level });
      closers.push(() => logger.close());
      options.logger = logger;
    }
    const webhook = values['alert-webhook'] ?? (given(env.REIN_ALERT_WEBHOOK) ? env.REIN_ALERT_WEBHOOK : undefined);
    if (webhook !== undefined) {
      const { checkWebhook } = await import('../trace/webhook.js');
      checkWebhook(webhook, values['alert-webhook'] !== undefined ? '--alert-webhook' : 'REIN_ALERT_WEBHOOK');
      options.alerts = { webhook: { url: webhook, onError: (error) => io.stderr.write(`rein: ${terminalLine(error.message)}\n`) } };
      const { settleAlerts } = await import('../trace/alerts.js');
      closers.push(() => settleAlerts());
    }
    const { otlpWanted, startOtlpSdk } = await import('../trace/otlp.js');
    const telemetry: NonNullable<Exclude<AgentOptions['telemetry'], false>> = {};
    if (otlpWanted(env, 'traces') || otlpWanted(env, 'metrics')) {
      const sdk = await startOtlpSdk(env, {
        version: await packageVersion(),
        report: (message) => io.stderr.write(`rein: ${terminalLine(redactUrlPasswords(message))}\n`),
      });
      if (sdk) {
        closers.push(() => sdk.shutdown());
        if (sdk.tracerProvider) telemetry.tracerProvider = sdk.tracerProvider;
        if (sdk.meterProvider) telemetry.meterProvider = sdk.meterProvider;
      }
    }
    const propagate = propagation(env.REIN_TRACE_PROPAGATION);
    if (propagate) telemetry.propagate = propagate;
    telemetry.captureContent = /^true$/i.test(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? '');
    options.telemetry = telemetry;
    return { options, runOptions, close };
  } catch (error) {
    await close();
    throw error;
  }
}
