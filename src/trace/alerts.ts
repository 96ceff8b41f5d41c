/**
 * Alerts from a run's end: a fatal error, a tripped tool-error breaker, a budget reached,
 * a run paused for a person (each switchable). Each alert goes to `hooks.onAlert`, to the
 * webhook and to the logger, redacted; none of them can block or fail the run.
 */
import type { RunEvent } from '../events.js';
import type { Redactor } from '../security/redact.js';
import type { Alert, AlertOptions, AlertReason, AlertWebhook, Logger } from './types.js';
import { alertPayload, deliverAlert } from './webhook.js';

/** Which reason a finished run raises, if any. */
export function alertReasonOf(event: Extract<RunEvent, { type: 'run_finished' }>): AlertReason | undefined {
  if (event.status === 'failed') return 'fatal_error';
  if (event.reason === 'tool_errors') return 'tool_errors';
  if (event.reason === 'budget') return 'budget';
  if (event.status === 'paused') return 'awaiting_approval';
  return undefined;
}

const WHAT: Record<AlertReason, string> = {
  fatal_error: 'failed',
  tool_errors: 'stopped: too many tool errors in a row (the tool-error breaker tripped)',
  budget: 'stopped: its budget is used up',
  awaiting_approval: "is paused, waiting for a person's approval",
};

/** Where alerts go, for one agent. */
export interface AlertTargets {
  options: AlertOptions;
  webhook?: AlertWebhook;
  onAlert?: (alert: Alert) => void | Promise<void>;
  logger?: Logger;
  redactor: Redactor;
}

/** Alerts in flight (webhook deliveries), so a program can wait for them before it exits. */
const inFlight = new Set<Promise<unknown>>();

/** Resolves once every alert delivery started so far has finished (each is bounded by its timeout). */
export async function settleAlerts(): Promise<void> {
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
}

/** Raises the alert a finished run calls for, if it is switched on. Never throws. */
export function raiseAlert(
  targets: AlertTargets,
  event: Extract<RunEvent, { type: 'run_finished' }>,
  info: { model: string; agentName?: string; traceId: string },
): Alert | undefined {
  const reason = alertReasonOf(event);
  if (reason === undefined || targets.options.on?.[reason] === false) return undefined;
  const { result } = event;
  const runId = event.runId || result.runId;
  const error = result.error;
  const command = reason === 'awaiting_approval' ? `rein approve ${runId}` : `rein trace ${runId}`;
  const detail = error ? `: ${error.code}: ${error.message}` : '';
  const raw: Alert = {
    id: `${runId}:${event.seq}`,
    reason,
    message: `run ${runId} ${WHAT[reason]}${detail} (see: ${command})`,
    runId,
    traceId: info.traceId || result.traceId,
    status: event.status,
    stopReason: event.reason,
    ...(error
      ? {
          error: {
            code: error.code,
            kind: error.kind,
            message: error.message,
            ...(error.status === undefined ? {} : { status: error.status }),
          },
        }
      : {}),
    model: info.model,
    ...(info.agentName ? { agentName: info.agentName } : {}),
    at: new Date(event.at || Date.now()).toISOString(),
    command,
    ...(targets.options.runUrl ? { url: targets.options.runUrl.split('{runId}').join(encodeURIComponent(runId)) } : {}),
    totals: result.totals,
  };
  const alert = targets.redactor.redactValue(raw);
  try {
    targets.logger?.error(
      {
        event: 'alert',
        trace_id: alert.traceId,
        run_id: runId,
        reason,
        alert_id: alert.id,
        ...(alert.error ? { error: alert.error } : {}),
      },
      alert.message,
    );
  } catch {
    // The logger is the program's: its failure is not the run's.
  }
  if (targets.onAlert) {
    try {
      const answer = targets.onAlert(alert);
      if (answer && typeof (answer as Promise<void>).then === 'function') track((answer as Promise<void>).catch(() => undefined));
    } catch {
      // onAlert is told; what it does with that is not the run's business.
    }
  }
  if (targets.webhook) track(deliverAlert(targets.webhook, alert, JSON.stringify(alertPayload(alert))));
  return alert;
}

function track(promise: Promise<unknown>): void {
  inFlight.add(promise);
  void promise.finally(() => inFlight.delete(promise));
}
