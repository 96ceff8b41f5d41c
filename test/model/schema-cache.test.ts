import { describe, expect, it } from 'vitest';
import { SchemaCache, schemaKey } from '../../src/model/schema-cache.js';

describe('schemaKey', () => {
  it('is the same for equal content written in another key order', () => {
    const a = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'string' } }, required: ['a'] };
    const b = { required: ['a'], properties: { b: { type: 'string' }, a: { type: 'number' } }, type: 'object' };
    expect(schemaKey(a)).toBe(schemaKey(b));
  });

  it('differs when content differs, including array order and value types', () => {
    expect(schemaKey({ required: ['a', 'b'] })).not.toBe(schemaKey({ required: ['b', 'a'] }));
    expect(schemaKey({ default: 1 })).not.toBe(schemaKey({ default: '1' }));
    expect(schemaKey({ enum: [null] })).not.toBe(schemaKey({ enum: [] }));
  });

  it('drops undefined members as JSON would', () => {
    expect(schemaKey({ type: 'string', description: undefined })).toBe(schemaKey({ type: 'string' }));
  });
});

describe('SchemaCache', () => {
  it('derives once per content, whatever object carries it', () => {
    const cache = new SchemaCache<{ n: number }>(10);
    let made = 0;
    const make = () => ({ n: ++made });
    const first = cache.get({ type: 'object', properties: { a: { type: 'number' } } }, make);
    const copy = cache.get({ properties: { a: { type: 'number' } }, type: 'object' }, make);
    expect(copy).toBe(first);
    expect(made).toBe(1);
    expect(cache.peek({ type: 'object', properties: { a: { type: 'number' } } })).toBe(first);
    expect(cache.peek({ type: 'object' })).toBeUndefined();
  });

  it('keeps at most `max` contents, dropping the least recently used', () => {
    const cache = new SchemaCache<number>(2);
    let made = 0;
    const make = () => ++made;
    cache.get({ title: 'a' }, make); // 1
    cache.get({ title: 'b' }, make); // 2
    cache.get({ title: 'a' }, make); // a used again: b is now the oldest
    cache.get({ title: 'c' }, make); // 3, b dropped
    expect(cache.size).toBe(2);
    expect(cache.get({ title: 'a' }, make)).toBe(1);
    expect(cache.get({ title: 'b' }, make)).toBe(4);
  });

  it('keeps answering for a schema object it has seen after its content was dropped', () => {
    const cache = new SchemaCache<number>(1);
    const held = { title: 'held' };
    let made = 0;
    cache.get(held, () => ++made);
    cache.get({ title: 'other' }, () => ++made);
    expect(cache.get(held, () => ++made)).toBe(1);
  });
});
