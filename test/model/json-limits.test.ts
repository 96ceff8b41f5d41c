import { describe, expect, it } from 'vitest';
import {
  argumentLimitError,
  jsonTextDepth,
  jsonValueDepth,
  MAX_ARGUMENT_DEPTH,
  nestsDeeperThan,
  wireArguments,
} from '../../src/model/json-limits.js';
import { repairArguments } from '../../src/tools/repair.js';

describe('JSON depth, measured without recursion', () => {
  it('counts objects and arrays, not brackets inside strings or after an escaped quote', () => {
    expect(jsonTextDepth('{"a":[1,{"b":2}]}')).toBe(3);
    expect(jsonTextDepth('{"a":"[[[[\\"{{{"}')).toBe(1);
    expect(jsonTextDepth('42')).toBe(0);
    expect(jsonTextDepth('['.repeat(1_000_000), 10)).toBe(11);
  });

  it('says whether text nests past a limit, at the limit itself and with brackets in strings', () => {
    expect(nestsDeeperThan('['.repeat(4), 4)).toBe(false);
    expect(nestsDeeperThan('['.repeat(5), 4)).toBe(true);
    expect(nestsDeeperThan(`${'['.repeat(4)}1${']'.repeat(4)}`, 4)).toBe(false);
    expect(nestsDeeperThan(`{"a":"${'['.repeat(40)}"}`, 4)).toBe(false);
    expect(nestsDeeperThan(`${'{"a":'.repeat(5)}1${'}'.repeat(5)}`, 4)).toBe(true);
  });

  it('measures a parsed value a million levels deep', () => {
    const deep: unknown = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`);
    expect(jsonValueDepth(deep, 100)).toBe(101);
    expect(jsonValueDepth({ a: [1, { b: [] }] })).toBe(4);
  });
});

describe('argument limits', () => {
  it('refuses deep or long argument text with the limit named, before any parse', () => {
    expect(argumentLimitError(`{"a":${'['.repeat(MAX_ARGUMENT_DEPTH)}${']'.repeat(MAX_ARGUMENT_DEPTH)}}`)).toContain(
      'nested more than 64 levels deep',
    );
    expect(argumentLimitError(`{"a":${'['.repeat(MAX_ARGUMENT_DEPTH - 1)}${']'.repeat(MAX_ARGUMENT_DEPTH - 1)}}`)).toBeUndefined();
    expect(argumentLimitError(JSON.stringify({ s: 'x'.repeat(2_000_000) }))).toContain('the limit is 1,048,576');
    expect(repairArguments(`{"a":${'['.repeat(100_000)}`)).toMatchObject({ ok: false, error: expect.stringContaining('64 levels') });
  });

  it('sends back the model text of a parsed call, {} for one that was not a JSON object', () => {
    expect(wireArguments({ arguments: { a: 1 }, rawArguments: '{"a": 1}' })).toBe('{"a": 1}');
    expect(wireArguments({ arguments: {}, rawArguments: 'not json' })).toBe('{}');
    expect(wireArguments({ arguments: {}, rawArguments: '' })).toBe('{}');
    expect(wireArguments({ arguments: {}, rawArguments: '{ }' })).toBe('{ }');
    expect(wireArguments({ arguments: {}, rawArguments: '{"city":"Rome"}' })).toBe('{"city":"Rome"}');
    expect(wireArguments({ arguments: {}, rawArguments: '[1]' })).toBe('{}');
  });
});
