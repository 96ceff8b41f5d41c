// The stop rules asked after a tool batch are a list of named predicates, in DESIGN.md's
// order; each answers a stop reason or nothing.
import { describe, expect, it } from 'vitest';
import type { LoopDeps } from '../../src/loop/deps.js';
import { RepeatTracker, ToolErrorBreaker } from '../../src/loop/stop-rules.js';
import { STOP_RULES, doneSignal, everyToolTerminates, firstToolError, type TurnFacts } from '../../src/loop/turn-stops.js';
import type { DispatchOutcome } from '../../src/tools/types.js';

function outcome(name: string, extra: { isError?: boolean; terminate?: boolean } = {}): DispatchOutcome {
  return {
    result: {
      role: 'tool',
      toolCallId: `id-${name}`,
      toolName: name,
      content: [{ type: 'text', text: 'ok' }],
      isError: extra.isError === true,
    },
    terminate: extra.terminate === true,
    arguments: { n: 1 },
    durationMs: 0,
  };
}

function facts(outcomes: DispatchOutcome[]): TurnFacts {
  return {
    calls: outcomes.map((o) => ({
      type: 'tool_call' as const,
      id: o.result.toolCallId,
      name: o.result.toolName,
      arguments: {},
      rawArguments: '{}',
    })),
    outcomes,
    assistant: {
      role: 'assistant',
      content: [],
      stopReason: 'tool_use',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 },
      provider: 'p',
      model: 'm',
    },
    step: 1,
    messages: [],
    totals: {
      steps: 1,
      toolCalls: outcomes.length,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 },
      durationMs: 0,
    },
    repeats: new RepeatTracker(3),
    breaker: new ToolErrorBreaker(5),
  };
}

const deps = (over: Partial<LoopDeps> = {}) => ({ stopOnToolError: false, ...over }) as LoopDeps;

describe('the stop rules', () => {
  it('are asked in their order', () => {
    expect(STOP_RULES.map((rule) => rule.name)).toEqual([
      'doneSignal',
      'everyToolTerminates',
      'firstToolError',
      'toolErrorStreak',
      'noProgress',
    ]);
  });

  it('each answers a reason, or nothing', () => {
    expect(doneSignal(deps({ finalAnswerTool: 'final_answer' }), facts([outcome('final_answer')]))).toEqual({
      reason: 'done_signal',
      output: { n: 1 },
    });
    expect(doneSignal(deps({ finalAnswerTool: 'final_answer' }), facts([outcome('final_answer', { isError: true })]))).toBeUndefined();
    expect(everyToolTerminates(deps(), facts([outcome('a', { terminate: true }), outcome('b', { terminate: true })]))).toEqual({
      reason: 'terminate',
    });
    expect(everyToolTerminates(deps(), facts([outcome('a', { terminate: true }), outcome('b')]))).toBeUndefined();
    expect(firstToolError(deps({ stopOnToolError: true }), facts([outcome('a', { isError: true })]))).toEqual({ reason: 'tool_errors' });
    expect(firstToolError(deps(), facts([outcome('a', { isError: true })]))).toBeUndefined();
  });
});
