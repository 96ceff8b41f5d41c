/**
 * Runs a scripted model server as its own process (the benchmark keeps it off the measured
 * process): `node dist/model/scripted/cli.js --script-module ./script.js [--port N]
 * [--host H] [--model ID] [--chunk-size N] [--token-delay-ms N]`. The module's default
 * export is the {@link Script}. Prints `{"url":"…"}` once listening; stops on SIGTERM,
 * SIGINT, or when its stdin pipe closes (so it never outlives a parent that spawned it).
 */
import { fstatSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Script } from './script.js';
import { startScriptedServer } from './server.js';

const { values } = parseArgs({
  options: {
    'script-module': { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    model: { type: 'string' },
    'chunk-size': { type: 'string' },
    'token-delay-ms': { type: 'string' },
  },
});

const modulePath = values['script-module'];
if (!modulePath) {
  process.stderr.write('usage: cli.js --script-module path.js [--port N] [--host H] [--model ID] [--chunk-size N] [--token-delay-ms N]\n');
  process.exit(2);
}
const loaded = (await import(pathToFileURL(resolve(modulePath)).href)) as { default?: unknown };
if (!Array.isArray(loaded.default) && typeof loaded.default !== 'function') {
  process.stderr.write(`${modulePath}: the default export must be a script (an array of turns or a function)\n`);
  process.exit(2);
}
const number = (value: string | undefined): number | undefined => (value === undefined ? undefined : Number(value));
const server = await startScriptedServer({
  script: loaded.default as Script,
  port: number(values.port),
  host: values.host,
  model: values.model,
  chunkSize: number(values['chunk-size']),
  tokenDelayMs: number(values['token-delay-ms']),
  // Nobody can read `requests` from outside the process; keeping them would only grow memory.
  recordRequests: false,
});
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);

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
