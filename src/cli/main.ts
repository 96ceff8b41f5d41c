/**
 * The `rein` command. The only module that touches `process.argv`, `process.exit` and the
 * real standard streams (STYLE 12); commands are plain data, loaded lazily.
 */
import type { CliIO, Command } from './io.js';
import { EXIT } from './io.js';
import { visibleControls } from './terminal-text.js';
import { urlPasswordRedacting } from './url-passwords.js';
import { packageVersion } from './version.js';

/**
 * The signals that stop a command as the first Ctrl-C does (its signal aborts: a run is
 * logged as aborted, its tools are stopped, it still prints its result), each with the
 * exit code of a command they stopped: 128 + the signal's number, as a shell reports a
 * process they killed. SIGTERM is how service managers, `timeout` and CI stop a process;
 * SIGHUP is a closed terminal or SSH session.
 */
const STOP_SIGNALS = { SIGINT: EXIT.aborted, SIGTERM: EXIT.terminated, SIGHUP: EXIT.hungUp } as const;
type StopSignal = keyof typeof STOP_SIGNALS;

/** Every command. */
const COMMANDS: Record<string, { description: string; load: () => Promise<{ command: Command }> }> = {
  run: { description: 'run one task and exit', load: () => import('./commands/run.js') },
  chat: { description: 'an interactive session (type while it works to steer)', load: () => import('./commands/chat.js') },
  demo: { description: 'two example tasks against a scripted offline model (no key needed)', load: () => import('./commands/demo.js') },
  models: { description: 'list known models: context, output limit, reasoning, prices', load: () => import('./commands/models.js') },
  runs: { description: 'list recent runs in the store', load: () => import('./commands/runs.js') },
  show: { description: 'show a stored run (--json: its events)', load: () => import('./commands/show.js') },
  replay: {
    description: 'render a stored run as it ran',
    load: () => import('./commands/show.js').then((m) => ({ command: m.replayCommand })),
  },
  resume: { description: 'continue a stored run from its log', load: () => import('./commands/resume.js') },
  approve: { description: 'approve or deny what a paused run waits for', load: () => import('./commands/approve.js') },
  trace: {
    description: 'a stored run as a tree of spans (--json: the spans; --export: to OTLP)',
    load: () => import('./commands/trace.js'),
  },
  mcp: { description: 'list MCP servers and their tools; call a tool without a model', load: () => import('./commands/mcp.js') },
  agents: { description: 'list the agents of .rein/agents/ (for --agent and rein serve)', load: () => import('./commands/agents.js') },
  serve: { description: 'agents over HTTP: runs, live event streams, approvals, a run viewer', load: () => import('./commands/serve.js') },
  submit: { description: 'queue a task for the workers (rein worker)', load: () => import('./commands/submit.js') },
  worker: { description: 'take queued runs from a Postgres store and drive them', load: () => import('./commands/worker.js') },
  workers: { description: 'list the live workers of a Postgres store', load: () => import('./commands/workers.js') },
  'scripted-server': {
    description: 'a scripted model server, to try rein offline (no key needed)',
    load: () => import('./commands/scripted-server.js'),
  },
};

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.description}`);
  return `rein — an agent harness

Usage: rein <command> [options]

Commands:
${lines.join('\n')}

Run \`rein <command> --help\` for a command's options.
Environment: OPENAI_API_KEY, OPENAI_BASE_URL, REIN_MODEL (provider/model), REIN_DATABASE_URL.
Telemetry: OTEL_EXPORTER_OTLP_ENDPOINT (and the other OTEL_* variables), TRACEPARENT,
REIN_LOG_FILE, REIN_LOG_LEVEL, REIN_ALERT_WEBHOOK, REIN_TRACE_PROPAGATION (docs/observability.md).
Other providers read their own (the README's provider table): ANTHROPIC_API_KEY,
GEMINI_API_KEY, OPENROUTER_API_KEY, VLLM_API_KEY; each its base URL from ANTHROPIC_BASE_URL,
GEMINI_BASE_URL, OPENROUTER_BASE_URL, OLLAMA_BASE_URL, VLLM_BASE_URL, LMSTUDIO_BASE_URL.
`;
}

/** Runs the CLI with `argv` (without node and script) and sets the exit code. */
export async function main(argv: string[]): Promise<void> {
  const controller = new AbortController();
  stopWhenOutputCloses(() => controller.abort('output closed'));
  // `rein chat` answers Ctrl-C itself while it listens (see CliIO.onInterrupt).
  const interruptListeners = new Set<() => void>();
  let stoppedBy: StopSignal | undefined;
  let ended = false;
  const onStopSignal = (signal: StopSignal): void => {
    if (signal === 'SIGINT' && interruptListeners.size > 0) {
      for (const listener of [...interruptListeners]) listener();
      return;
    }
    // The first signal aborts cleanly; a second one (a run slow to stop), or one after the
    // command has ended (something still holds the event loop), quits at once.
    if (stoppedBy !== undefined || ended) process.exit(ended ? Number(process.exitCode ?? 0) : STOP_SIGNALS[signal]);
    stoppedBy = signal;
    controller.abort(signal === 'SIGINT' ? 'interrupted' : `terminated (${signal})`);
  };
  const [name, ...rest] = argv;
  const io: CliIO = {
    // Under --json, stdout holds only JSON lines (the events, with the run's base URL).
    stdout: asksForJson(rest) ? urlPasswordRedacting(process.stdout) : process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    signal: controller.signal,
    onInterrupt: (listener) => {
      interruptListeners.add(listener);
      return () => interruptListeners.delete(listener);
    },
  };
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(help());
    process.exitCode = EXIT.ok;
    return;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${await packageVersion()}\n`);
    return;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    process.stderr.write(
      `rein: unknown command "${visibleControls(name)}". Commands: ${Object.keys(COMMANDS).join(', ')}. See rein --help.\n`,
    );
    process.exitCode = EXIT.usage;
    return;
  }
  for (const signal of Object.keys(STOP_SIGNALS) as StopSignal[]) process.on(signal, () => onStopSignal(signal));
  const { command } = await entry.load();
  const code = await command.run(rest, io);
  // Aborted by SIGTERM or SIGHUP: exit as a process that signal stopped (a command that
  // ends normally when stopped, such as scripted-server, keeps its own code).
  process.exitCode = code === EXIT.aborted && stoppedBy !== undefined ? STOP_SIGNALS[stoppedBy] : code;
  ended = true;
  // The command has ended; what still holds the event loop now is work nobody waits for: a
  // tool that ignored its deadline (a read blocked in a libuv thread, a library's stray
  // timer). It must not keep rein running. Unref'd: a clean exit does not wait for it.
  setTimeout(exitOnceFlushed, EXIT_GRACE_MS).unref();
}

/**
 * Exits, but not over output still queued for a slow reader (stdout and stderr on a pipe
 * are asynchronous on macOS, where `process.exit` would drop what is queued).
 */
function exitOnceFlushed(): void {
  if (process.stdout.writableLength > 0 || process.stderr.writableLength > 0) {
    setTimeout(exitOnceFlushed, 100).unref();
    return;
  }
  process.exit(process.exitCode);
}

/** How long rein waits, after its command ended, for the event loop to drain by itself. */
const EXIT_GRACE_MS = 2000;

/** True when the command line asks for JSON output: `--json` among its flags (before a `--`). */
function asksForJson(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/**
 * Stops quietly when whoever reads stdout or stderr goes away (`rein run … | head`): the
 * write error would otherwise crash the process with a stack trace. `abort` stops the run
 * (its tools and model requests too), which ends as any abort does (exit 130); Node drops
 * what is written to the closed stream after that.
 */
function stopWhenOutputCloses(abort: () => void): void {
  const streams = [process.stdout, process.stderr];
  for (const [i, stream] of streams.entries()) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      abort();
      // A reader that went away is expected; anything else is said where it can still be read.
      if (error.code !== 'EPIPE') streams[1 - i]?.write(`rein: cannot write to ${i === 0 ? 'stdout' : 'stderr'}: ${error.message}\n`);
    });
  }
}
