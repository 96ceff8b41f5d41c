/**
 * `rein scripted-server`: rein's scripted model server, started from a script file, to try
 * the CLI (or a program) offline: it answers from the script through every wire rein
 * speaks. Reads the flags of `node dist/model/scripted/cli.js` (one implementation, in
 * model/scripted/script-file.ts) and runs until Ctrl-C or SIGTERM.
 */
import { SCRIPTED_SERVER_FLAGS, startScriptedServerFromFlags, urlLine } from '../../model/scripted/script-file.js';
import { EXIT, type Command } from '../io.js';
import { parseCommandLine } from '../flags.js';
import { reportSetupError } from './run.js';

const usage = `rein scripted-server --script-module <file.mjs> [options]
rein scripted-server --script <turns.json> [options]

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
      --port <n>               the port to listen on (default 0: any free port)
      --host <address>         the address to listen on (default 127.0.0.1)
      --model <id>             the model id GET /v1/models lists (default scripted)
      --chunk-size <n>         characters of text per streamed delta (default 12)
      --token-delay-ms <n>     pause between streamed deltas (default 0)
  -h, --help                   this help

A turn takes text, thinking, toolCalls ([{"name", "arguments"}]), finishReason, usage,
fault and delayMs. Each request takes the next turn of a list; a list that has run out
answers HTTP 500.`;

export const command: Command = {
  description: "rein's scripted model server, to try rein offline",
  usage,
  async run(argv, io) {
    try {
      const parsed = parseCommandLine(argv, io, usage, SCRIPTED_SERVER_FLAGS, { positionals: false });
      if (!parsed) return EXIT.ok;
      const server = await startScriptedServerFromFlags(parsed.values);
      try {
        io.stdout.write(urlLine(server));
        io.stderr.write(
          `rein scripted-server: a scripted model at ${server.url} (no key, no network); Ctrl-C stops it.\n` +
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
      return EXIT.ok;
    } catch (error) {
      return reportSetupError(error, io, false);
    }
  },
};
