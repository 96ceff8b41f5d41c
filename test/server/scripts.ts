/** Scripted models for the server's tests: answers that depend on the conversation, so any number of runs can share one server. */
import type { ScriptFunction, ScriptTurn } from '../../src/testing/index.js';

/**
 * Each run calls `tool` with `args(i)` `calls` times (one call per turn), then answers
 * "done after N calls". `delayMs` holds each answer back (a run that takes a while).
 */
export function toolLoop(
  options: {
    tool?: string;
    calls?: number;
    args?: (i: number, task: string) => Record<string, unknown>;
    delayMs?: number;
    text?: string;
  } = {},
): ScriptFunction {
  const tool = options.tool ?? 'calculate';
  const calls = options.calls ?? 2;
  return (request) => {
    const firstUser = request.messages.find((m) => m.role === 'user');
    const task = firstUser?.content ?? '';
    const done = request.messages.filter((m) => m.role === 'tool').length;
    const delay = options.delayMs ? { delayMs: options.delayMs } : {};
    if (done >= calls) return { text: options.text ?? `done after ${done} calls`, ...delay } satisfies ScriptTurn;
    return { toolCalls: [{ name: tool, arguments: options.args?.(done, task) ?? { expression: `${done} + 1` } }], ...delay };
  };
}
