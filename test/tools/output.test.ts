import { describe, expect, it } from 'vitest';
import { normalizeOutput, safeJson } from '../../src/tools/output.js';

const textOf = (output: unknown): string =>
  normalizeOutput(output)
    .content.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`))
    .join('|');

function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = { a: 1 };
  value.self = value;
  return value;
}

describe('normalizeOutput', () => {
  it('keeps a string as one text part, with no details', () => {
    expect(normalizeOutput('hi')).toEqual({ content: [{ type: 'text', text: 'hi' }], isError: false, terminate: false });
  });

  it('shows data as JSON and keeps it as details', () => {
    expect(normalizeOutput({ x: 1 })).toEqual({
      content: [{ type: 'text', text: '{"x":1}' }],
      isError: false,
      details: { x: 1 },
      terminate: false,
    });
    expect(textOf(42)).toBe('42');
    expect(textOf(undefined)).toBe('(no output)');
  });

  it('shows circular references as "[Circular]", and a shared object as itself', () => {
    const shared = { k: 1 };
    expect(textOf(circular())).toBe('{"a":1,"self":"[Circular]"}');
    expect(textOf({ a: shared, b: shared, c: 10n })).toBe('{"a":{"k":1},"b":{"k":1},"c":"10"}');
    expect(textOf({ content: circular() })).toBe('{"a":1,"self":"[Circular]"}');
    expect(textOf({ content: [circular()] })).toBe('{"a":1,"self":"[Circular]"}');
  });

  it('shows a BigInt as its digits', () => {
    expect(textOf(10n)).toBe('10');
    expect(textOf({ n: 12345678901234567890n })).toBe('{"n":"12345678901234567890"}');
  });

  it('replaces details JSON cannot carry by a JSON-safe copy and a note, keeping the text', () => {
    for (const details of [circular(), { n: 1n }]) {
      const out = normalizeOutput({ content: 'ok', details });
      expect(out.content).toEqual([{ type: 'text', text: 'ok' }]);
      expect(out.details).toMatchObject({ note: expect.stringMatching(/^the tool's output is not JSON \(.+\); this is a JSON-safe copy/) });
      expect(() => JSON.stringify(out)).not.toThrow();
    }
    expect(normalizeOutput({ content: 'ok', details: circular() }).details).toMatchObject({ value: { a: 1, self: '[Circular]' } });
    expect(normalizeOutput({ content: 'ok', details: { n: 1n } }).details).toMatchObject({ value: { n: '1' } });
    // Details that are JSON stay the very same object.
    const fine = { rows: [1, 2] };
    expect(normalizeOutput({ content: 'ok', details: fine }).details).toBe(fine);
  });

  it('the note says only the first line of the JSON error', () => {
    const out = normalizeOutput(circular());
    expect((out.details as { note: string }).note).not.toContain('\n');
    expect(() => JSON.stringify(out)).not.toThrow();
  });

  it('survives a getter or toJSON that throws', () => {
    const hostile = {
      get bad(): never {
        throw new Error('no');
      },
      self: undefined as unknown,
    };
    hostile.self = hostile;
    expect(textOf(hostile)).toBe('"[Unreadable]"');
  });

  it('shows bytes as text when they are UTF-8, else as their size', () => {
    expect(textOf(Buffer.from('héllo'))).toBe('héllo');
    expect(textOf(new Uint8Array([104, 105]))).toBe('hi');
    expect(normalizeOutput(Buffer.from('x')).details).toBeUndefined();
    expect(textOf(new Uint8Array([0xff, 0xfe, 0x00]))).toBe('<3 bytes of binary data>');
    expect(textOf(Buffer.from([0x50, 0x4b, 0x00, 0x04]))).toBe('<4 bytes of binary data>'); // valid UTF-8, but NUL: binary
    expect(textOf({ content: [Buffer.from('part')] })).toBe('part');
  });

  it('shows a Map as an object of its entries and a Set as an array, and keeps that copy as details', () => {
    const out = normalizeOutput(
      new Map<string, unknown>([
        ['a', 1],
        ['b', new Set([1, 2])],
      ]),
    );
    expect(out.content).toEqual([{ type: 'text', text: '{"a":1,"b":[1,2]}' }]);
    expect(out.details).toEqual({ a: 1, b: [1, 2] });
    expect(textOf(new Set(['x', { y: new Map() }]))).toBe('["x",{"y":{}}]');
    expect(textOf({ rows: [new Map([['k', 'v']])], empty: {} })).toBe('{"rows":[{"k":"v"}],"empty":{}}');
  });

  it('shows a Map with keys that are not strings as [key, value] pairs', () => {
    expect(
      textOf(
        new Map<unknown, unknown>([
          [1, 'one'],
          ['two', 2],
          [{ id: 3 }, null],
        ]),
      ),
    ).toBe('[[1,"one"],["two",2],[{"id":3},null]]');
    expect(textOf(new Map([[10n, 'big']]))).toBe('[["10","big"]]');
  });

  it('shows a Map or a Set that contains itself as "[Circular]"', () => {
    const map = new Map<string, unknown>([['a', 1]]);
    map.set('self', map);
    expect(textOf(map)).toBe('{"a":1,"self":"[Circular]"}');
    const set = new Set<unknown>([1]);
    set.add(set);
    expect(textOf({ content: [set] })).toBe('[1,"[Circular]"]');
  });

  it('replaces details holding a Map by the copy, and leaves other details with {} the same object', () => {
    const out = normalizeOutput({ content: 'ok', details: { index: new Map([['a', [1]]]) } });
    expect(out.details).toEqual({ index: { a: [1] } });
    const fine = { empty: {}, text: '{}', list: [{}] };
    expect(normalizeOutput({ content: 'ok', details: fine }).details).toBe(fine);
    expect(normalizeOutput(fine).details).toBe(fine);
    // Boxed primitives and toJSON are shown as JSON shows them.
    expect(textOf({ n: Object(1), s: Object('s'), d: new Date(0), m: new Map() })).toBe(
      '{"n":1,"s":"s","d":"1970-01-01T00:00:00.000Z","m":{}}',
    );
    expect(textOf({ n: Object(1), m: new Map([['a', Object(true)]]) })).toBe('{"n":1,"m":{"a":true}}');
  });

  it('keeps a "__proto__" key a field in a copy', () => {
    const parsed = JSON.parse('{"__proto__": {"a": 1}, "m": {}}') as Record<string, unknown>;
    parsed.m = new Map([['__proto__', 2]]);
    expect(textOf(parsed)).toBe('{"__proto__":{"a":1},"m":{"__proto__":2}}');
  });

  it('safeJson never throws and says undefined when JSON has nothing to say', () => {
    expect(safeJson(circular())).toBe('{"a":1,"self":"[Circular]"}');
    expect(safeJson({ n: 1n, s: new Set([1]) })).toBe('{"n":"1","s":[1]}');
    expect(safeJson(undefined)).toBeUndefined();
    expect(safeJson(() => 1)).toBeUndefined();
  });

  it('shows a function or a symbol by its string form, without details', () => {
    const out = normalizeOutput(Symbol('s'));
    expect(out.content).toEqual([{ type: 'text', text: 'Symbol(s)' }]);
    expect(out).not.toHaveProperty('details');
  });
});
