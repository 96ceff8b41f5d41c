/**
 * Runs a scripted model server as its own process (the benchmark keeps it off the measured
 * process): `node dist/testing/cli.js --script-module ./script.js [--port N]
 * [--host H] [--model ID] [--chunk-size N] [--token-delay-ms N]` (or `--script turns.json`).
 * The module's default export is the script: a list of turns or a function of the request.
 * Prints `{"url":"…","origin":"…"}` once listening; stops on SIGTERM, SIGINT, or when its
 * stdin pipe closes (so it never outlives a parent that spawned it). `rein scripted-server`
 * reads the same flags, through the same code (script-file.ts).
 */
import { fstatSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ReinError } from '../errors.js';
import { SCRIPTED_SERVER_FLAGS, startScriptedServerFromFlags, urlLine } from './script-file.js';
import type { ScriptedServer } from './server.js';

const USAGE =
  'usage: cli.js --script-module path.js | --script turns.json [--port N] [--host H] [--model ID] [--chunk-size N] [--token-delay-ms N]\n';

let server: ScriptedServer;
try {
  const { values } = parseArgs({ options: SCRIPTED_SERVER_FLAGS });
  server = await startScriptedServerFromFlags(values);
} catch (error) {
  // A mistake in the command line or the script file: say it, with the usage.
  const usage = error instanceof ReinError || String((error as { code?: unknown })?.code).startsWith('ERR_PARSE_ARGS');
  if (!usage) throw error;
  process.stderr.write(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
process.stdout.write(urlLine(server));

const stop = (): void => {
  void server.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
// Only a pipe (Node's spawn uses a socketpair) means "a parent is watching": /dev/null would
// end at once and a TTY never.
const stdin = fstatSync(0);
if (stdin.isFIFO() || stdin.isSocket()) {
  process.stdin.once('end', stop).once('close', stop).resume();
}
