/**
 * Asking a person at the terminal whether a call may run: the call, what it would change
 * (a diff, from the tool's `preview`), and y / n / always-for-this-session. Used only when
 * a person is there to answer; otherwise a run pauses durably instead (`rein approve`).
 */
import type { ToolCall } from '../model/types.js';
import type { Tool } from '../tools/types.js';
import type { CliIO } from './io.js';
import { terminalLine } from './terminal-text.js';

/** How the prompt reads an answer and what "always" does. */
export interface ApprovalPromptOptions {
  io: CliIO;
  /**
   * Shows `text` and resolves with the line typed. Rejects when nobody will answer (the
   * input ended, Ctrl-C), with a message that says why; resolving '' means "no".
   */
  question: (text: string) => Promise<string>;
  /**
   * Called when the person answers "always": allow calls like this one for the rest of the
   * session. Returns the rule it added, which is shown.
   */
  always?: (call: ToolCall, tool: Tool) => string;
  /** Lines of a preview shown before it is shortened (default 60). */
  previewLines?: number;
}

/** A decision as `onConfirm` answers it. */
export type PromptDecision = { allow: boolean; reason?: string };

const MAX_TRIES = 3;

/**
 * An `onConfirm` hook that asks at the terminal. Calls are asked one at a time (the loop
 * asks in call order); an unreadable answer is asked again, and a question given up (the
 * input closed, Ctrl-C) denies.
 */
export function approvalPrompt(
  options: ApprovalPromptOptions,
): (call: ToolCall, args: Record<string, unknown>, tool: Tool) => Promise<PromptDecision> {
  const { io } = options;
  return async (call, args, tool) => {
    // The renderer reads the run's events a little behind the loop that calls this hook:
    // let it catch up first, or the spinner it stops on the assistant message would erase
    // the question's line at a terminal.
    await new Promise<void>((resolve) => setImmediate(resolve));
    io.stderr.write(`\n? ${terminalLine(call.name)} needs your approval\n${indent(terminalLine(formatArguments(args)))}\n`);
    const preview = await previewOf(tool, args);
    if (preview) io.stderr.write(`${indent(terminalLine(shortenLines(preview, options.previewLines ?? 60)))}\n`);
    const choices = options.always ? '[y]es, [n]o, [a]lways this session' : '[y]es, [n]o';
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      let answer: string;
      try {
        answer = (await options.question(`  allow? ${choices}: `)).trim().toLowerCase();
      } catch (error) {
        // The question was given up: the input ended, or Ctrl-C (which also stops the run).
        return { allow: false, reason: `no answer: ${error instanceof Error ? error.message : String(error)}` };
      }
      if (answer === 'y' || answer === 'yes') return { allow: true };
      if (answer === 'n' || answer === 'no' || answer === '') return { allow: false, reason: 'declined at the prompt' };
      if (options.always && (answer === 'a' || answer === 'always')) {
        const rule = options.always(call, tool);
        io.stderr.write(`  allowed for this session: ${rule}\n`);
        return { allow: true };
      }
      io.stderr.write(`  please answer ${choices}\n`);
    }
    return { allow: false, reason: 'no valid answer at the prompt' };
  };
}

async function previewOf(tool: Tool, args: Record<string, unknown>): Promise<string | undefined> {
  if (!tool.preview) return undefined;
  try {
    return await tool.preview(args);
  } catch (error) {
    // A preview that fails must not block the decision: the arguments are still shown.
    return `(no preview: ${error instanceof Error ? error.message : String(error)})`;
  }
}

function formatArguments(args: Record<string, unknown>): string {
  const lines = Object.entries(args).map(([key, value]) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return `${key}: ${text.length > 300 ? `${text.slice(0, 300)}… (${text.length} characters)` : text}`;
  });
  return lines.length > 0 ? lines.join('\n') : '(no arguments)';
}

function shortenLines(text: string, max: number): string {
  const lines = text.split('\n');
  if (lines.length <= max) return text;
  return [...lines.slice(0, max), `… ${lines.length - max} more lines`].join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
