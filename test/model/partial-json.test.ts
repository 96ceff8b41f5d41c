import { describe, expect, it } from 'vitest';
import { PartialJsonParser } from '../../src/model/partial-json.js';

function parseInPieces(pieces: string[], readEachTime = false): PartialJsonParser {
  const parser = new PartialJsonParser();
  for (const piece of pieces) {
    parser.push(piece);
    if (readEachTime) void parser.value;
  }
  return parser;
}

function valueAfter(text: string): unknown {
  return parseInPieces([text]).value;
}

/** A small deterministic PRNG so random splits are reproducible. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

// Real argument strings from the recordings in ../shared/fixtures, plus hand-made ones that
// exercise every escape, unicode (incl. surrogate pairs), nesting and number shapes.
const SAMPLES = [
  '{"title":"THE NAME OF THE WIND","author":{"first_name":"Patrick","last_name":"Rothfuss"},"rating":7}',
  '{"password": "mellon"}',
  '{"answers":[{"label":"Capital","answer":"The capital of Mexico is Mexico City."},{"label":"Weather","answer":"The weather in Mexico City is currently sunny."},{"label":"Product Name","answer":"The product name is Pydantic AI."}]}',
  '{"location": "San Francisco"}',
  '{"command": "ls"}',
  '{"city":"Paris","country":"France"}',
  '{}',
  '[]',
  ' { "a" : [ 1 , -2.5e+3 , 0 , 0.125 , 1E-2 , true , false , null ] , "b" : { } , "c" : [ [ ] , [ { } ] ] } ',
  '{"path":"C:\\\\Users\\\\me\\\\file.txt","text":"line1\\nline2\\t\\"quoted\\" \\/ \\b\\f\\r"}',
  '{"emoji":"\\ud83d\\ude00 and é \\u00e9 \\u4e2d","raw":"😀 中文"}',
  '{"deep":{"deeper":{"deepest":[[["x"]]]}},"n":-0,"big":12345678901234567890}',
  '{"__proto__":{"polluted":true},"constructor":1}',
  '"just a string"',
  '[1,"two",{"three":3}]',
];

describe('PartialJsonParser', () => {
  it('gives JSON.parse’s value for every sample, fed whole', () => {
    for (const sample of SAMPLES) {
      const parser = parseInPieces([sample]);
      expect(parser.failed, sample).toBe(false);
      expect(parser.done, sample).toBe(true);
      expect(parser.value, sample).toEqual(JSON.parse(sample));
    }
  });

  it('gives the same value when split at every position', () => {
    for (const sample of SAMPLES) {
      for (let cut = 0; cut <= sample.length; cut++) {
        const parser = parseInPieces([sample.slice(0, cut), sample.slice(cut)], true);
        expect(parser.value, `${sample} cut at ${cut}`).toEqual(JSON.parse(sample));
      }
    }
  });

  it('gives the same value fed one character at a time, and in random pieces', () => {
    const random = prng(42);
    for (const sample of SAMPLES) {
      expect(parseInPieces([...sample], true).value).toEqual(JSON.parse(sample));
      for (let round = 0; round < 20; round++) {
        const pieces: string[] = [];
        let at = 0;
        while (at < sample.length) {
          const size = 1 + Math.floor(random() * 7);
          pieces.push(sample.slice(at, at + size));
          at += size;
        }
        expect(parseInPieces(pieces, round % 2 === 0).value).toEqual(JSON.parse(sample));
      }
    }
  });

  it('shows completed members, string prefixes, and leaves out unfinished numbers and literals', () => {
    expect(valueAfter('')).toBeUndefined();
    expect(valueAfter('{')).toEqual({});
    expect(valueAfter('{"pa')).toEqual({});
    expect(valueAfter('{"path"')).toEqual({});
    expect(valueAfter('{"path": ')).toEqual({});
    expect(valueAfter('{"path": "src/ma')).toEqual({ path: 'src/ma' });
    expect(valueAfter('{"path": "src/main.ts", "line": 4')).toEqual({ path: 'src/main.ts' });
    expect(valueAfter('{"path": "src/main.ts", "line": 42,')).toEqual({ path: 'src/main.ts', line: 42 });
    expect(valueAfter('{"ok": tr')).toEqual({});
    expect(valueAfter('{"ok": true')).toEqual({ ok: true });
    expect(valueAfter('{"a": [1, 2')).toEqual({ a: [1] });
    expect(valueAfter('{"a": [1, 2, "x')).toEqual({ a: [1, 2, 'x'] });
    expect(valueAfter('{"a": {"b": [{"c": "d')).toEqual({ a: { b: [{ c: 'd' }] } });
    expect(valueAfter('"hel')).toBe('hel');
  });

  it('decodes escapes split across pushes, including \\uXXXX and surrogate pairs', () => {
    const parser = new PartialJsonParser();
    for (const piece of ['{"s": "a\\', 'n', 'b\\u00', 'e9', ' \\ud83d', '\\ude', '00', '"}']) parser.push(piece);
    expect(parser.value).toEqual({ s: 'a\nbé 😀' });
    expect(parser.done).toBe(true);
  });

  it('never changes a value it already handed out', () => {
    const parser = new PartialJsonParser();
    parser.push('{"a": {"b": [1, "x');
    const first = parser.value;
    const frozen = structuredClone(first);
    parser.push('yz", 2], "c": "d"}, "e": 3}');
    expect(first).toEqual(frozen);
    expect(parser.value).toEqual({ a: { b: [1, 'xyz', 2], c: 'd' }, e: 3 });
  });

  it('completes a number at the root only at end()', () => {
    const parser = parseInPieces(['4', '2']);
    expect(parser.value).toBeUndefined();
    parser.end();
    expect(parser.value).toBe(42);
    expect(parser.done).toBe(true);
  });

  it('end() on incomplete input marks it failed but keeps the partial value', () => {
    const parser = parseInPieces(['{"a": 1, "b": "x']);
    parser.end();
    expect(parser.failed).toBe(true);
    expect(parser.value).toEqual({ a: 1, b: 'x' });
  });

  it('makes "__proto__" an own property, as JSON.parse does', () => {
    const value = valueAfter('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('fails without throwing on invalid JSON, exactly where JSON.parse fails', () => {
    const invalid = [
      '{"a" 1}',
      '{,}',
      '[1,]',
      '{"a":1,}',
      '{} x',
      '01',
      '[01]',
      '-',
      '1.',
      '1e',
      '.5',
      '+1',
      '{"a":tru}',
      '{"a":nul',
      '[}',
      '{]',
      '{"a\n":1}',
      '"\\x"',
      '"\\u12G4"',
      '{a:1}',
      "{'a':1}",
      '[1 2]',
      '{"a":1 "b":2}',
      'undefined',
      '--1',
    ];
    for (const text of invalid) {
      expect(() => JSON.parse(text), text).toThrow();
      const parser = new PartialJsonParser();
      expect(() => {
        for (const ch of text) parser.push(ch);
        parser.end();
      }, text).not.toThrow();
      expect(parser.failed, text).toBe(true);
    }
  });

  it('stops updating after a failure', () => {
    const parser = parseInPieces(['{"a": 1, "b" 2', ', "c": 3}']);
    expect(parser.failed).toBe(true);
    expect(parser.value).toEqual({ a: 1 });
  });

  it('stays linear on a long string streamed one character at a time, read after every push', () => {
    // A quadratic parser would need ~10^10 steps here and hit the test timeout.
    const long = 'x'.repeat(200_000);
    const parser = new PartialJsonParser();
    parser.push('{"path": "a.txt", "content": "');
    for (let i = 0; i < long.length; i++) {
      parser.push(long[i] as string);
      void parser.value;
    }
    parser.push('"}');
    expect((parser.value as { content: string }).content.length).toBe(200_000);
    expect(parser.done).toBe(true);
  });
});
