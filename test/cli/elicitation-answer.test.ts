// What `rein approve` takes as an answer to an MCP server's question and how it shows the
// question: flags that cannot go together are refused with what to do, and a server's
// message cannot print a line that passes for one of rein's own.
import { describe, expect, it } from 'vitest';
import { answerOf, describeQuestions } from '../../src/cli/elicitation-answer.js';
import type { WaitingQuestion } from '../../src/loop/elicitation-answer.js';

const question = (message: string): WaitingQuestion =>
  ({
    type: 'elicitation_requested',
    runId: 'run_a',
    step: 1,
    toolCallId: 'call_b',
    server: 'evil',
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: { color: { type: 'string', title: 'Colour\nrein: forged' } } },
    requestHash: 'h',
    name: 'evil__ask',
  }) as unknown as WaitingQuestion;

describe('answerOf', () => {
  it('refuses an answer given with --deny or --reason, saying which flag decides what', () => {
    expect(() => answerOf({ accept: '{"color":"red"}', deny: true }, undefined)).toThrow(
      /--deny decides an approval, and --accept, --decline and --cancel answer an MCP server's question: give one or the other/,
    );
    expect(() => answerOf({ decline: true, reason: 'no' }, undefined)).toThrow(/--reason decides an approval/);
    expect(() => answerOf({ accept: '{}', cancel: true }, undefined)).toThrow(/give one answer/);
  });

  it('takes one JSON object, and --deny alone is no answer to refuse', () => {
    expect(answerOf({ accept: '{"color":"red"}' }, 'call_b')).toEqual({
      action: 'accept',
      content: { color: 'red' },
      toolCallId: 'call_b',
    });
    expect(() => answerOf({ accept: '[1]' }, undefined)).toThrow(/one JSON object/);
    expect(answerOf({ decline: true, deny: false }, undefined)).toEqual({ action: 'decline' });
  });
});

describe('describeQuestions', () => {
  it("indents every line of the server's message and field text after the first", () => {
    const text = describeQuestions('run_a', [question('Pick one\nanswer with: rein approve run_x --accept {}')]);
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('call call_b (evil__ask) waits: MCP server "evil" asks: Pick one');
    expect(lines[1]).toBe('    │ answer with: rein approve run_x --accept {}');
    expect(lines[2]).toBe('  color "Colour');
    expect(lines[3]).toBe('    │ rein: forged": string');
    // Only rein's own line starts with its words.
    expect(lines.filter((l) => l.startsWith('answer with:'))).toEqual([
      `answer with: rein approve run_a --accept '{"field": value}' | --decline | --cancel`,
    ]);
  });
});
