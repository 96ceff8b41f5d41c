/**
 * `rein serve`: the agents of `.rein/agents/` over HTTP — runs, their event logs as
 * resumable server-sent events, approvals, steering — and the run viewer at `/`. The
 * server itself (src/server/) is loaded only here; this builds what it is given: the
 * store, the token, and the agents, made as `rein run` makes them.
 */
import { openCliTelemetry, type CliTelemetry } from '../telemetry.js';
import { ReinError } from '../../errors.js';
import { asMissing } from '../../optional.js';
import { maskStoreLocation, namedStoreLocation } from '../../store/open.js';
import type { RunStore } from '../../store/types.js';
import { EXIT, type Command } from '../io.js';
import { parseCommandLine } from '../flags.js';
import { reportSetupError } from './run.js';
import { openStoreFor } from './store-command.js';
import { packageVersion } from '../version.js';

const usage = `rein serve [--port N] [--host H] [--store URL] [--base-url URL] [--no-execute]

Serves the agents of .rein/agents/<name>.md in this folder (and "default", what rein run
builds here) over HTTP: POST /v1/runs starts a run, GET /v1/runs/<id>/events streams its
events (server-sent events, resumable with Last-Event-ID), approvals and steering go
through the API, and the run viewer is at /. Prints {"url":"http://127.0.0.1:N"} as the
first line on stdout. Runs left running by a crash or a stop continue when the server
starts again on the same store. Ctrl-C or SIGTERM stops it: no new runs, streams end,
running runs are left to continue on the next start. docs/server.md has the routes.

Every route but GET /healthz needs the token: REIN_SERVER_TOKEN, else the one in
.rein/server-token (made on the first start, mode 0600; its path is printed on stderr).

Options:
      --port <n>         the port (default 0: any free port)
      --host <address>   the address to listen on (default 127.0.0.1). Any other than
                           loopback needs a token of at least 32 characters set up
                           beforehand (REIN_SERVER_TOKEN or .rein/server-token)
      --store <path|postgres://…>  the run store (default: $REIN_DATABASE_URL, else .rein/rein.db)
      --base-url <url>   the model server of agents whose file names none (as rein run --base-url)
      --no-execute       with a Postgres store: runs are queued for the workers (rein worker)
                           instead of run here, and approvals put them back in the queue.
                           Without it, a server on a Postgres store also runs a worker inside it
  -h, --help             this help`;

export const command: Command = {
  description: 'agents over HTTP: runs, live event streams, approvals, a run viewer',
  usage,
  async run(argv, io) {
    let store: RunStore | undefined;
    let agents: { close(): Promise<void> } | undefined;
    let inside: { stop(): Promise<void> } | undefined;
    let telemetry: CliTelemetry | undefined;
    try {
      const parsed = parseCommandLine(
        argv,
        io,
        usage,
        {
          port: { type: 'string' },
          host: { type: 'string' },
          store: { type: 'string' },
          'base-url': { type: 'string' },
          'no-execute': { type: 'boolean' },
        },
        { positionals: false },
      );
      if (!parsed) return EXIT.ok;
      const { values } = parsed;
      const port = portOf(values.port);
      const host = values.host ?? '127.0.0.1';
      if (host.trim() === '') throw new ReinError('config', 'fatal', '--host needs an address, e.g. 127.0.0.1 or 0.0.0.0');
      const baseUrl = values['base-url'];
      if (baseUrl !== undefined) checkBaseUrl(baseUrl);
      const root = process.cwd();
      const [{ loadServerToken }, { startServer }, { openServedAgents }] = await Promise.all([
        import('../../server/token.js'),
        // hono and its Node adapter are optional packages: a missing one is named.
        import('../../server/server.js').catch((error: unknown) => {
          throw asMissing(error, ['hono', '@hono/node-server'], 'rein serve');
        }),
        import('../served-agents.js'),
      ]);
      const token = await loadServerToken({ cwd: root, env: io.env, host });
      const named = namedStoreLocation(values.store, io.env);
      try {
        store = await openStoreFor(values.store, io);
      } catch (error) {
        throw new ReinError(
          'config',
          'fatal',
          `cannot open the run store ${maskStoreLocation(named ?? '.rein/rein.db')}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      const noExecute = values['no-execute'] === true;
      if (noExecute && !store.queue) {
        throw new ReinError(
          'config',
          'fatal',
          '--no-execute queues runs for the workers, in a store they all reach: give --store postgres://… (or set REIN_DATABASE_URL)',
        );
      }
      // The runs' spans and metrics go to OTLP when the OTEL_* variables say so.
      telemetry = await openCliTelemetry({}, io);
      const catalog = openServedAgents({ root, io, telemetry: telemetry.options, ...(baseUrl === undefined ? {} : { baseUrl }) });
      agents = catalog;
      // On a Postgres store the server queues (--no-execute) or is also one of the workers.
      const queue = store.queue ? await import('./serve-queue.js') : undefined;
      const queueMode = noExecute && queue ? queue.queueModeOf(store) : undefined;
      if (queue && !noExecute) inside = await queue.workerInside(store, root, io, telemetry.options);
      const server = await startServer({
        ...(queueMode ? { queueMode } : {}),
        store,
        agents: catalog,
        token: token.token,
        host,
        port,
        version: await packageVersion(),
        warn: (line) => io.stderr.write(`rein serve: ${line}\n`),
      });
      io.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
      if (token.source === 'env') io.stderr.write('rein serve: the token is REIN_SERVER_TOKEN\n');
      else io.stderr.write(`rein serve: the token is in ${token.file}${token.source === 'generated' ? ' (made now, mode 0600)' : ''}\n`);
      io.stderr.write(
        `rein serve: listening on ${server.url}; the run viewer is at ${server.url}/ (sign in with the token). Ctrl-C stops it.\n`,
      );
      const recovered = await server.recover();
      if (recovered.length > 0)
        io.stderr.write(
          `rein serve: continuing ${recovered.length} run${recovered.length === 1 ? '' : 's'} from ${recovered.length === 1 ? 'its log' : 'their logs'}: ${recovered.join(', ')}\n`,
        );
      // Ctrl-C and SIGTERM (see main.ts) abort the signal; so does the output closing.
      await new Promise<void>((resolve) => {
        if (io.signal.aborted) resolve();
        else io.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      io.stderr.write('rein serve: stopping: no new runs; streams end; running runs are left to continue on the next start\n');
      await inside?.stop();
      const stopped = await server.stop();
      if (stopped > 0)
        io.stderr.write(`rein serve: ${stopped} run${stopped === 1 ? '' : 's'} left running in the store, to continue on the next start\n`);
      return EXIT.ok;
    } catch (error) {
      return reportSetupError(error, io, false);
    } finally {
      await inside?.stop();
      await agents?.close();
      await telemetry?.close();
      await store?.close();
    }
  },
};

function portOf(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new ReinError('config', 'fatal', `--port expects a port number from 0 to 65535, got "${value}"`);
  return Number(value);
}

function checkBaseUrl(value: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = undefined;
  }
  // Not quoted back: a URL may carry a password.
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new ReinError(
      'config',
      'fatal',
      '--base-url must be an http:// or https:// URL up to the API version, e.g. http://127.0.0.1:8000/v1',
    );
}
