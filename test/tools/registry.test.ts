import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/define.js';
import { ToolRegistry, createRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/types.js';

const make = (name: string): Tool =>
  defineTool({ name, description: `The ${name} tool.`, parameters: { type: 'object', properties: {} }, execute: () => name });

describe('ToolRegistry', () => {
  it('adds, gets, lists and checks tools in registration order', () => {
    const registry = new ToolRegistry([make('b'), make('a')]);
    expect(registry.has('a')).toBe(true);
    expect(registry.has('c')).toBe(false);
    expect(registry.get('b')?.name).toBe('b');
    expect(registry.get('c')).toBeUndefined();
    expect(registry.list().map((t) => t.name)).toEqual(['b', 'a']);
    expect(registry.names()).toEqual(['b', 'a']);
    expect(registry.size).toBe(2);
  });

  it('refuses a duplicate name', () => {
    const registry = createRegistry([make('x')]);
    expect(() => registry.add(make('x'))).toThrow(
      expect.objectContaining({ code: 'config', message: expect.stringContaining('tool "x" is already registered') }),
    );
  });

  it('refuses an invalid hand-made tool', () => {
    const bad = { name: 'bad name', description: 'd', parameters: { type: 'object' }, execute: () => '' };
    expect(() => new ToolRegistry([bad])).toThrow(/name must be/);
  });

  it('gives the model name, description and parameters, and updates after changes', () => {
    const registry = new ToolRegistry([make('a')]);
    expect(registry.specs()).toEqual([{ name: 'a', description: 'The a tool.', parameters: { type: 'object', properties: {} } }]);
    registry.add(make('b'));
    expect(registry.specs().map((s) => s.name)).toEqual(['a', 'b']);
    expect(registry.remove('a')).toBe(true);
    expect(registry.remove('a')).toBe(false);
    expect(registry.specs().map((s) => s.name)).toEqual(['b']);
    expect(registry.list().map((t) => t.name)).toEqual(['b']);
  });

  it('hands out specs a caller may push to without affecting the registry', () => {
    const registry = new ToolRegistry([make('a')]);
    registry.specs().push({ name: 'z', description: 'z', parameters: {} });
    expect(registry.specs()).toHaveLength(1);
  });
});
