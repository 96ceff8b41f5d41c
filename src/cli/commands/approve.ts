/**
 * `rein approve <run>`: decides the approval a paused run waits for, from any process, and
 * continues the run (with the agent it was started with, as `rein resume` rebuilds it).
 */
import { ReinError } from '../../errors.js';
import { eventsOfTree } from '../../loop/tree-log.js';
import { checkedAnswer, waitingQuestionsInTree } from '../../loop/elicitation-answer.js';
import { answerGiven, answerOf, describeQuestions, samplingAnswerOf, type AnswerFlags } from '../elicitation-answer.js';
import type { RunRecord } from '../../store/types.js';
import { EXIT, type CliIO, type Command } from '../io.js';
import { findRun, openStoreFor } from './store-command.js';
import { parseCommandLine, runIdOf } from '../flags.js';
import { withStoredRun } from './resume.js';
import { childrenViewOf } from '../render.js';
import { childAgentNames, exitCodeOf, renderRun, reportSetupError } from './run.js';

/**
 * Refuses, as a usage error, a run that is not paused: it waits for no decision, and is
 * left as it is.
 */
export function checkPaused(record: RunRecord): void {
  if (record.status === 'paused') return;
  const resumable = record.status === 'failed' || record.status === 'aborted';
  throw new ReinError(
    'config',
    'fatal',
    `run ${record.id} is not waiting for approval (it is ${record.status}${record.reason ? `: ${record.reason}` : ''}): there is nothing to approve or deny` +
      `${resumable ? `; rein resume ${record.id} continues it` : ''}. rein approve decides for a paused run (rein runs --status paused lists them)`,
  );
}

const usage = `rein approve <run> [--deny] [--reason <text>] [--call <tool-call-id>] [--force] [--store <path|url>] [--base-url URL] [--header 'name: value'] [--children summary|full|none]
rein approve <run> --accept <json> | --decline | --cancel [--call <tool-call-id>] [...]

Approves (or with --deny, refuses) what a paused run waits for, then continues the run.
A run whose tool call waits on an MCP server's question (an elicitation asked with no
terminal) is answered instead: without an answer the question is shown; --accept gives
the form's fields as one JSON object (checked against the form, defaults filled in; '{}'
for a URL once opened), --decline and --cancel refuse. The call is then made again and the
server, asking again, gets the answer.
A run of the queue (rein submit) is put back in the queue with the decision instead, in
one transaction, and a worker continues it; stdout then says {"runId","queued":true,"decided"}
({"runId","queued":true,"answered"} for an answer to an MCP server's question).
--call pins the decision to one waiting call (rein show <run> --json lists them); a
decision that matches no waiting call is refused. A refused call becomes an error result
the model sees.`;

/**
 * A paused run of the queue (rein submit) is not continued here: the decision and the run's
 * new job are stored in one transaction, and a worker continues it. `undefined` for any
 * other run (continued here, as before).
 */
async function approveIfQueued(
  runId: string,
  values: { store?: string | undefined; deny?: boolean | undefined; reason?: string | undefined; call?: string | undefined } & AnswerFlags,
  io: CliIO,
): Promise<number | undefined> {
  const store = await openStoreFor(values.store, io);
  try {
    if (!store.queue) return undefined;
    const record = await findRun(store, runId);
    const { approveQueued, isQueuedRun } = await import('../../worker/approve-queued.js');
    if (!isQueuedRun(record)) return undefined;
    checkPaused(record);
    const { waitingQuestionsOf } = await import('../../loop/elicitation-answer.js');
    const questions = waitingQuestionsOf(await store.loadEvents(runId));
    if (questions.length > 0 || answerGiven(values)) {
      if (questions.length === 0)
        throw new ReinError('config', 'fatal', `run ${runId} waits on no MCP server's question: approve or deny it without an answer`);
      const sampling = samplingAnswerOf(questions, values);
      if (!sampling && !answerGiven(values)) {
        io.stderr.write(describeQuestions(runId, questions));
        return EXIT.usage;
      }
      const { answerQueued } = await import('../../worker/approve-queued.js');
      const answered = await answerQueued(store, runId, sampling ?? answerOf(values, values.call));
      io.stderr.write(
        `rein: answered ${answered}; run ${runId} is back in the queue: a worker makes the call again (rein show ${runId} follows it)\n`,
      );
      io.stdout.write(`${JSON.stringify({ runId, queued: true, answered })}\n`);
      return EXIT.ok;
    }
    const decided = await approveQueued(store, runId, {
      approved: !values.deny,
      ...(values.reason === undefined ? {} : { reason: values.reason }),
      ...(values.call === undefined ? {} : { toolCallId: values.call }),
    });
    io.stderr.write(
      `rein: ${values.deny ? 'denied' : 'approved'} ${decided.join(', ')}; run ${runId} is back in the queue: a worker continues it (rein show ${runId} follows it)\n`,
    );
    io.stdout.write(`${JSON.stringify({ runId, queued: true, decided })}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

export const command: Command = {
  description: 'approve or deny what a paused run waits for, and continue it',
  usage,
  async run(argv, io) {
    try {
      const parsed = parseCommandLine(argv, io, usage, {
        deny: { type: 'boolean' },
        reason: { type: 'string' },
        call: { type: 'string' },
        force: { type: 'boolean' },
        store: { type: 'string' },
        'base-url': { type: 'string' },
        header: { type: 'string', multiple: true },
        accept: { type: 'string' },
        decline: { type: 'boolean' },
        cancel: { type: 'boolean' },
        children: { type: 'string' },
      });
      if (!parsed) return EXIT.ok;
      const { values, positionals } = parsed;
      const children = childrenViewOf(values.children);
      const runId = runIdOf(positionals, 'approve', 'rein runs --status paused lists them');
      // Flags that cannot go together are refused before any store is opened or run looked at.
      if (answerGiven(values)) answerOf(values, values.call);
      const queued = await approveIfQueued(runId, values, io);
      if (queued !== undefined) return queued;
      return await withStoredRun(
        runId,
        { store: values.store, baseUrl: values['base-url'], headers: values.header, check: checkPaused },
        io,
        async (agent, store) => {
          // Read before the tree continues: a child continued here is named by its agent.
          const childNames = await childAgentNames(store, runId);
          const questions = await waitingQuestionsInTree(store, runId);
          if (questions.length > 0 || answerGiven(values)) {
            if (questions.length === 0)
              throw new ReinError(
                'config',
                'fatal',
                `run ${runId} waits on no MCP server's question: approve or deny it without an answer`,
              );
            // A sampling request the policy asked about is approved (or, with --deny, refused) like a call.
            const sampling = samplingAnswerOf(questions, values);
            if (!sampling && !answerGiven(values)) {
              io.stderr.write(describeQuestions(runId, questions));
              return EXIT.usage;
            }
            const answer = sampling ?? answerOf(values, values.call);
            // A form that does not fit is a usage error here, and the run stays paused as it was.
            const asked = questions.find((q) => answer.toolCallId === undefined || q.toolCallId === answer.toolCallId);
            if (asked && (questions.length === 1 || answer.toolCallId !== undefined)) await checkedAnswer(asked, answer);
            const answered = agent.answerElicitation(runId, {
              ...answer,
              ...(asked && asked.runId !== runId ? { runId: asked.runId } : {}),
              signal: io.signal,
              ...(values.force ? { force: true } : {}),
            });
            return exitCodeOf(
              await renderRun(answered, io, false, { provider: agent.model.provider, children, childNames }, () =>
                eventsOfTree(store, runId),
              ),
            );
          }
          const handle = agent.approve(runId, {
            approved: !values.deny,
            signal: io.signal,
            ...(values.reason === undefined ? {} : { reason: values.reason }),
            ...(values.call === undefined ? {} : { toolCallId: values.call }),
            ...(values.force ? { force: true } : {}),
          });
          return exitCodeOf(
            await renderRun(handle, io, false, { provider: agent.model.provider, children, childNames }, () => eventsOfTree(store, runId)),
          );
        },
      );
    } catch (error) {
      return reportSetupError(error, io, false);
    }
  },
};
