// The side channel of tool calls: usage noted for a call is summed and taken once; events
// and a question are taken once; stored answers are handed out once each, by question.
import { describe, expect, it } from 'vitest';
import {
  addCallUsage,
  callWaits,
  dropCallAnswers,
  giveCallAnswers,
  noteCallEvent,
  pauseCallFor,
  takeCallAnswer,
  takeCallEvents,
  takeCallQuestion,
  takeCallUsage,
} from '../../src/tools/call-side-channel.js';

const usage = (input: number, output: number, cost?: number) => ({
  input,
  output,
  cacheRead: 0,
  cacheWrite: 0,
  reasoning: 0,
  total: input + output,
  ...(cost === undefined ? {} : { cost: { input: 0, output: cost, cacheRead: 0, cacheWrite: 0, total: cost } }),
});

describe('the side channel of tool calls', () => {
  it('sums the usage noted for a call (cost included when either has one) and hands it out once', () => {
    addCallUsage('run_a', 'c1', usage(10, 1));
    addCallUsage('run_a', 'c1', usage(20, 2, 0.5));
    addCallUsage('run_b', 'c1', usage(1, 1));
    expect(takeCallUsage('run_a', 'c1')).toMatchObject({ input: 30, output: 3, total: 33, cost: { output: 0.5, total: 0.5 } });
    expect(takeCallUsage('run_a', 'c1')).toBeUndefined();
    expect(takeCallUsage('run_b', 'c1')).toMatchObject({ total: 2 });
  });

  it('events noted for a call come out in order, once', () => {
    noteCallEvent('run_a', 'c2', { type: 'mcp_sampling', step: 0, toolCallId: 'c2', server: 's', decision: 'allow' });
    noteCallEvent('run_a', 'c2', { type: 'mcp_sampling', step: 0, toolCallId: 'c2', server: 's', decision: 'deny' });
    expect(takeCallEvents('run_a', 'c2').map((e) => (e as { decision: string }).decision)).toEqual(['allow', 'deny']);
    expect(takeCallEvents('run_a', 'c2')).toEqual([]);
  });

  it("a call's question is seen without taking it, then taken once", () => {
    pauseCallFor('run_a', 'c3', { server: 's', mode: 'form', message: 'Who?', requestHash: 'h1' });
    expect(callWaits('run_a', 'c3')).toBe(true);
    expect(callWaits('run_a', 'c4')).toBe(false);
    expect(takeCallQuestion('run_a', 'c3')).toMatchObject({ message: 'Who?' });
    expect(takeCallQuestion('run_a', 'c3')).toBeUndefined();
    expect(callWaits('run_a', 'c3')).toBe(false);
  });

  it('stored answers are handed out by question, each once, until dropped', () => {
    giveCallAnswers('run_a', 'c5', [
      { requestHash: 'h1', action: 'accept', content: { name: 'Ada' } },
      { requestHash: 'h2', action: 'decline' },
    ]);
    expect(takeCallAnswer('run_a', 'c5', 'h2')).toEqual({ requestHash: 'h2', action: 'decline' });
    expect(takeCallAnswer('run_a', 'c5', 'h2')).toBeUndefined();
    expect(takeCallAnswer('run_a', 'c5', 'h3')).toBeUndefined();
    dropCallAnswers('run_a', 'c5');
    expect(takeCallAnswer('run_a', 'c5', 'h1')).toBeUndefined();
  });
});
