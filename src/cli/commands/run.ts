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
      const result = await runTask(new Agent({ ...options, ...(store ? { store } : {}) }), task, io, json);
      return exitCodeOf(result);
    } catch (error) {
      return reportSetupError(error, io, json);
    } finally {
      await store?.close();
    }
  },
};
