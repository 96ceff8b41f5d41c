import { describe, expect, it } from 'vitest';
import { repairArguments } from '../../src/tools/repair.js';

describe('repairArguments', () => {
  it('parses clean JSON without marking it repaired', () => {
    expect(repairArguments('{"a": 1, "b": [1, 2]}')).toEqual({ ok: true, value: { a: 1, b: [1, 2] }, repaired: false });
  });

  it.each([
    ['a json code fence', '```json\n{"a": 1}\n```'],
    ['a bare code fence', '```\n{"a": 1}\n```'],
    ['a fence after chatter', 'Here you go:\n```json\n{"a": 1}\n```'],
    ['text before and after the object', 'Sure! {"a": 1} Hope that helps.'],
    ['a trailing comma in an object', '{"a": 1,}'],
    ['a trailing comma before a newline', '{\n  "a": 1,\n}\n'],
    ['a double-encoded object', JSON.stringify('{"a": 1}')],
  ])('repairs %s', (_, text) => {
    expect(repairArguments(text)).toEqual({ ok: true, value: { a: 1 }, repaired: true });
  });

  it('removes trailing commas in nested arrays and objects but not inside strings', () => {
    const result = repairArguments('{"list": [1, 2,], "note": "a,}", "o": {"x": ",]",},}');
    expect(result).toEqual({ ok: true, value: { list: [1, 2], note: 'a,}', o: { x: ',]' } }, repaired: true });
  });

  it('treats empty or blank text as no arguments', () => {
    expect(repairArguments('')).toEqual({ ok: true, value: {}, repaired: false });
    expect(repairArguments('  \n')).toEqual({ ok: true, value: {}, repaired: false });
  });

  it('treats null as no arguments', () => {
    expect(repairArguments('null')).toEqual({ ok: true, value: {}, repaired: true });
  });

  it('reports invalid JSON with the parser message for the original text', () => {
    const result = repairArguments('{"a": 1 "b": 2}');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(/^arguments are not valid JSON: /);
      expect(result.error).toMatch(/position 8/);
    }
  });

  it('reports JSON cut off inside the object as such (a string, an object or an array still open)', () => {
    for (const text of ['{"a": "unfinished', '{"a": {"b": 1', '{"a": [1, 2', '{"a": "say \\"hi\\" and }', '{']) {
      const result = repairArguments(text);
      expect(result, text).toMatchObject({ ok: false, cutOff: true, error: expect.stringMatching(/^arguments are not valid JSON: they stop before the object is complete \(.+\), as when the answer is cut off by the output token limit$/) });
    }
    // Closed, or not an object at all: wrong, but not cut.
    for (const text of ['{"a": 1 "b": 2}', '{"a": 1}}x', 'not json {"a"']) expect(repairArguments(text), text).not.toHaveProperty('cutOff');
  });

  it.each([
    ['[1, 2]', 'an array'],
    ['"text"', 'a string'],
    ['42', 'a number'],
    ['true', 'a boolean'],
  ])('refuses the non-object %s', (text, kind) => {
    expect(repairArguments(text)).toEqual({ ok: false, error: `arguments must be a JSON object, got ${kind}` });
  });
});
