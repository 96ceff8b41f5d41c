/**
 * Keeping secrets out of what lasts: a run store and a log sink that redact on the way
 * in. The live event stream is untouched (the model and the tools need the real values);
 * only what is written down is redacted.
 */
import type { RunEvent } from '../events.js';
import type { NewRun, RunQueue, RunStore } from '../store/types.js';
import type { Redactor } from './redact.js';

/**
 * A store that redacts every appended event and each new run's configuration before the
 * inner store sees them. Events without a secret are passed through as the same objects.
 * A resumed run folds its history from the redacted log, so the model sees
 * `[REDACTED:…]` where a secret was: a tool that needs a secret should read it from its
 * own configuration, not from the model's arguments.
 *
 * @example
 * const store = redactingStore(await openStore(), createRedactor());
 * const agent = new Agent({ model: 'openai/gpt-4o-mini', store });
 */
export function redactingStore(inner: RunStore, redactor: Redactor): RunStore {
  return {
    createRun: (run: NewRun) => inner.createRun({ ...run, config: redactor.redactValue(run.config) }),
    acquireLease: (runId) => inner.acquireLease(runId),
    append: (runId, epoch, events, options) => {
      const redacted = events.map((event) => redactor.redactValue<RunEvent>(event));
      return inner.append(runId, epoch, redacted, options);
    },
    loadEvents: (runId, fromSeq) => inner.loadEvents(runId, fromSeq),
    getRun: (runId) => inner.getRun(runId),
    listRuns: (filter) => inner.listRuns(filter),
    updateRun: (runId, epoch, patch) => inner.updateRun(runId, epoch, patch),
    // The queue writes the log too: the same redaction on its way.
    ...(inner.queue ? { queue: redactingQueue(inner.queue, redactor) } : {}),
    close: () => inner.close(),
  };
}

function redactingQueue(inner: RunQueue, redactor: Redactor): RunQueue {
  const redact = (events: readonly RunEvent[]) => events.map((event) => redactor.redactValue<RunEvent>(event));
  return {
    submit: (run, events) => inner.submit({ ...run, config: redactor.redactValue(run.config) }, redact(events)),
    requeue: (runId, epoch, events) => inner.requeue(runId, epoch, redact(events)),
  };
}

/**
 * A log sink (`AgentOptions.log`, a tracer's) that redacts the message and the data first.
 *
 * @example
 * const agent = new Agent({ model, log: redactingLog((m, d) => console.error(m, d), createRedactor()) });
 */
export function redactingLog(
  log: (message: string, data?: Record<string, unknown>) => void,
  redactor: Redactor,
): (message: string, data?: Record<string, unknown>) => void {
  return (message, data) => log(redactor.redactText(message), data === undefined ? undefined : redactor.redactValue(data));
}
