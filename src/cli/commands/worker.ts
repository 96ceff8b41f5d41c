/**
 * `rein worker`: takes queued runs (rein submit, rein serve that queues) from the Postgres
 * store and drives them with the agents of `.rein/agents/` under its root. Any number run
 * on any number of machines; one that dies costs its runs a short delay (another worker
 * continues them from their logs). SIGTERM drains it.
 */
import { cliMeter, openCliTelemetry, type CliTelemetry } from '../telemetry.js';
import { resolve } from 'node:path';
import { ReinError } from '../../errors.js';
import { asMissing } from '../../optional.js';
import { maskStoreLocation, namedStoreLocation } from '../../store/open.js';
import type { RunStore } from '../../store/types.js';
import { EXIT, type Command } from '../io.js';
import { parseCommandLine } from '../flags.js';
import { reportSetupError } from './run.js';
import { openStoreFor } from './store-command.js';

const usage = `rein worker [--store postgres://…] [--concurrency N] [--root DIR] [--max-model-requests N] [--limit-by provider|model]

Takes runs from the queue of a Postgres store (rein submit, a rein serve that queues) and
drives each with the agent it names: .rein/agents/<name>.md under --root (and "default",
what rein run builds there). A run whose agent is unknown here, or whose file changed since
it was submitted, is refused (rein show says why). Prints {"worker":"<id>"} on stdout once
it takes jobs; one line per run taken, ended, refused or let go on stderr.

A worker that dies (kill -9, a lost machine) stops heartbeating: within about 15 s another
worker continues its runs from their logs (no completed tool call runs again; an unsafe
call cut off ends as unknown). SIGTERM or Ctrl-C drains it: no new runs; each running run
finishes its current step and goes back to the queue. A second signal stops at once.

Options:
      --store <postgres://…>     the run store (default: $REIN_DATABASE_URL)
      --concurrency <n>          runs driven at once (default 4)
      --root <dir>               the project whose agents, tools and rules the runs use
                                   (default: the working directory)
      --max-model-requests <n>   at most n model requests at once per provider across every
                                   worker that sets it (kept in Postgres)
      --limit-by <what>          what --max-model-requests counts: provider (the provider and
                                   its base URL; default) or model (base URL and model)
  -h, --help                     this help`;

export const command: Command = {
  description: 'take queued runs from a Postgres store and drive them',
  usage,
  async run(argv, io) {
    let store: RunStore | undefined;
    let agents: { close(): Promise<void> } | undefined;
    let telemetry: CliTelemetry | undefined;
    try {
      const parsed = parseCommandLine(
        argv,
        io,
        usage,
        {
          store: { type: 'string' },
          concurrency: { type: 'string' },
          root: { type: 'string' },
          'max-model-requests': { type: 'string' },
          'limit-by': { type: 'string' },
        },
        { positionals: false },
      );
      if (!parsed) return EXIT.ok;
      const { values } = parsed;
      const concurrency = positiveInt(values.concurrency, '--concurrency', 4);
      const maxConcurrent =
        values['max-model-requests'] === undefined ? undefined : positiveInt(values['max-model-requests'], '--max-model-requests', 1);
      const by = values['limit-by'];
      if (by !== undefined && by !== 'provider' && by !== 'model')
        throw new ReinError('config', 'fatal', `--limit-by expects provider or model, got "${by}"`);
      if (by !== undefined && maxConcurrent === undefined)
        throw new ReinError('config', 'fatal', '--limit-by needs --max-model-requests N');
      const named = namedStoreLocation(values.store, io.env);
      if (named === undefined || !/^postgres(ql)?:\/\//i.test(named)) {
        throw new ReinError(
          'config',
          'fatal',
          'rein worker takes runs from a Postgres store, which every worker reaches: give --store postgres://… (or set REIN_DATABASE_URL)',
        );
      }
      const root = resolve(values.root ?? process.cwd());
      try {
        store = await openStoreFor(values.store, io);
      } catch (error) {
        throw new ReinError('config', 'fatal', `cannot open the run store ${maskStoreLocation(named)}: ${(error as Error).message}`, {
          cause: error,
        });
      }
      const [{ createWorker }, { openWorkerAgents }] = await Promise.all([
        import('../../worker/worker.js').catch((error: unknown) => {
          throw asMissing(error, ['pg-boss'], 'rein worker');
        }),
        import('../worker-agents.js'),
      ]);
      // The runs' spans and metrics, and the queue's, go to OTLP when the OTEL_* variables say so.
      telemetry = await openCliTelemetry({}, io);
      const catalog = openWorkerAgents(root, store, io, telemetry.options);
      agents = catalog;
      const meter = cliMeter(telemetry.options);
      const worker = await createWorker({
        store,
        agents: catalog.resolve,
        ...(meter ? { meter } : {}),
        concurrency,
        ...(maxConcurrent === undefined ? {} : { modelLimits: { maxConcurrent, ...(by === undefined ? {} : { by }) } }),
        onEvent: (event) => io.stderr.write(`rein worker: ${describe(event)}\n`),
      });
      io.stdout.write(`${JSON.stringify({ worker: worker.id })}\n`);
      io.stderr.write(
        `rein worker: ${worker.id} takes runs from ${maskStoreLocation(named)} (concurrency ${concurrency}, agents of ${root}); Ctrl-C or SIGTERM drains it\n`,
      );
      await new Promise<void>((done) => {
        if (io.signal.aborted) done();
        else io.signal.addEventListener('abort', () => done(), { once: true });
      });
      io.stderr.write(
        `rein worker: draining: no new runs; ${worker.running} running run${worker.running === 1 ? '' : 's'} go${worker.running === 1 ? 'es' : ''} back to the queue after the current step\n`,
      );
      await worker.stop({ drain: true });
      io.stderr.write('rein worker: stopped\n');
      return EXIT.ok;
    } catch (error) {
      return reportSetupError(error, io, false);
    } finally {
      await agents?.close();
      await telemetry?.close();
      await store?.close();
    }
  },
};

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > 1000)
    throw new ReinError('config', 'fatal', `${flag} expects a whole number from 1 to 1000, got "${value}"`);
  return Number(value);
}

function describe(event: import('../../worker/worker.js').WorkerEvent): string {
  switch (event.type) {
    case 'taken':
      return `took run ${event.runId} (queued ${event.pickupMs} ms before)`;
    case 'finished':
      return `run ${event.runId} ${event.status} (${event.reason})`;
    case 'refused':
      return `refused run ${event.runId}: ${event.why}`;
    case 'released':
      return `let run ${event.runId} go back to the queue: ${event.why}`;
    case 'error':
      return event.message;
  }
}
