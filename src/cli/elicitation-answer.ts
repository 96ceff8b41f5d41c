/**
 * `rein approve` for a run whose tool call waits on an MCP server's question (an
 * elicitation asked with no terminal): the question shown as the server asked it — its
 * message, each field of the form with its type, allowed values, default and whether it is
 * required, or the URL to open — and the answer read from `--accept <json>`, `--decline` or
 * `--cancel`.
 */
import { ReinError } from '../errors.js';
import type { RunEvent } from '../events.js';
import { waitingQuestionsOf, type ElicitationAnswer, type WaitingQuestion } from '../loop/elicitation-answer.js';
import type { CliIO } from './io.js';
import { terminalLine } from './terminal-text.js';

/** The flags of an answer. */
export interface AnswerFlags {
  accept?: string | undefined;
  decline?: boolean | undefined;
  cancel?: boolean | undefined;
}

/** Whether any answer flag was given. */
export function answerGiven(flags: AnswerFlags): boolean {
  return flags.accept !== undefined || flags.decline === true || flags.cancel === true;
}

/**
 * The answer the flags give; a usage error for two at once, for an answer given with
 * `--deny` or `--reason` (which decide an approval, not a question), or JSON that is not
 * one object.
 */
export function answerOf(
  flags: AnswerFlags & { deny?: boolean | undefined; reason?: string | undefined },
  toolCallId: string | undefined,
): ElicitationAnswer {
  const given = [flags.accept !== undefined, flags.decline === true, flags.cancel === true].filter(Boolean).length;
  if (given > 1) throw new ReinError('config', 'fatal', 'give one answer: --accept <json>, --decline or --cancel');
  const approvalFlag = flags.deny === true ? '--deny' : flags.reason !== undefined ? '--reason' : undefined;
  if (given === 1 && approvalFlag !== undefined)
    throw new ReinError(
      'config',
      'fatal',
      `${approvalFlag} decides an approval, and --accept, --decline and --cancel answer an MCP server's question: give one or the other (rein approve <run> without them shows what the run waits on)`,
    );
  const call = toolCallId === undefined ? {} : { toolCallId };
  if (flags.decline) return { action: 'decline', ...call };
  if (flags.cancel) return { action: 'cancel', ...call };
  let content: unknown;
  try {
    content = JSON.parse(flags.accept ?? '{}');
  } catch (error) {
    throw new ReinError(
      'config',
      'fatal',
      `--accept takes the form's fields as one JSON object (${(error as Error).message}), e.g. --accept '{"name": "Ada"}'`,
    );
  }
  if (content === null || typeof content !== 'object' || Array.isArray(content))
    throw new ReinError('config', 'fatal', `--accept takes one JSON object of the form's fields, e.g. --accept '{"name": "Ada"}'`);
  return { action: 'accept', content: content as Record<string, unknown>, ...call };
}

/**
 * With no answer flag, the decision on a sampling request a call waits on (the one
 * question, or the one `--call` names): approved, or with `--deny` refused. `undefined`
 * when the question is an elicitation (it needs `--accept`, `--decline` or `--cancel`).
 */
export function samplingAnswerOf(
  questions: readonly WaitingQuestion[],
  flags: AnswerFlags & { deny?: boolean | undefined; call?: string | undefined },
): ElicitationAnswer | undefined {
  if (answerGiven(flags)) return undefined;
  const named = questions.filter((q) => flags.call === undefined || q.toolCallId === flags.call);
  const asked = named.length === 1 ? named[0] : undefined;
  if (asked?.mode !== 'sampling') return undefined;
  return { action: flags.deny ? 'decline' : 'accept', toolCallId: asked.toolCallId, ...(asked.runId ? { runId: asked.runId } : {}) };
}

/** `text` with every line after the first indented under it. */
function indentedLines(text: string): string {
  return text.replace(/\r?\n/g, '\n    │ ');
}

/** The questions a run waits on, as a person reads them, with how to answer. */
export function describeQuestions(runId: string, questions: readonly WaitingQuestion[]): string {
  const lines: string[] = [];
  for (const q of questions) {
    const of = q.runId === runId ? '' : ` of sub-agent run ${q.runId}`;
    // The server's message may span lines: the lines after the first are indented, so none
    // can pass for a line of rein's own (`rein: answer with: …`).
    lines.push(`call ${q.toolCallId} (${q.name})${of} waits: MCP server "${q.server}" asks: ${indentedLines(q.message)}`);
    if (q.mode === 'url') lines.push(`  open: ${q.url ?? ''}`);
    if (q.mode === 'sampling') lines.push(`  decide with: rein approve ${runId} --call ${q.toolCallId} [--deny]`);
    for (const [name, field] of Object.entries(q.requestedSchema?.properties ?? {})) {
      const required = q.requestedSchema?.required?.includes(name) === true;
      const kind = Array.isArray(field.enum) ? (field.enum as unknown[]).map(String).join(' | ') : String(field.type ?? 'any');
      const fallback = field.default === undefined ? '' : `, default ${JSON.stringify(field.default)}`;
      const title = typeof field.title === 'string' && field.title !== name ? ` "${field.title}"` : '';
      const about = typeof field.description === 'string' ? ` — ${field.description}` : '';
      lines.push(indentedLines(`  ${name}${title}: ${kind}${required ? ', required' : ''}${fallback}${about}`));
    }
  }
  const pin = questions.length > 1 ? ' --call <tool-call-id>' : '';
  const example = questions.find((q) => q.mode !== 'sampling')?.mode === 'url' ? `'{}' (once opened)` : `'{"field": value}'`;
  if (questions.some((q) => q.mode !== 'sampling'))
    lines.push(`answer with: rein approve ${runId}${pin} --accept ${example} | --decline | --cancel`);
  return `${lines.join('\n')}\n`;
}

/** The questions waiting in a log of a tree of runs (each run folded on its own: a sub-agent's call may be the one asked). */
export function questionsOfTree(events: readonly RunEvent[]): WaitingQuestion[] {
  return [...new Set(events.map((e) => e.runId))].flatMap((id) => waitingQuestionsOf(events.filter((e) => e.runId === id)));
}

/** Says, after a paused run, what its calls wait on: the servers' questions and how to answer them. */
export function announceQuestions(questions: readonly WaitingQuestion[], runId: string, io: CliIO): void {
  for (const line of describeQuestions(runId, questions).trimEnd().split('\n')) io.stderr.write(`rein: ${terminalLine(line)}\n`);
}
