/** `rein run "<task>"`: one task, streamed, ending with a summary line and an exit code. */
import type { RunResult } from '../../events.js';
import { ReinError, toReinError } from '../../errors.js';
import { Agent } from '../../loop/agent.js';
import type { RunHandle } from '../../loop/handle.js';
import { SUCCESS_REASONS } from '../../loop/options.js';
import { EXIT, type CliIO, type Command } from '../io.js';
import { HumanRenderer, describeError, type RenderOptions } from '../render.js';
import { AGENT_FLAGS_HELP, agentOptionsFromFlags, parseAgentArgs, storeFromFlags } from '../agent-flags.js';
import type { RunStore } from '../../store/types.js';
import { openWorkbench, type Workbench } from '../workbench.js';
import { userInput } from '../session-input.js';
import { cliMetadata } from './resume.js';
import { createInterface } from 'node:readline';

const usage = `rein run [options] "<task>"

Runs one task and exits. The answer streams to stdout; tool calls, retries and the
summary line go to stderr. With --json, stdout carries one JSON event per line.

${AGENT_FLAGS_HELP}`;

/** The exit code of a finished run (see README: exit codes). */
export function exitCodeOf(result: RunResult): number {
  if (SUCCESS_REASONS.has(result.reason)) return EXIT.ok;
  if (result.status === 'aborted') return EXIT.aborted;
  if (result.status === 'paused') return EXIT.paused;
  if (result.status === 'failed') return EXIT.failed;
  return EXIT.stopped;
}

/** Runs one task on `agent`, rendering as asked; shared by `run` and `demo`. */
export function runTask(agent: Agent, task: string, io: CliIO, json: boolean, render: RenderOptions = {}): Promise<RunResult> {
  return renderRun(agent.run(task, { signal: io.signal }), io, json, render);
}

/** Streams a run's events as JSON lines or for people, then its summary; returns its result. */
export async function renderRun(handle: RunHandle, io: CliIO, json: boolean, render: RenderOptions = {}): Promise<RunResult> {
  if (json) {
    for await (const event of handle) io.stdout.write(`${JSON.stringify(event)}\n`);
    return handle;
  }
  const renderer = new HumanRenderer(io, render);
  try {
    for await (const event of handle) renderer.onEvent(event);
  } finally {
    renderer.close();
  }
  const result = await handle;
  renderer.summary(result);
  return result;
}

/** Prints what the workbench found wrong while loading, and the yolo banner. */
export function announce(bench: Workbench, io: CliIO): void {
  for (const notice of bench.notices) io.stderr.write(`rein: ${notice}\n`);
  if (bench.policy.isYolo) io.stderr.write(`rein: ⚠ ${bench.policy.describe()}\n`);
}

/** Asks one question at the terminal. */
export function askLine(io: CliIO, question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
    let answered = false;
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
    rl.once('close', () => {
      if (!answered) resolve('');
    });
  });
}

/** Reports an error that happened before a run could start, in the chosen output mode. */
export function reportSetupError(error: unknown, io: CliIO, json: boolean): number {
  const info = toReinError(error).toJSON();
  if (json) {
    io.stdout.write(`${JSON.stringify({ type: 'run_finished', status: 'failed', reason: 'fatal_error', error: info })}\n`);
  }
  io.stderr.write(`rein: ${describeError(info)}\n`);
  // A configuration problem (bad flag, missing key, unknown provider) is a usage error.
  return info.code === 'config' ? EXIT.usage : EXIT.failed;
}

export const command: Command = {
  description: 'run one task and exit',
  usage,
  async run(argv, io) {
    let json = argv.includes('--json');
    let store: RunStore | undefined;
    let bench: Workbench | undefined;
    try {
      const { values, positionals } = parseAgentArgs(argv);
      json = Boolean(values.json);
      if (values.help) {
        io.stdout.write(`${usage}\n`);
        return EXIT.ok;
      }
      const task = positionals.join(' ').trim();
      if (!task) throw new ReinError('config', 'fatal', 'no task given: rein run "<task>" (see --help)');
      const options = agentOptionsFromFlags(values, io.env);
      store = await storeFromFlags(values, io);
      // A person can answer approval questions only at a terminal, and not under --json;
      // otherwise a call that needs approval pauses the run (rein approve continues it).
      const interactive = !json && Boolean(io.stdin.isTTY) && Boolean(io.stderr.isTTY);
      bench = await openWorkbench(values, io, options.tools ?? [], interactive ? { question: (q) => askLine(io, q) } : {});
      announce(bench, io);
      const agent = new Agent({ ...options, ...bench.options, ...(store ? { store } : {}), metadata: { ...cliMetadata(values, bench.root) } });
      const input = await userInput(task, bench.mcp, io, { signal: io.signal });
      const result = await renderRun(agent.run(input, { signal: io.signal }), io, json);
      if (result.status === 'paused' && !json) io.stderr.write(`rein: the run waits for approval: rein approve ${result.runId} (or --deny)\n`);
      return exitCodeOf(result);
    } catch (error) {
      return reportSetupError(error, io, json);
    } finally {
      await bench?.close();
      await store?.close();
    }
  },
};
