/** `rein run "<task>"`: one task, streamed, ending with a summary line and an exit code. */
import type { RunEvent, RunResult } from '../../events.js';
import { ReinError, toReinError, type ErrorInfo } from '../../errors.js';
import type { Agent } from '../../loop/agent.js';
import type { RunHandle } from '../../loop/handle.js';
import type { WaitingQuestion } from '../../loop/elicitation-answer.js';
import { SUCCESS_REASONS } from '../../loop/options.js';
import { EXIT, type CliIO, type Command } from '../io.js';
import { HumanRenderer, childrenViewOf, describeError, type RenderOptions } from '../render.js';
import { AGENT_FLAGS, agentFlagsHelp, storeFromFlags } from '../agent-flags.js';
import { DEFAULT_AGENT, resolveNamedAgent } from '../named-agent.js';
import { openCliAgent } from '../cli-agent.js';
import { parseCommandLine } from '../flags.js';
import type { RunStore } from '../../store/types.js';
import { runsOfTree } from '../../loop/tree-approval.js';
import type { Workbench } from '../workbench.js';
import { userInput } from '../session-input.js';
import { createInterface } from 'node:readline';
import { addAbortSignal, type Readable } from 'node:stream';
import { terminalLine } from '../terminal-text.js';
import { emptyUsage } from '../../model/types.js';

const usage = `rein run [options] "<task>"
       rein run [options] - < task.md      (or with no task, from a pipe)

Runs one task and exits. The answer streams to stdout (with --no-stream, each answer
once it is final, leaving out what a retried attempt streamed). Tool calls, retries,
notes and the summary line go to stderr. With --json, stdout carries one JSON event per
line.
The task "-", or no task when stdin is not a terminal, is read from stdin.

${agentFlagsHelp('run')}`;

/** The exit code of a finished run (see README: exit codes). */
export function exitCodeOf(result: RunResult): number {
  if (SUCCESS_REASONS.has(result.reason)) return EXIT.ok;
  if (result.status === 'aborted') return EXIT.aborted;
  if (result.status === 'paused') return EXIT.paused;
  // A resume or approval refused before anything ran (the agent changed): a usage error (docs/cli.md).
  if (result.status === 'failed' && result.error?.code === 'conflict') return EXIT.usage;
  if (result.status === 'failed') return EXIT.failed;
  return EXIT.stopped;
}

/**
 * The agents of a stored tree's sub-agent runs, by run id: what a resume or an approval
 * names a child by when it continues it (the child's `run_started` was in an earlier process).
 */
export async function childAgentNames(store: RunStore, rootRunId: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const { record, depth } of await runsOfTree(store, rootRunId)) {
    if (depth === 0 || record.eventCount === 0) continue;
    const first = (await store.loadEvents(record.id, 0))[0];
    if (first?.type === 'run_started' && first.agent) names.set(record.id, first.agent);
  }
  return names;
}

/** Runs one task on `agent`, rendering as asked; shared by `run` and `demo`. */
export function runTask(agent: Agent, task: string, io: CliIO, json: boolean, render: RenderOptions = {}): Promise<RunResult> {
  return renderRun(agent.run(task, { signal: io.signal }), io, json, render);
}

/**
 * Streams a run's events as JSON lines or for people, then its summary; returns its result.
 * `storedEvents` reads the whole log of a resumed run: a run that pauses again then names
 * every call still waiting for approval, including those asked before this process.
 */
export async function renderRun(
  handle: RunHandle,
  io: CliIO,
  json: boolean,
  render: RenderOptions = {},
  storedEvents?: () => Promise<readonly RunEvent[]>,
): Promise<RunResult> {
  if (json) {
    for await (const event of handle) io.stdout.write(`${JSON.stringify(event)}\n`);
    return handle;
  }
  const renderer = new HumanRenderer(io, render);
  let waiting = new WaitingCalls();
  // What tells which MCP server's questions (elicitations with no terminal to ask at) calls wait on.
  const questions: RunEvent[] = [];
  try {
    for await (const event of handle) {
      renderer.onEvent(event);
      waiting.onEvent(event);
      if (event.type === 'elicitation_requested' || event.type === 'elicitation_answered' || event.type === 'tool_started')
        questions.push(event);
    }
  } finally {
    renderer.close();
  }
  const result = await handle;
  renderer.summary(result);
  // A person deciding with `rein approve` should see what they decide on, not only a run id.
  if (result.status === 'paused') {
    const stored = storedEvents ? await storedEvents() : undefined;
    if (stored) waiting = WaitingCalls.of(stored);
    // A call waiting on a server's question is answered, not approved: show the question.
    const { announceQuestions, questionsOfTree } = await import('../elicitation-answer.js');
    const asked = stored ? questionsOfTree(stored) : questionsIn(questions);
    if (asked.length > 0) announceQuestions(asked, result.runId, io);
    else announceWaiting(waiting, result.runId, io);
  }
  return result;
}

/** The questions this process saw asked and not answered (each call's last), with the call's tool. */
function questionsIn(events: readonly RunEvent[]): WaitingQuestion[] {
  const names = new Map<string, string>();
  const open = new Map<string, WaitingQuestion>();
  for (const event of events) {
    if (event.type === 'tool_started') names.set(event.toolCallId, event.name);
    else if (event.type === 'elicitation_requested') open.set(event.toolCallId, { ...event, name: names.get(event.toolCallId) ?? '' });
    else if (event.type === 'elicitation_answered') open.delete(event.toolCallId);
  }
  return [...open.values()];
}

/**
 * Says what a paused run waits for (each call, its arguments and the rule that asked) and
 * how to decide it: after `rein run`, `resume` or `approve` pauses, and in `rein show`.
 */
export function announceWaiting(waiting: WaitingCalls, runId: string, io: CliIO): void {
  for (const line of waiting.lines()) io.stderr.write(`rein: waiting for approval: ${terminalLine(line)}\n`);
  io.stderr.write(`rein: the run waits for approval: rein approve ${runId} (or --deny)\n`);
}

/** The calls of a run that asked for approval and are not decided yet, with the rule that asked. */
export class WaitingCalls {
  /** The calls still waiting at the end of a run's log. */
  static of(events: readonly RunEvent[]): WaitingCalls {
    const waiting = new WaitingCalls();
    for (const event of events) waiting.onEvent(event);
    return waiting;
  }

  private readonly rules = new Map<string, string>();
  private readonly calls = new Map<string, string>();

  onEvent(event: RunEvent): void {
    if (event.type === 'permission_decided' && event.rule) this.rules.set(event.toolCallId, event.rule);
    else if (event.type === 'approval_requested') {
      const args = JSON.stringify(event.arguments);
      this.calls.set(event.toolCallId, `${event.name} ${args.length > 200 ? `${args.slice(0, 200)}…` : args}`);
    } else if (event.type === 'approval_decided') this.calls.delete(event.toolCallId);
  }

  lines(): string[] {
    return [...this.calls].map(([id, call]) => {
      const rule = this.rules.get(id);
      return `${call}${rule ? ` (${rule})` : ''} [${id}]`;
    });
  }
}

/**
 * Asks one question at the terminal. Ctrl-C there reaches readline, not the process (the
 * terminal is in raw mode): it rejects with "interrupted" and calls `onInterrupt`, so the
 * run stops as a Ctrl-C anywhere else stops it.
 */
export function askLine(io: CliIO, question: string, onInterrupt?: () => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
    let settled = false;
    rl.question(question, (answer) => {
      settled = true;
      rl.close();
      resolve(answer);
    });
    rl.on('SIGINT', () => {
      settled = true;
      rl.close();
      io.stderr.write('\n');
      onInterrupt?.();
      reject(new Error('interrupted'));
    });
    rl.once('close', () => {
      if (!settled) resolve('');
    });
  });
}

/**
 * The `run_finished` line of a run that never started (a bad flag, a missing key, Ctrl-C
 * while the task was read): a whole event of its type, so a consumer reading
 * `event.result.error` needs no special case. There is no run: `runId` and `traceId` are
 * empty, `seq` 0, nothing was spent.
 */
function runNotStarted(status: 'failed' | 'aborted', reason: 'fatal_error' | 'aborted', error: ErrorInfo): RunEvent {
  const result = {
    runId: '',
    traceId: '',
    status,
    reason,
    text: '',
    totals: { steps: 0, toolCalls: 0, usage: emptyUsage(), durationMs: 0 },
    error,
  };
  return { type: 'run_finished', runId: '', seq: 0, at: Date.now(), status, reason, result };
}

/** Reports an error that happened before a run could start, in the chosen output mode. */
export function reportSetupError(error: unknown, io: CliIO, json: boolean): number {
  const info = toReinError(error).toJSON();
  if (json) {
    io.stdout.write(`${JSON.stringify(runNotStarted('failed', 'fatal_error', info))}\n`);
  }
  io.stderr.write(`rein: ${describeError(info)}\n`);
  // A configuration problem (bad flag, missing key, unknown provider) is a usage error, and
  // so is a run that cannot be continued as asked (changed agent, finished run): docs/cli.md.
  return info.code === 'config' || info.code === 'conflict' ? EXIT.usage : EXIT.failed;
}

export const command: Command = {
  description: 'run one task and exit',
  usage,
  async run(argv, io) {
    let json = argv.includes('--json');
    let store: RunStore | undefined;
    let bench: Workbench | undefined;
    try {
      const parsed = parseCommandLine(argv, io, usage, AGENT_FLAGS);
      if (!parsed) return EXIT.ok;
      const { values, positionals } = parsed;
      json = Boolean(values.json);
      const children = childrenViewOf(values.children);
      const given = positionals.join(' ').trim();
      // `-`, or no task at all with stdin piped: the task is what stdin holds (`rein run < task.md`).
      // A task given as "" is an empty task, not a request to read stdin.
      const fromStdin = given === '-' || (positionals.length === 0 && !io.stdin.isTTY);
      let task = given;
      if (fromStdin) {
        try {
          task = (await readAll(io.stdin, io.signal)).trim();
        } catch (error) {
          if (!io.signal.aborted) throw error;
          return reportInterrupted(io, json);
        }
      }
      if (!task) throw new ReinError('config', 'fatal', noTaskMessage(fromStdin, positionals.length > 0));
      const named = await resolveNamedAgent(values.agent ?? DEFAULT_AGENT, values, io.env, io);
      store = await storeFromFlags(values, io);
      // A person can answer approval questions only at a terminal, and not under --json;
      // otherwise a call that needs approval pauses the run (rein approve continues it).
      // (A task read from the terminal up to Ctrl-D has ended stdin: no questions either.)
      const interactive = !json && !fromStdin && Boolean(io.stdin.isTTY) && Boolean(io.stderr.isTTY);
      // Ctrl-C at an approval question stops the run too (see askLine).
      const interrupted = new AbortController();
      const signal = AbortSignal.any([io.signal, interrupted.signal]);
      const question = (q: string): Promise<string> => askLine(io, q, () => interrupted.abort('interrupted'));
      const session = await openCliAgent(named.values, named.options, io, {
        store,
        people: interactive ? { question } : {},
        metadata: { ...named.metadata },
      });
      bench = session.bench;
      const agent = session.agent;
      // A `/skill:name` naming no loaded skill would reach the model as plain text: refused, saying what exists.
      const { parseSkillCommands } = await import('../../skills/commands.js');
      const unknownSkills = parseSkillCommands(task, bench.skills).unknown;
      if (unknownSkills.length > 0)
        throw new ReinError(
          'config',
          'fatal',
          `${unknownSkills.map((u) => u.message).join('; ')}: fix the name, or load the skill (.rein/skills/<name>/SKILL.md)`,
        );
      const input = await userInput(task, bench.mcp, io, { signal });
      const handle = agent.run(input, { signal, ...session.runOptions });
      // Updates of subscribed resources whose server entry says `updatesToModel` reach the model.
      const { steerResourceUpdates } = await import('../../project/resource-updates.js');
      const stopUpdates = bench.mcp ? steerResourceUpdates(bench.mcp, handle) : undefined;
      try {
        return exitCodeOf(await renderRun(handle, io, json, { stream: !values['no-stream'], children }));
      } finally {
        stopUpdates?.();
      }
    } catch (error) {
      return reportSetupError(error, io, json);
    } finally {
      await bench?.close();
      await store?.close();
    }
  },
};

/** Why there is no task to run. */
function noTaskMessage(fromStdin: boolean, given: boolean): string {
  if (fromStdin) return 'no task given: stdin was empty (see --help)';
  if (given) return 'the task is empty: rein run "<task>" (see --help)';
  return 'no task given: rein run "<task>" (see --help)';
}

/**
 * Ctrl-C while the task was being read from stdin: nothing ran. Under --json stdout still
 * ends with a `run_finished` line, as after any other run that could not start.
 */
function reportInterrupted(io: CliIO, json: boolean): number {
  const error = new ReinError('aborted', 'fatal', 'interrupted while reading the task from stdin');
  if (json) io.stdout.write(`${JSON.stringify(runNotStarted('aborted', 'aborted', error.toJSON()))}\n`);
  io.stderr.write(`rein: ${error.message}\n`);
  return EXIT.aborted;
}

/** Everything `input` holds, until its end; rejects when `signal` aborts first (Ctrl-C). */
async function readAll(input: Readable, signal: AbortSignal): Promise<string> {
  let text = '';
  input.setEncoding('utf8');
  for await (const chunk of addAbortSignal(signal, input)) text += chunk as string;
  return text;
}
