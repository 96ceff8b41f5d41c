import { describe, expect, it } from 'vitest';
import { repairArguments } from '../../src/tools/repair.js';

describe('repairArguments', () => {
  it('parses clean JSON without marking it repaired', () => {
    expect(repairArguments('{"a": 1, "b": [1, 2]}')).toEqual({ ok: true, value: { a: 1, b: [1, 2] }, repaired: false });
  });

  it.each([
    ['a json code fence', '```json\n{"a": 1}\n```', ['code fence'], '{"a": 1}'],
    ['a bare code fence', '```\n{"a": 1}\n```', ['code fence'], '{"a": 1}'],
    ['a fence after chatter', 'Here you go:\n```json\n{"a": 1}\n```', ['code fence'], '{"a": 1}'],
    ['text before and after the object', 'Sure! {"a": 1} Hope that helps.', ['text around the object'], '{"a": 1}'],
    ['a trailing comma in an object', '{"a": 1,}', ['trailing commas'], '{"a": 1}'],
    ['a trailing comma before a newline', '{\n  "a": 1,\n}\n', ['trailing commas'], '{\n  "a": 1\n}'],
    ['a double-encoded object', JSON.stringify('{"a": 1}'), ['double-encoded'], '{"a": 1}'],
  ])('repairs %s', (_, text, repairs, repairedText) => {
    expect(repairArguments(text)).toEqual({ ok: true, value: { a: 1 }, repaired: true, repairs, text: repairedText });
  });

  describe('the last step (jsonrepair), for what weaker models write instead of JSON', () => {
    it.each([
      ['single quotes', "{'path': 'a.txt', 'mode': 'r'}", { path: 'a.txt', mode: 'r' }, ['single quotes']],
      ['unquoted keys', '{path: "a.txt", limit: 3}', { path: 'a.txt', limit: 3 }, ['unquoted keys']],
      [
        'Python literals',
        '{"recursive": True, "filter": None, "dry": False}',
        { recursive: true, filter: null, dry: false },
        ['Python literals'],
      ],
      ['a line comment', '{\n  "a": 1, // the count\n  "b": 2\n}', { a: 1, b: 2 }, ['comments']],
      ['a block comment', '{"a": /* the count */ 1}', { a: 1 }, ['comments']],
      ['missing commas between members', '{"a": 1\n"b": "two"}', { a: 1, b: 'two' }, ['missing commas']],
      ['missing commas in an array', '{"list": [1 2 3]}', { list: [1, 2, 3] }, ['missing commas']],
      [
        'a Python dict',
        "{'query': 'rein', 'exact': True, 'since': None}",
        { query: 'rein', exact: true, since: null },
        ['single quotes', 'Python literals'],
      ],
    ])('repairs %s and names what it fixed', (_, text, value, repairs) => {
      const result = repairArguments(text);
      expect(result).toMatchObject({ ok: true, value, repaired: true, repairs });
      if (result.ok && result.repaired) expect(JSON.parse(result.text)).toEqual(value);
    });

    it('runs after the earlier repairs, and lists both', () => {
      const result = repairArguments("Calling it now:\n```json\n{'a': 1, b: [True,],}\n```");
      expect(result).toMatchObject({
        ok: true,
        value: { a: 1, b: [true] },
        repairs: ['code fence', 'trailing commas', 'single quotes', 'unquoted keys', 'Python literals'],
      });
    });

    it('keeps quotes, comment markers and Python words inside strings as they are', () => {
      const result = repairArguments('{note: "it\'s True // not a comment", "n": None}');
      expect(result).toMatchObject({
        ok: true,
        value: { note: "it's True // not a comment", n: null },
        repairs: ['unquoted keys', 'Python literals'],
      });
    });

    it('never completes text cut off inside the object: that stays the cut-off error', () => {
      for (const text of ["{'a': 'unfinished", '{a: [1, 2', '```json\n{"a": {"b": True']) {
        expect(repairArguments(text), text).toMatchObject({ ok: false, cutOff: true });
      }
    });

    it('refuses what it cannot turn into an object, with the parser message for the original text', () => {
      for (const text of ['{"a": 1 +}', 'not json {"a"', '{a}', 'just some words']) {
        const result = repairArguments(text);
        expect(result, text).toMatchObject({ ok: false, error: expect.stringMatching(/^arguments are not valid JSON: /) });
      }
    });
  });

  it('removes trailing commas in nested arrays and objects but not inside strings', () => {
    const result = repairArguments('{"list": [1, 2,], "note": "a,}", "o": {"x": ",]",},}');
    expect(result).toMatchObject({
      ok: true,
      value: { list: [1, 2], note: 'a,}', o: { x: ',]' } },
      repaired: true,
      repairs: ['trailing commas'],
    });
  });

  it('treats empty or blank text as no arguments', () => {
    expect(repairArguments('')).toEqual({ ok: true, value: {}, repaired: false });
    expect(repairArguments('  \n')).toEqual({ ok: true, value: {}, repaired: false });
  });

  it('treats null as no arguments', () => {
    expect(repairArguments('null')).toEqual({ ok: true, value: {}, repaired: true, repairs: ['null for no arguments'], text: '{}' });
  });

  it('reports invalid JSON with the parser message for the original text', () => {
    const result = repairArguments('{"a": 1 +}');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(/^arguments are not valid JSON: /);
      expect(result.error).toMatch(/position 8/);
    }
  });

  it('reports JSON cut off inside the object as such (a string, an object or an array still open)', () => {
    for (const text of ['{"a": "unfinished', '{"a": {"b": 1', '{"a": [1, 2', '{"a": "say \\"hi\\" and }', '{']) {
      const result = repairArguments(text);
      expect(result, text).toMatchObject({
        ok: false,
        cutOff: true,
        error: expect.stringMatching(
          /^arguments are not valid JSON: they stop before the object is complete \(.+\), as when the answer is cut off by the output token limit$/,
        ),
      });
    }
    // Closed, or not an object at all: wrong, but not cut.
    for (const text of ['{"a": 1 +}', '{a}', 'not json {"a"']) expect(repairArguments(text), text).not.toHaveProperty('cutOff');
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
