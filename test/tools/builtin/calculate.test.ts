import { describe, expect, it } from 'vitest';
import { createCalculateTool, evaluate, formatNumber } from '../../../src/tools/builtin/calculate.js';
import { createDispatcher } from '../../../src/tools/dispatch.js';
import { ToolRegistry } from '../../../src/tools/registry.js';

describe('evaluate', () => {
  it.each([
    // precedence
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 - 4 - 3', 3],
    ['2 * 3 ^ 2', 18],
    ['7 % 4 + 1', 4],
    ['-7 % 4', -3],
    // associativity
    ['100 / 10 / 5', 2],
    ['2 ^ 3 ^ 2', 512],
    ['2 ** 3 ** 2', 512],
    // unary
    ['-2 ^ 2', -4],
    ['(-2) ^ 2', 4],
    ['2 ^ -1', 0.5],
    ['--3', 3],
    ['+-+3', -3],
    ['3 * -2', -6],
    ['-(1 + 2)', -3],
    // decimals and exponents
    ['.5 + 0.25', 0.75],
    ['1e3 + 2.5E-1', 1000.25],
    ['1.', 1],
    // whitespace and aliases
    ['  \t1+\n2  ', 3],
    ['6 × 7 ÷ 2 − 1', 20],
  ])('%s = %d', (expression, expected) => {
    expect(evaluate(expression)).toBe(expected);
  });

  it.each([
    ['1 / 0', 'division by zero at position 2'],
    ['5 % (2 - 2)', 'modulo by zero at position 2'],
    ['(1 + 2))', "unexpected ')' at position 7"],
    ['1 + 2 abc', "unexpected 'abc' at position 6: only numbers, + - * / % ^ and parentheses are supported"],
    ['1 2', 'unexpected number 2 at position 2'],
    ['1.2.3', 'unexpected number .3 at position 3'],
    ['(1 + 2', "expected ')' to close the '(' at position 0, got end of expression at position 6"],
    ['1 +', "unexpected end of expression at position 3: a number or '(' is missing"],
    ['* 2', "unexpected '*' at position 0"],
    ['()', "unexpected ')' at position 1"],
    ['', 'expression is empty'],
    ['   ', 'expression is empty'],
    ['2 = 2', "unexpected '=' at position 2: only numbers, + - * / % ^ and parentheses are supported"],
    ['1e', 'malformed number "1e…" at position 0'],
    ['(-8) ^ 0.5', 'the result is not a real number (e.g. a fractional power of a negative number)'],
    ['10 ^ 400', 'the result is too large to represent (or a division by zero inside a power)'],
    ['('.repeat(200) + '1' + ')'.repeat(200), 'expression is nested too deeply (more than 100 levels)'],
    ['1+'.repeat(600) + '1', 'expression is too long (1201 characters; at most 1000)'],
  ])('%s fails with "%s"', (expression, message) => {
    expect(() => evaluate(expression)).toThrow(expect.objectContaining({ code: 'invalid_arguments', message }));
  });
});

describe('formatNumber', () => {
  it.each([
    [0.1 + 0.2, '0.3'],
    [1 / 3, '0.333333333333333'],
    [2 ** 60, '1152921504606847000'],
    [123456789012, '123456789012'],
    [-0, '0'],
    [1e21, '1e+21'],
    [0.000001, '0.000001'],
  ])('%d → %s', (value, text) => {
    expect(formatNumber(value)).toBe(text);
  });
});

describe('calculate tool', () => {
  const dispatcher = createDispatcher(new ToolRegistry([createCalculateTool()]));
  const ctx = { signal: new AbortController().signal, runId: 'r', idempotencyKey: 'k' };

  it('returns the formatted result and keeps the number in details', async () => {
    const outcome = await dispatcher.dispatch(
      { type: 'tool_call', id: 'c', name: 'calculate', arguments: {}, rawArguments: '{"expression": "0.1 + 0.2"}' },
      ctx,
    );
    expect(outcome.result).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: '0.3' }],
      details: { expression: '0.1 + 0.2', result: 0.30000000000000004 },
    });
  });

  it('reports a bad expression as an error result naming the tool', async () => {
    const outcome = await dispatcher.dispatch(
      { type: 'tool_call', id: 'c', name: 'calculate', arguments: {}, rawArguments: '{"expression": "1/0"}' },
      ctx,
    );
    expect(outcome.result.isError).toBe(true);
    expect(outcome.result.content).toEqual([{ type: 'text', text: 'tool "calculate" failed: division by zero at position 1' }]);
  });

  it('is a read-only tool', () => {
    expect(createCalculateTool().risk).toBe('read');
  });
});
