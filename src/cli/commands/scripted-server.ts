/**
 * `rein scripted-server`: rein's scripted model server, started from a script file, to try
 * the CLI (or a program) offline: it answers from the script through every wire rein
 * speaks. Reads the flags of `node dist/testing/cli.js` (one implementation, in
 * testing/script-file.ts) and runs until Ctrl-C or SIGTERM.
 */
import { ReinError } from '../../errors.js';
import { startFixtureServer, type FixtureServer } from '../../testing/fixture-server.js';
import { SCRIPTED_SERVER_FLAGS, startScriptedServerFromFlags, urlLine } from '../../testing/script-file.js';
import type { ScriptedServer } from '../../testing/server.js';
import { defaultRedactor } from '../../security/redact.js';
import { EXIT, type CliIO, type Command } from '../io.js';
import { parseCommandLine } from '../flags.js';
import { reportSetupError } from './run.js';

const usage = `rein scripted-server --script-module <file.mjs> [options]
rein scripted-server --script <turns.json> [options]
rein scripted-server --fixture <run.fixture.jsonl> [--port <n>] [--host <address>]

Starts rein's scripted model server: an offline stand-in for a model (no key, no network)
that answers from a script and speaks every wire rein supports (OpenAI Chat Completions
and Responses, Anthropic Messages, Gemini). Prints its address as one JSON line on stdout,
{"url":"http://127.0.0.1:<port>/v1","origin":"http://127.0.0.1:<port>"}, then runs until
Ctrl-C or SIGTERM. Point rein at it with rein run --base-url <url> "…" (anthropic/… and
gemini/… models: --base-url <origin>).

Options:
      --script-module <file>   an ES module whose default export is the script: a list of
                                 turns, or a function (request, { index }) => turn that sees
                                 request.messages, request.toolNames, request.model
      --script <file.json>     a JSON list of turns, e.g. [{"toolCalls": [{"name": "calculate",
                                 "arguments": {"expression": "6 * 7"}}]}, {"text": "It is 42."}]
      --fixture <file>         play back a run recorded with rein run --record <file>: each
                                 request, in order, gets the recorded response over the same
                                 wire; the first request that differs from the recording is
                                 reported on stderr (where, expected, got) and answered HTTP 400
      --port <n>               the port to listen on (default 0: any free port)
      --host <address>         the address to listen on (default 127.0.0.1)
      --model <id>             the model id GET /v1/models lists (default scripted)
      --chunk-size <n>         characters of text per streamed delta (default 12)
      --token-delay-ms <n>     pause between streamed deltas (default 0)
  -h, --help                   this help

A turn takes text, thinking, toolCalls ([{"name", "arguments"}]), finishReason, usage,
fault and delayMs. Each request takes the next turn of a list; a list that has run out
answers HTTP 500.`;

/** The flags: the scripted server's, and the playback of a recording. */
const FLAGS = { ...SCRIPTED_SERVER_FLAGS, fixture: { type: 'string' } } as const;

export const command: Command = {
  description: "rein's scripted model server, to try rein offline",
  usage,
  async run(argv, io) {
    try {
      const parsed = parseCommandLine(argv, io, usage, FLAGS, { positionals: false });
      if (!parsed) return EXIT.ok;
      const { fixture, ...scripted } = parsed.values;
      if (fixture === undefined && scripted['script-module'] === undefined && scripted.script === undefined) {
        throw new ReinError(
          'config',
          'fatal',
          'no script given: --script-module <file.mjs> (its default export: a list of turns or a function), --script <file.json> (a list of turns), or --fixture <file> (a run recorded with rein run --record)',
        );
      }
      const server = fixture === undefined ? await startScriptedServerFromFlags(scripted) : await playback(fixture, scripted, io);
      try {
        io.stdout.write(urlLine(server));
        io.stderr.write(
          `rein scripted-server: ${fixture === undefined ? 'a scripted model' : `the recording ${fixture}`} at ${server.url} (no key, no network); Ctrl-C stops it.\n` +
            `Try: rein run --base-url ${server.url} "hello"   (anthropic/… and gemini/… models: --base-url ${server.origin})\n`,
        );
        // Ctrl-C and SIGTERM (see main.ts) abort the signal; so does the output closing.
        await new Promise<void>((resolve) => {
          if (io.signal.aborted) resolve();
          else io.signal.addEventListener('abort', () => resolve(), { once: true });
        });
      } finally {
        await server.close();
      }
      if (fixture !== undefined && isPlayback(server)) {
        if (server.divergence !== undefined) return EXIT.failed;
        if (server.left > 0)
          io.stderr.write(`rein scripted-server: ${server.left} recorded exchange${server.left === 1 ? ' was' : 's were'} not asked for\n`);
      }
      return EXIT.ok;
    } catch (error) {
      return reportSetupError(error, io, false);
    }
  },
};

/** The playback of `path`: only --port and --host go with --fixture. */
async function playback(path: string, values: Record<string, string | boolean | undefined>, io: CliIO): Promise<FixtureServer> {
  const others = Object.keys(values).filter((name) => values[name] !== undefined && name !== 'port' && name !== 'host' && name !== 'help');
  if (others.length > 0)
    throw new ReinError(
      'config',
      'fatal',
      `--fixture plays a recording back as it was: leave out ${others.map((name) => `--${name}`).join(', ')} (only --port and --host go with it)`,
    );
  const given = typeof values.port === 'string' ? values.port : undefined;
  const host = typeof values.host === 'string' ? values.host : undefined;
  const port = given === undefined ? 0 : Number(given);
  if (given !== undefined && (given.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new ReinError('config', 'fatal', `--port expects a whole number from 0 to 65535, got "${given}"`);
  }
  return startFixtureServer({
    fixture: path,
    port,
    ...(host === undefined ? {} : { host }),
    // Bodies were redacted so when recorded: a request is compared redacted the same way.
    redact: defaultRedactor(),
    onDivergence: (divergence) => io.stderr.write(`rein scripted-server: ${divergence.message}\n`),
  });
}

function isPlayback(server: ScriptedServer | FixtureServer): server is FixtureServer {
  return 'divergence' in server;
}
