import { afterEach, describe, expect, it } from 'vitest';
import { formatSnippet, memoryLayer } from '../../src/memory/layer.js';
import { openMemory, type SqliteMemory } from '../../src/memory/sqlite-memory.js';
import { createMemoryTools } from '../../src/memory/tools.js';
import type { MemorySnippet } from '../../src/memory/types.js';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/types.js';

const open: SqliteMemory[] = [];
afterEach(() => {
  for (const memory of open.splice(0)) memory.close();
});

async function memory(): Promise<SqliteMemory> {
  const m = await openMemory({ path: ':memory:', project: 'p' });
  open.push(m);
  return m;
}

async function call(tools: Tool[], name: string, args: Record<string, unknown>) {
  const outcome = await createDispatcher(new ToolRegistry(tools)).dispatch(
    { type: 'tool_call', id: 'c1', name, arguments: args, rawArguments: JSON.stringify(args) },
    { signal: new AbortController().signal, runId: 'run-7', idempotencyKey: 'run-7:0:0' },
  );
  return { text: outcome.result.content.map((p) => (p.type === 'text' ? p.text : '')).join(''), isError: outcome.result.isError };
}

describe('memory tools', () => {
  it('remember stores a note (once) and recall finds it', async () => {
    const m = await memory();
    const tools = createMemoryTools(m);
    expect(await call(tools, 'remember', { text: 'Releases are cut from the main branch.', tags: ['release'] })).toEqual({
      text: 'Remembered as memory 1.',
      isError: false,
    });
    expect(await call(tools, 'remember', { text: 'Releases are cut from the main branch.' })).toEqual({
      text: 'Already remembered as memory 1.',
      isError: false,
    });
    const found = await call(tools, 'recall', { query: 'which branch do releases come from?' });
    expect(found.isError).toBe(false);
    expect(found.text).toMatch(/^- \[1\] Releases are cut from the main branch\. \(tags: release; from: run run-7; \d{4}-\d{2}-\d{2}\)$/);
  });

  it('recall says when nothing matches, and refuses a query with no word', async () => {
    const tools = createMemoryTools(await memory());
    expect(await call(tools, 'recall', { query: 'anything' })).toEqual({ text: 'No saved note matches "anything".', isError: false });
    expect(await call(tools, 'recall', { query: '?!' })).toMatchObject({
      isError: true,
      text: expect.stringMatching(/no word to search for/),
    });
  });

  it('recall honours limit', async () => {
    const m = await memory();
    for (let i = 0; i < 8; i++) m.remember(`cache note ${i}`);
    const result = await call(createMemoryTools(m), 'recall', { query: 'cache', limit: 3 });
    expect(result.text.split('\n')).toHaveLength(3);
  });

  it('invalid arguments are refused by validation before the store sees them', async () => {
    const tools = createMemoryTools(await memory());
    expect((await call(tools, 'remember', { text: '' })).isError).toBe(true);
    expect((await call(tools, 'recall', { query: 'x', limit: 500 })).isError).toBe(true);
  });

  it('declares risk and effect; forget is opt-in and only deletes what exists', async () => {
    const m = await memory();
    expect(createMemoryTools(m).map((t) => [t.name, t.risk, t.effect])).toEqual([
      ['remember', 'write', 'idempotent'],
      ['recall', 'read', 'pure'],
    ]);
    const tools = createMemoryTools(m, { forget: true });
    expect(tools.map((t) => t.name)).toEqual(['remember', 'recall', 'forget']);
    const { id } = m.remember('Wrong fact.');
    expect(await call(tools, 'forget', { id })).toEqual({ text: `Forgot memory ${id}.`, isError: false });
    expect(await call(tools, 'forget', { id })).toMatchObject({ isError: true, text: expect.stringMatching(/no memory/) });
  });
});

describe('memoryLayer', () => {
  const snippet = (id: string, text: string, extra: Partial<MemorySnippet> = {}): MemorySnippet => ({
    id,
    text,
    score: 1,
    createdAt: Date.UTC(2025, 0, 2),
    ...extra,
  });

  it('is empty for no snippets', () => {
    expect(memoryLayer([])).toBe('');
  });

  it('wraps snippets in a bounded block, best first, one line each', () => {
    const text = memoryLayer([snippet('3', 'First\nline', { tags: ['a'], source: 'run r' }), snippet('1', 'Second')]);
    expect(text.split('\n')).toEqual([
      '<memory>',
      expect.stringMatching(/outdated/),
      '- [3] First line (tags: a; from: run r; 2025-01-02)',
      '- [1] Second (2025-01-02)',
      '</memory>',
    ]);
  });

  it('stops adding snippets at maxChars, but always shows the best one (cut)', () => {
    const long = snippet('1', 'x'.repeat(5000));
    const text = memoryLayer([long, snippet('2', 'short')], { maxChars: 600 });
    expect(text.length).toBeLessThanOrEqual(600);
    expect(text).toContain('- [1] xxx');
    expect(text).not.toContain('[2]');
    expect(formatSnippet(snippet('9', 'y'))).toBe('- [9] y (2025-01-02)');
  });
});
