/**
 * Delivering an alert to a webhook: one JSON POST, retried after a 5xx, a 429 or a
 * network error with a short backoff, the whole delivery bounded by one timeout. It runs
 * beside the run and never throws into it; a URL in an error has no credentials.
 */
import { ReinError } from '../errors.js';
import { displayUrl } from '../model/base-url.js';
import { httpPost } from '../http/client.js';
import type { Alert, AlertWebhook } from './types.js';

/** Defaults of {@link AlertWebhook}. */
export const WEBHOOK_DEFAULTS = { timeoutMs: 5000, retries: 3 } as const;

/** Checks a webhook's settings (at construction): a `config` error naming what is wrong. */
export function checkWebhook(webhook: string | AlertWebhook, option: string): AlertWebhook {
  const settings = typeof webhook === 'string' ? { url: webhook } : webhook;
  let protocol: string | undefined;
  try {
    protocol = new URL(settings.url).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new ReinError(
      'config',
      'fatal',
      `${option} must be an http:// or https:// URL (got ${protocol === undefined ? 'something that is not a URL' : `a ${protocol.slice(0, -1)} URL`})`,
    );
  }
  for (const key of ['timeoutMs', 'retries'] as const) {
    const value = settings[key];
    if (value !== undefined && (!Number.isInteger(value) || value < (key === 'retries' ? 0 : 1))) {
      throw new ReinError(
        'config',
        'fatal',
        `${option}.${key} must be a whole number${key === 'retries' ? ' (0 or more)' : ' of milliseconds (1 or more)'}, got ${String(value)}`,
      );
    }
  }
  return settings;
}

/** The wire form of an alert: snake_case JSON, as webhooks commonly take. */
export function alertPayload(alert: Alert): Record<string, unknown> {
  return {
    type: 'rein.alert',
    id: alert.id,
    reason: alert.reason,
    message: alert.message,
    run_id: alert.runId,
    trace_id: alert.traceId,
    status: alert.status,
    stop_reason: alert.stopReason,
    ...(alert.error ? { error: alert.error } : {}),
    model: alert.model,
    ...(alert.agentName ? { agent: alert.agentName } : {}),
    at: alert.at,
    command: alert.command,
    ...(alert.url ? { url: alert.url } : {}),
    totals: alert.totals,
  };
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * POSTs `alert` to the webhook; resolves when it was taken (a 2xx), or when delivery gave
 * up (then `onError` is told). Never rejects. The timeout bounds everything, retries and
 * waits included, so a dead endpoint costs at most that long.
 */
export async function deliverAlert(webhook: AlertWebhook, alert: Alert, body: string): Promise<boolean> {
  const timeoutMs = webhook.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs;
  const retries = webhook.retries ?? WEBHOOK_DEFAULTS.retries;
  const shown = displayUrl(webhook.url);
  const signal = AbortSignal.timeout(timeoutMs);
  const headers = { 'content-type': 'application/json', 'user-agent': 'rein', 'x-rein-alert-id': alert.id, ...webhook.headers };
  let failure = '';
  for (let attempt = 0; attempt <= retries && !signal.aborted; attempt++) {
    if (attempt > 0) await sleep(Math.min(250 * 2 ** (attempt - 1), 2000), signal);
    if (signal.aborted) break;
    try {
      const res = await httpPost(new URL(webhook.url), headers, body, signal, timeoutMs);
      // The answer's body is not needed; reading it frees the connection for the next alert.
      await res.text(2000).catch(() => '');
      if (res.status >= 200 && res.status < 300) return true;
      failure = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
      if (res.status < 500 && res.status !== 429) break;
    } catch (error) {
      failure = signal.aborted ? `no answer within ${timeoutMs} ms` : ((error as { code?: string }).code ?? (error as Error).message);
    }
  }
  if (signal.aborted && !failure.startsWith('no answer')) failure = `${failure ? `${failure}, then ` : ''}no answer within ${timeoutMs} ms`;
  const error = new ReinError(
    'network',
    'transient',
    `alert ${alert.id} (${alert.reason}) could not be delivered to ${shown}: ${failure || 'gave up'}`,
  );
  try {
    webhook.onError?.(error, alert);
  } catch {
    // A failing error handler must not reach the run either.
  }
  return false;
}
