/** Opening the store for the commands that only read or resume stored runs. */
import type { RunStore } from '../../store/types.js';
import type { CliIO } from '../io.js';

/** The store at `--store`, else `REIN_DATABASE_URL`, else `.rein/rein.db`. */
export async function openStoreFor(location: string | undefined, io: CliIO): Promise<RunStore> {
  const { openStore } = await import('../../store/open.js');
  return openStore(location ?? io.env.REIN_DATABASE_URL, { env: io.env });
}
