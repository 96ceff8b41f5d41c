/**
 * Writing the summary that replaces compacted turns: the request to the summary model, a
 * hard cap on what comes back, and a mechanical summary from the task record for when the
 * summary model fails (a compaction never fails a run on its own).
 */
import { errorFromMessage, ReinError, toReinError } from '../errors.js';
import {
  toolResultText,
  type AssistantMessage,
  type Context,
  type Message,
  type ModelRef,
  type StreamFunction,
  type StreamOptions,
  type UserMessage,
} from '../model/types.js';
import { clip, userText } from './task.js';
import type { TokenCounter } from './tokens.js';

/** Default cap of a summary, in tokens. */
export const DEFAULT_SUMMARY_MAX_TOKENS = 500;

/** The first line of every summary request's system prompt: how a model (or a replay) can tell one. */
export const SUMMARY_SYSTEM_MARKER = 'You write the compaction summary of an agent run.';

const SUMMARY_SYSTEM = `${SUMMARY_SYSTEM_MARKER}
The agent's context window is full, so its earlier turns are being replaced by your summary. The agent will read only your summary and the most recent turns, so keep everything it needs to continue and nothing else.
Write plain text, no preamble, no closing remarks.`;

/** How a summary message begins: the model sees what it is, and rein recognizes its own. */
export const SUMMARY_HEADER =
  '[Summary of earlier turns of this run, written when its context was compacted. The complete history is in the run log.]';

/**
 * Whether a request is one of rein's summary requests (for a replay model or a scripted
 * test that must answer it differently from an agent turn).
 */
export function isSummaryRequest(context: Pick<Context, 'system'>): boolean {
  return context.system?.startsWith(SUMMARY_SYSTEM_MARKER) === true;
}

/** Whether `message` is a summary rein inserted. */
export function isSummaryMessage(message: Message | undefined): boolean {
  return message?.role === 'user' && typeof message.content === 'string' && message.content.startsWith(SUMMARY_HEADER);
}

/** The user message that stands in for the compacted turns. */
export function summaryMessage(summary: string): UserMessage {
  return { role: 'user', content: `${SUMMARY_HEADER}\n\n${summary.trim()}` };
}

/** What {@link buildSummaryRequest} needs. */
export interface SummaryInput {
  /** The messages being replaced (a previous summary first, when there was one). */
  removed: readonly Message[];
  goal: string;
  /** The mechanical record of the steps in `removed`, one sentence each. */
  steps: readonly string[];
  /** Cap of the summary in tokens. */
  maxTokens: number;
  /** Tokens the prompt may take (the summary model's window less its answer). */
  budget: number;
  /** Tokens of a text, as the summary model would count them (roughly). */
  count: (text: string) => number;
}

/**
 * The request that asks for a summary of `removed`: per completed step what was called,
 * what came back and why, then files touched, decisions and what is still open. The
 * removed turns are rendered as a transcript (not replayed as messages), so any model can
 * summarize any history without tool declarations. Within `budget`, the instructions come
 * first, then the step record (newest steps when it must be cut), then the transcript
 * (shortened part by part, then oldest messages left out).
 */
export function buildSummaryRequest(input: SummaryInput): Context {
  const head = [
    `Summarize the part of the run below in at most ${input.maxTokens} tokens.`,
    '',
    'Keep:',
    '- for each completed step: what was called (tool and key arguments), what came back (the essential result: values, errors) and why it was done;',
    '- the files touched (read, written, created, deleted) with paths;',
    '- decisions made and their reasons, and what the user asked for or corrected;',
    '- what is still open or was about to be done.',
    'If the transcript starts with an earlier summary, fold it in: your summary replaces it.',
    '',
    `Goal of the run: ${clip(input.goal, 2_000)}`,
    '',
    "Steps (the harness's mechanical record of this part):",
  ].join('\n');
  let left = input.budget - input.count(head) - 20;
  const steps = newestThatFit(
    input.steps.map((s, i) => `${i + 1}. ${s}`),
    Math.max(left * 0.25, 0),
    input.count,
  );
  left -= input.count(steps);
  const prompt = [head, steps, '', '<transcript>', renderTranscript(input.removed, Math.max(left, 200), input.count), '</transcript>'].join(
    '\n',
  );
  return { system: SUMMARY_SYSTEM, messages: [{ role: 'user', content: prompt }] };
}

/** The newest lines that fit `budget` tokens, with a note of how many older ones were left out. */
function newestThatFit(lines: readonly string[], budget: number, count: (text: string) => number): string {
  if (lines.length === 0) return '(no tool steps in this part)';
  const kept: string[] = [];
  let used = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const cost = count(lines[i] as string) + 1;
    if (used + cost > budget && kept.length > 0) break;
    kept.unshift(lines[i] as string);
    used += cost;
  }
  const dropped = lines.length - kept.length;
  return dropped > 0 ? [`(${dropped} earlier steps left out for space)`, ...kept].join('\n') : kept.join('\n');
}

/**
 * The removed turns as text within `budget` tokens. Long parts are cut (halving the
 * allowance per part); if that is not enough, the oldest messages are left out (an
 * earlier summary is kept).
 */
export function renderTranscript(messages: readonly Message[], budget: number, count: (text: string) => number): string {
  // Parts are counted one by one (a newline between them costs about a token), so leaving
  // messages out does not recount the whole transcript.
  const render = (perPart: number) => messages.map((m) => renderMessage(m, perPart));
  const total = (costs: readonly number[]) => costs.reduce((sum, c) => sum + c + 1, 0);
  let perPart = 4_000;
  let parts = render(perPart);
  let costs = parts.map(count);
  while (total(costs) > budget && perPart > 100) {
    perPart = Math.floor(perPart / 2);
    parts = render(perPart);
    costs = parts.map(count);
  }
  if (total(costs) <= budget) return parts.join('\n');
  const keepFirst = isSummaryMessage(messages[0]) ? 1 : 0;
  const marker = (n: number) => `[${n} older messages left out to fit the summary model; the step record above covers them]`;
  let used = total(costs) + count(marker(messages.length)) + 1;
  let dropped = 0;
  while (used > budget && parts.length - dropped > keepFirst + 1) {
    used -= (costs[keepFirst + dropped] as number) + 1;
    dropped++;
  }
  if (dropped === 0) return parts.join('\n');
  return [...parts.slice(0, keepFirst), marker(dropped), ...parts.slice(keepFirst + dropped)].join('\n');
}

function renderMessage(message: Message, perPart: number): string {
  if (message.role === 'user') {
    if (isSummaryMessage(message)) return `[earlier summary]\n${userText(message).slice(SUMMARY_HEADER.length).trim()}`;
    return `[user]\n${clip(userText(message), perPart)}`;
  }
  if (message.role === 'tool') {
    const text = toolResultText(message.content);
    return `[result of ${message.toolName} ${message.toolCallId}${message.isError ? ', error' : ''}]\n${clip(text, perPart)}`;
  }
  const lines: string[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && block.text.trim() !== '') lines.push(`[assistant]\n${clip(block.text, perPart)}`);
    else if (block.type === 'tool_call')
      lines.push(`[call ${block.name} ${block.id}] ${clip(block.rawArguments, Math.max(200, perPart / 4))}`);
  }
  return lines.join('\n');
}

/** What the summary model produced: its text (capped) and its response, or why it failed. */
export type SummaryOutcome =
  | { ok: true; text: string; response: AssistantMessage }
  | { ok: false; error: ReinError; response?: AssistantMessage };

/**
 * Asks `model` for the summary through `stream` and caps the answer at `maxTokens`. Never
 * throws: a failed call, an empty answer or an abort come back as `{ ok: false }`.
 */
export async function requestSummary(
  stream: StreamFunction,
  model: ModelRef,
  request: Context,
  options: { maxTokens: number; counter: TokenCounter; streamOptions: StreamOptions },
): Promise<SummaryOutcome> {
  let response: AssistantMessage;
  try {
    const answer = stream(model, request, options.streamOptions);
    if (answer.listen) response = await answer.listen(() => {});
    else {
      for await (const _event of answer) {
        // Only the final message matters; deltas are not part of the run's answer.
      }
      response = await answer.result();
    }
  } catch (error) {
    return { ok: false, error: toReinError(error) };
  }
  if (response.stopReason === 'error' || response.stopReason === 'aborted') {
    return { ok: false, error: errorFromMessage(response), response };
  }
  const text = response.content
    .flatMap((b) => (b.type === 'text' ? [b.text] : []))
    .join('')
    .trim();
  if (text === '')
    return { ok: false, error: new ReinError('invalid_response', 'fatal', 'the summary model answered with no text'), response };
  return { ok: true, text: capTokens(text, options.maxTokens, options.counter), response };
}

/**
 * `text` cut to at most `maxTokens` (as `counter` counts, calibrated), at a line or word
 * boundary, with a marker saying it was cut. Models do not always keep to a length.
 */
export function capTokens(text: string, maxTokens: number, counter: TokenCounter): string {
  const marker = '\n[summary cut to its size limit]';
  if (counter.calibrated(counter.text(text)) <= maxTokens) return text;
  const budget = maxTokens - counter.calibrated(counter.text(marker));
  let cut = text;
  // Proportional cuts converge in a few rounds; each round shrinks the text.
  for (let round = 0; round < 8 && counter.calibrated(counter.text(cut)) > budget; round++) {
    const tokens = counter.calibrated(counter.text(cut));
    const chars = Math.max(0, Math.floor((cut.length * budget) / tokens) - 1);
    cut = cut.slice(0, chars);
    const boundary = Math.max(cut.lastIndexOf('\n'), cut.lastIndexOf(' '));
    if (boundary > chars * 0.8) cut = cut.slice(0, boundary);
  }
  return `${cut.trimEnd()}${marker}`;
}

/**
 * The summary rein writes itself when the summary model fails: the earlier summary (cut to
 * half the cap) and the mechanical record of the steps, the newest kept when they do not
 * all fit.
 */
export function mechanicalSummary(input: {
  previous?: string;
  steps: readonly string[];
  maxTokens: number;
  counter: TokenCounter;
  reason: string;
}): string {
  const { counter, maxTokens } = input;
  const head = `(Written by rein from its record of the steps: the summary model failed, ${clip(input.reason, 120)}.)`;
  const parts = [head];
  if (input.previous) parts.push(capTokens(input.previous, Math.floor(maxTokens / 2), counter));
  let used = counter.calibrated(counter.text(parts.join('\n\n')));
  const kept: string[] = [];
  for (let i = input.steps.length - 1; i >= 0; i--) {
    const line = `- ${input.steps[i] as string}`;
    const cost = counter.calibrated(counter.text(line)) + 1;
    if (used + cost > maxTokens - 8) break;
    kept.unshift(line);
    used += cost;
  }
  const dropped = input.steps.length - kept.length;
  if (kept.length > 0 || dropped > 0)
    parts.push(
      [`Steps completed in the replaced turns${dropped > 0 ? ` (the first ${dropped} left out for space)` : ''}:`, ...kept].join('\n'),
    );
  return parts.join('\n\n');
}
