// The pure pieces of the host: tool names, schema normalization, content mapping, and
// parsing of `/server:prompt` and `@server:uri`.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reconnectDelay } from '../../src/mcp/backoff.js';
import { toToolOutput } from '../../src/mcp/content.js';
import { findMentions } from '../../src/mcp/mentions.js';
import { ToolNamer, sanitizeToolName } from '../../src/mcp/naming.js';
import { parsePromptCommand, splitArgs } from '../../src/mcp/prompts.js';
import { normalizeInputSchema, prepareInputSchema } from '../../src/mcp/schema.js';
import { fetchServerTools, type PreparedSchemas } from '../../src/mcp/server-tools.js';
import { root } from './helpers.js';

describe('tool names', () => {
  it('are made valid for every provider', () => {
    expect(sanitizeToolName('github__search.issues')).toBe('github__search_issues');
    expect(sanitizeToolName('a b/c:d')).toBe('a_b_c_d');
    expect(sanitizeToolName('')).toBe('tool');
    const long = sanitizeToolName(`srv__${'x'.repeat(100)}`);
    expect(long).toMatch(/^[a-zA-Z0-9_-]{64}$/);
    expect(sanitizeToolName(`srv__${'x'.repeat(100)}`)).toBe(long);
    expect(sanitizeToolName(`srv__${'x'.repeat(99)}y`)).not.toBe(long);
  });

  it('are unique: later duplicates get _2, _3 within 64 characters', () => {
    const namer = new ToolNamer(['read_resource']);
    expect([namer.name('echo'), namer.name('echo'), namer.name('e.cho'), namer.name('read_resource')]).toEqual([
      'echo',
      'echo_2',
      'e_cho',
      'read_resource_2',
    ]);
    const longNamer = new ToolNamer();
    const a = longNamer.name('y'.repeat(64));
    const b = longNamer.name('y'.repeat(64));
    expect(b).toHaveLength(64);
    expect(b.endsWith('_2')).toBe(true);
    expect(a).not.toBe(b);
  });
});

describe('input schemas', () => {
  it('get type object and properties, and keep only draft-04..07 $schema', () => {
    expect(normalizeInputSchema(undefined)).toEqual({ type: 'object', properties: {} });
    expect(normalizeInputSchema({ properties: { q: { type: 'string' } } })).toEqual({
      type: 'object',
      properties: { q: { type: 'string' } },
    });
    expect(normalizeInputSchema({ type: ['object', 'null'] })).toEqual({ type: 'object', properties: {} });
    expect(normalizeInputSchema({ type: 'string' })).toEqual({ type: 'object', properties: {} });
    expect(normalizeInputSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' })).toEqual({
      type: 'object',
      properties: {},
    });
    expect(normalizeInputSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toMatchObject({
      $schema: 'http://json-schema.org/draft-07/schema#',
    });
  });

  it('rewrite draft-04 boolean exclusive bounds, at any depth', () => {
    const schema = normalizeInputSchema({
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      properties: {
        a: { type: 'number', maximum: 5, exclusiveMaximum: true },
        b: { type: 'array', items: { type: 'number', minimum: 1, exclusiveMinimum: false } },
      },
    });
    expect(schema.properties).toEqual({
      a: { type: 'number', exclusiveMaximum: 5 },
      b: { type: 'array', items: { type: 'number', minimum: 1 } },
    });
  });

  it('a schema that does not compile becomes an open object, with a warning', async () => {
    const prepared = await prepareInputSchema({ type: 'object', properties: { a: { type: 'not-a-type' } } });
    expect(prepared.schema).toEqual({ type: 'object', properties: {}, additionalProperties: true });
    expect(prepared.warning).toMatch(/^input schema does not compile \(.+\); arguments are passed unchecked$/);
    const fine = await prepareInputSchema({ type: 'object', properties: { a: { type: 'string', format: 'made-up-format' } } });
    expect(fine.warning).toBeUndefined();
  });

  it('are compiled again only when they change: listing the same tools again keeps each schema object', async () => {
    let tools: unknown[] = [
      { name: 'a', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
      { name: 'bad', inputSchema: { type: 'object', properties: { x: { type: 'not-a-type' } } } },
    ];
    const client = { request: async () => ({ tools: structuredClone(tools) }) } as unknown as Parameters<typeof fetchServerTools>[0];
    const schemas: PreparedSchemas = new Map();
    const notes: string[] = [];
    const list = () =>
      fetchServerTools(
        client,
        () => true,
        { timeout: 1000 },
        (note) => notes.push(note),
        schemas,
      );
    const first = await list();
    const again = await list();
    expect(again.map((t) => t.parameters)).toEqual(first.map((t) => t.parameters));
    expect(again[0]!.parameters).toBe(first[0]!.parameters);
    expect(again[1]!.parameters).toBe(first[1]!.parameters);
    expect(again[1]!.parameters).toEqual({ type: 'object', properties: {}, additionalProperties: true });
    expect(notes.filter((n) => n.startsWith('tool "bad": input schema does not compile'))).toHaveLength(2);
    tools = [{ name: 'a', inputSchema: { type: 'object', properties: { q: { type: 'number' } } } }];
    const changed = await list();
    expect(changed[0]!.parameters).not.toBe(first[0]!.parameters);
    expect(changed[0]!.parameters).toEqual({ type: 'object', properties: { q: { type: 'number' } } });
    expect([...schemas.keys()]).toHaveLength(1);
  });

  it('never shares the server’s object', () => {
    const input = { type: 'object', properties: { a: { type: 'string' } } };
    const out = normalizeInputSchema(input);
    (out.properties as Record<string, unknown>).b = {};
    expect(input.properties).toEqual({ a: { type: 'string' } });
  });
});

describe('tool results', () => {
  it('structured content alone is shown as JSON, and kept in details', () => {
    expect(toToolOutput({ content: [], structuredContent: { a: 1 } }, 's', 't')).toEqual({
      content: [{ type: 'text', text: '{\n  "a": 1\n}' }],
      isError: false,
      details: { server: 's', tool: 't', structuredContent: { a: 1 } },
    });
  });

  it('an empty error still says something, and unknown parts are shown as JSON', () => {
    expect(toToolOutput({ content: [], isError: true }, 's', 't').content).toEqual([
      { type: 'text', text: 'tool "t" of MCP server "s" reported an error without a message' },
    ]);
    expect(toToolOutput({ content: [{ type: 'hologram', beam: 1 }] }, 's', 't').content).toEqual([
      { type: 'text', text: '{"type":"hologram","beam":1}' },
    ]);
    expect(toToolOutput(null, 's', 't').content).toEqual([{ type: 'text', text: '(no output)' }]);
  });
});

describe('/server:prompt and @server:uri', () => {
  it('parses prompt commands and quoted arguments', () => {
    expect(parsePromptCommand('/everything:args-prompt city="New York"  state=NY ')).toEqual({
      server: 'everything',
      prompt: 'args-prompt',
      rest: 'city="New York"  state=NY',
    });
    expect(parsePromptCommand('/help')).toBeUndefined();
    expect(parsePromptCommand('hello /a:b')).toBeUndefined();
    expect(splitArgs(`a "b c" 'd e' k="v w" x`)).toEqual(['a', 'b c', 'd e', 'k=v w', 'x']);
  });

  it('finds mentions of known servers only, without trailing punctuation or repeats', () => {
    const known = (name: string): boolean => name === 'docs' || name === 'fs';
    const text = 'Read @docs:file:///guide.md, then (@fs:notes/today.txt). Mail bob@docs:x and @other:y; again @docs:file:///guide.md!';
    expect(findMentions(text, known)).toEqual([
      { server: 'docs', uri: 'file:///guide.md' },
      { server: 'fs', uri: 'notes/today.txt' },
    ]);
  });
});

describe('reconnect delays', () => {
  it('double from the initial delay up to the cap, with jitter between half and all of the step', () => {
    const policy = { initialDelayMs: 500, maxDelayMs: 30_000 };
    expect([0, 1, 2, 3, 10].map((n) => reconnectDelay(n, policy, () => 1))).toEqual([500, 1000, 2000, 4000, 30_000]);
    expect([0, 1, 2, 3, 10].map((n) => reconnectDelay(n, policy, () => 0))).toEqual([250, 500, 1000, 2000, 15_000]);
    expect(reconnectDelay(1000, policy, () => 1)).toBe(30_000);
  });
});

describe('the SDK is loaded lazily', () => {
  it('no module of src/mcp imports the SDK, picomatch or ajv other than by a type import or a dynamic import', () => {
    const dir = join(root, 'src', 'mcp');
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => /^import (?!type )[^;]*from '(@modelcontextprotocol\/|picomatch|ajv)/m.test(readFileSync(join(dir, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
