/**
 * The task layer: a structured record the harness keeps of what the run is for and how far
 * it got — the goal, one mechanical sentence per completed step, and the plan the model set
 * with `update_plan`. It outlives compaction (the history loses old turns, the record does
 * not), feeds the summary request, stands in for the summary when the summary model fails,
 * and is shown to the model once the history no longer shows it all.
 *
 * The record is derived, never edited: from the messages of a history
 * ({@link TaskTracker}) or from a stored run's events ({@link taskFromEvents}); both use
 * {@link describeStep}, so a resumed run sees the same record.
 */
import type { RunEvent } from '../events.js';
import {
  toolResultText,
  type AssistantMessage,
  type Message,
  type ToolCall,
  type ToolResultMessage,
  type UserMessage,
} from '../model/types.js';
import { PLAN_TOOL_NAME } from './plan-tool.js';

/** What the run is for and how far it got. */
export interface TaskRecord {
  /** The run's input, as text. */
  goal: string;
  /** One sentence per completed tool step, oldest first. */
  completed: string[];
  /** The model's current plan, as last set with `update_plan`. */
  plan?: string[];
}

const ARGS_CHARS = 80;
const RESULT_CHARS = 100;
const WHY_CHARS = 120;

/** The text of a user message (text parts joined, images as `[image]`). */
export function userText(message: UserMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('');
}

/**
 * One sentence for a completed step: each call with its key arguments and what came back,
 * and the model's stated reason when it gave one.
 *
 * @example
 * describeStep(assistant, results); // 'read_file(path=src/a.ts) → 120 lines: "import …"'
 */
export function describeStep(assistant: AssistantMessage, results: readonly ToolResultMessage[]): string {
  const calls: string[] = [];
  for (const block of assistant.content) {
    if (block.type !== 'tool_call') continue;
    const result = results.find((r) => r.toolCallId === block.id);
    calls.push(`${block.name}(${briefArguments(block)}) → ${result ? briefResult(result) : 'no result'}`);
  }
  const why = firstSentence(assistant.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(' '));
  return why === '' ? calls.join('; ') : `${calls.join('; ')} (why: ${why})`;
}

function briefArguments(call: ToolCall): string {
  const entries = Object.entries(call.arguments);
  const text =
    entries.length === 0 && call.rawArguments.trim() !== '' && call.rawArguments.trim() !== '{}'
      ? call.rawArguments
      : entries.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ');
  return clip(text.replace(/\s+/g, ' '), ARGS_CHARS);
}

function briefResult(result: ToolResultMessage): string {
  const text = toolResultText(result.content).trim();
  if (result.isError) return `error: ${clip(firstLine(text), RESULT_CHARS)}`;
  if (text === '') return 'empty';
  const lines = text.split('\n').length;
  return lines > 1 ? `${lines} lines: "${clip(firstLine(text), RESULT_CHARS - 20)}"` : `"${clip(text, RESULT_CHARS)}"`;
}

function firstLine(text: string): string {
  const newline = text.indexOf('\n');
  return newline === -1 ? text : text.slice(0, newline);
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?](?:\s|$)/);
  return clip(end === -1 ? flat : flat.slice(0, end + 1), WHY_CHARS);
}

/** `text` cut to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** The plan an `update_plan` call sets, when its arguments hold one. */
function planOf(call: ToolCall): string[] | undefined {
  const steps = call.arguments.steps;
  return Array.isArray(steps) && steps.every((s) => typeof s === 'string') ? (steps as string[]) : undefined;
}

/** Applies one completed step (an assistant message with calls, and its results) to a record. */
function applyStep(record: TaskRecord, assistant: AssistantMessage, results: readonly ToolResultMessage[]): void {
  record.completed.push(describeStep(assistant, results));
  for (const block of assistant.content) {
    if (block.type !== 'tool_call' || block.name !== PLAN_TOOL_NAME) continue;
    const plan = planOf(block);
    const result = results.find((r) => r.toolCallId === block.id);
    if (plan && result && !result.isError) record.plan = plan;
  }
}

/**
 * Keeps a {@link TaskRecord} in step with a growing history, looking only at messages it
 * has not seen. A step counts once every call of it has its result; a batch still open at
 * the end is looked at again next time.
 */
export class TaskTracker {
  readonly record: TaskRecord;
  /** Index of the first history message not yet looked at. */
  scanned: number;

  constructor(goal: string, seed?: { record: TaskRecord; scanned: number }) {
    this.record = seed
      ? { goal: seed.record.goal, completed: [...seed.record.completed], ...(seed.record.plan ? { plan: [...seed.record.plan] } : {}) }
      : { goal, completed: [] };
    this.scanned = seed?.scanned ?? 0;
  }

  /** Records the steps completed in `history` since the last call. */
  sync(history: readonly Message[]): void {
    let i = Math.min(this.scanned, history.length);
    while (i < history.length) {
      const message = history[i] as Message;
      if (message.role !== 'assistant' || !message.content.some((b) => b.type === 'tool_call')) {
        i++;
        continue;
      }
      let end = i + 1;
      while (end < history.length && (history[end] as Message).role === 'tool') end++;
      const results = history.slice(i + 1, end) as ToolResultMessage[];
      const open = message.content.some((b) => b.type === 'tool_call' && !results.some((r) => r.toolCallId === b.id));
      // An open batch at the end is still running: look at it again next time.
      if (open && end === history.length) break;
      applyStep(this.record, message, results);
      i = end;
    }
    this.scanned = i;
  }
}

/**
 * The task record a stored run's events describe: the same record a live run keeps, so a
 * resumed run shows the model the same steps. A batch without every result is not a step.
 */
export function taskFromEvents(events: Iterable<RunEvent>): TaskRecord {
  const record: TaskRecord = { goal: '', completed: [] };
  let batch: { assistant: AssistantMessage; ids: Set<string>; results: ToolResultMessage[] } | undefined;
  for (const event of events) {
    if (event.type === 'run_started') record.goal = userText(event.input);
    else if (event.type === 'assistant_message') {
      const message = event.message;
      const complete = message.stopReason !== 'error' && message.stopReason !== 'aborted';
      const ids = new Set(message.content.flatMap((b) => (b.type === 'tool_call' ? [b.id] : [])));
      batch = complete && ids.size > 0 ? { assistant: message, ids, results: [] } : undefined;
    } else if (event.type === 'tool_finished' && batch?.ids.has(event.toolCallId)) {
      batch.results.push(event.result);
      if (batch.results.length === batch.ids.size) {
        applyStep(record, batch.assistant, batch.results);
        batch = undefined;
      }
    }
  }
  return record;
}

/** How much of the record {@link renderTask} shows. */
export interface RenderTaskOptions {
  /** Completed steps shown, newest last (default 10); older ones are counted, not listed. */
  maxSteps?: number;
  /** The goal is cut to this many characters (default 2,000). */
  maxGoalChars?: number;
}

/**
 * The task layer's text as the model reads it.
 *
 * @example
 * renderTask({ goal: 'Fix the build', completed: ['run_tests() → error: 2 failing'], plan: ['Fix a.ts', 'Re-run'] });
 */
export function renderTask(record: TaskRecord, options: RenderTaskOptions = {}): string {
  const maxSteps = options.maxSteps ?? 10;
  const lines = ['## Task (kept by the harness)', `Goal: ${clip(record.goal.trim(), options.maxGoalChars ?? 2_000)}`];
  if (record.plan && record.plan.length > 0) {
    lines.push('', 'Plan:');
    record.plan.forEach((step, i) => lines.push(`${i + 1}. ${step}`));
  }
  const total = record.completed.length;
  if (total > 0) {
    const shown = record.completed.slice(-maxSteps);
    const first = total - shown.length;
    lines.push('', first > 0 ? `Completed steps (${total}; the last ${shown.length} listed):` : `Completed steps (${total}):`);
    shown.forEach((step, i) => lines.push(`${first + i + 1}. ${step}`));
  }
  return lines.join('\n');
}
