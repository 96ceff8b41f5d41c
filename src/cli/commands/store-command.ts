/** Opening the store for the commands that only read or resume stored runs. */
import { ReinError } from '../../errors.js';
import type { RunRecord, RunStore } from '../../store/types.js';
import type { CliIO } from '../io.js';

/** The store at `--store`, else `REIN_DATABASE_URL` (of `io.env`), else `.rein/rein.db`. */
export async function openStoreFor(location: string | undefined, io: CliIO): Promise<RunStore> {
  const { openStore } = await import('../../store/open.js');
  return openStore(location, { env: io.env });
}

/** Run `runId`'s record; a `not_found` error that says where to look when there is none. */
export async function findRun(store: RunStore, runId: string): Promise<RunRecord> {
  const run = await store.getRun(runId);
  if (!run) throw new ReinError('not_found', 'fatal', `there is no run ${runId} in the store (rein runs lists them)`);
  return run;
}
