/** `rein workers`: the live workers of a Postgres store (id, host, pid, runs held, last heartbeat). */
import { ReinError } from '../../errors.js';
import type { RunStore } from '../../store/types.js';
import { EXIT, type Command } from '../io.js';
import { parseCommandLine } from '../flags.js';
import { formatMs } from '../render.js';
import { reportSetupError } from './run.js';
import { openStoreFor } from './store-command.js';

const usage = `rein workers [--json] [--store postgres://…]

Lists the live workers of a Postgres store: id, host, pid, runs held (of its concurrency),
and how long ago it last heartbeat. A worker not heard from for 15 s is not listed (its runs
are being continued by others). --json prints one JSON object per worker.`;

export const command: Command = {
  description: 'list the live workers of a Postgres store',
  usage,
  async run(argv, io) {
    let store: RunStore | undefined;
    try {
      const parsed = parseCommandLine(argv, io, usage, { json: { type: 'boolean' }, store: { type: 'string' } }, { positionals: false });
      if (!parsed) return EXIT.ok;
      store = await openStoreFor(parsed.values.store, io);
      const { FleetView } = await import('../../worker/fleet-view.js');
      const fleet = await FleetView.of(store);
      if (!fleet)
        throw new ReinError(
          'config',
          'fatal',
          'workers use a Postgres store: give --store postgres://… (or set REIN_DATABASE_URL); this store has no workers',
        );
      try {
        const workers = await fleet.workers();
        const now = Date.now();
        if (parsed.values.json) {
          for (const w of workers) io.stdout.write(`${JSON.stringify(w)}\n`);
        } else if (workers.length === 0) io.stderr.write('rein: no live workers (rein worker --store … starts one)\n');
        else {
          for (const w of workers) {
            io.stdout.write(
              `${w.id}  ${w.host}  pid ${w.pid}  ${w.runsHeld}/${w.concurrency} runs  heartbeat ${formatMs(Math.max(0, now - w.heartbeatAt))} ago\n`,
            );
          }
        }
      } finally {
        await fleet.close();
      }
      return EXIT.ok;
    } catch (error) {
      return reportSetupError(error, io, false);
    } finally {
      await store?.close();
    }
  },
};
