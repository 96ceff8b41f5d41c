/**
 * `rein show <id>` and `rein replay <id>`: a stored run rendered from its log as `rein run`
 * showed it live (the answer on stdout; tool calls with their durations, retries and the
 * summary line on stderr), or its events as JSON lines.
 */
import type { RunEvent, RunResult } from '../../events.js';
import { messagesFromEvents } from '../../loop/fold.js';
import { EXIT, type CliIO, type Command } from '../io.js';
import { parseCommandLine, runIdOf } from '../flags.js';
import { HumanRenderer, childrenViewOf, formatMs, type ChildrenView } from '../render.js';
import { announceWaiting, reportSetupError, WaitingCalls } from './run.js';
import { announceQuestions, questionsOfTree } from '../elicitation-answer.js';
import { findRun, openStoreFor } from './store-command.js';
import { eventsOfTree } from '../../loop/tree-log.js';
import type { RunStore } from '../../store/types.js';

/**
 * Renders stored events the way the live run looked: for a run that ended paused, with the
 * calls it waits for and the `rein approve` that decides them.
 */
export function renderLog(events: readonly RunEvent[], io: CliIO, children: ChildrenView = 'full'): void {
  const renderer = new HumanRenderer(io, { children });
  let finished: Extract<RunEvent, { type: 'run_finished' }> | undefined;
  for (const event of events) {
    renderer.onEvent(event);
    if (event.type === 'run_finished' && !event.depth) finished = event;
  }
  renderer.close();
  if (!finished) return;
  renderer.summary({ ...finished.result, messages: messagesFromEvents(events.filter((e) => !e.depth)) } as RunResult);
  // The last end of the log is where the run stands (a resumed run has one per process).
  if (finished.status !== 'paused') return;
  // A call waiting on an MCP server's question is answered, not approved.
  const asked = questionsOfTree(events);
  if (asked.length > 0) announceQuestions(asked, finished.runId, io);
  else announceWaiting(WaitingCalls.of(events), finished.runId, io);
}

/** The live worker that holds `runId` (a Postgres store's fleet), if one does. */
async function holderOf(store: RunStore, runId: string): Promise<string | undefined> {
  const { FleetView } = await import('../../worker/fleet-view.js');
  const fleet = await FleetView.of(store);
  if (!fleet) return undefined;
  try {
    return (await fleet.holders([runId])).get(runId);
  } finally {
    await fleet.close();
  }
}

function makeCommand(name: 'show' | 'replay'): Command {
  const usage =
    name === 'show'
      ? `rein show <run> [--json] [--children full|summary|none] [--store <path|url>]\n\nShows a stored run: its record, then its log as \`rein run\` showed it; --json prints its events, one per line.\nThe events of its sub-agents' runs follow, indented (with their depth under --json); --children summary folds each to one line.`
      : `rein replay <run> [--children summary|full|none] [--store <path|url>]\n\nRenders a stored run from its log exactly as \`rein run\` showed it live: each sub-agent's run one line (--children full: every event, indented).`;
  return {
    description: name === 'show' ? 'show a stored run' : 'render a stored run as it ran',
    usage,
    async run(argv, io) {
      try {
        const parsed = parseCommandLine(argv, io, usage, {
          json: { type: 'boolean' },
          store: { type: 'string' },
          children: { type: 'string' },
        });
        if (!parsed) return EXIT.ok;
        const { values, positionals } = parsed;
        const runId = runIdOf(positionals, name);
        const store = await openStoreFor(values.store, io);
        try {
          const run = await findRun(store, runId);
          // A run with sub-agents is shown with theirs, indented (issue 23).
          const events = await eventsOfTree(store, runId);
          if (values.json && name === 'show') {
            for (const event of events) io.stdout.write(`${JSON.stringify(event)}\n`);
            return EXIT.ok;
          }
          if (name === 'show') {
            const worker = run.status === 'running' && store.queue ? await holderOf(store, run.id) : undefined;
            const held = worker ? ` · held by worker ${worker}` : '';
            io.stderr.write(
              `run ${run.id} · ${run.status}${run.reason ? ` (${run.reason})` : ''} · ${run.model} · ${events.length} events · started ${formatMs(Date.now() - run.createdAt)} ago${held}\n`,
            );
          }
          renderLog(events, io, childrenViewOf(values.children, name === 'show' ? 'full' : 'summary'));
        } finally {
          await store.close();
        }
        return EXIT.ok;
      } catch (error) {
        return reportSetupError(error, io, false);
      }
    },
  };
}

export const command = makeCommand('show');
export const replayCommand = makeCommand('replay');
