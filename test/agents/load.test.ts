import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgents } from '../../src/agents/load.js';

async function layout(project: Record<string, string>, user: Record<string, string> = {}) {
  const base = await mkdtemp(join(tmpdir(), 'rein-agents-'));
  const root = join(base, 'project');
  const home = join(base, 'home');
  await mkdir(join(root, '.rein/agents'), { recursive: true });
  await mkdir(join(home, '.rein/agents'), { recursive: true });
  for (const [name, text] of Object.entries(project)) await writeFile(join(root, '.rein/agents', name), text);
  for (const [name, text] of Object.entries(user)) await writeFile(join(home, '.rein/agents', name), text);
  return { root, home };
}

const file = (front: string, body = 'You review code.') => `---\n${front}\n---\n${body}\n`;

describe('agent files', () => {
  it('reads every field: model, baseUrl, tools, mode, limits, outputSchema, and the body as the system prompt', async () => {
    const { root, home } = await layout({
      'reviewer.md': file(
        [
          'name: reviewer',
          'description: Reviews a diff.',
          'model: openai/gpt-4o-mini',
          'baseUrl: http://127.0.0.1:8000/v1',
          'tools: [read_file, "github__*"]',
          'mode: plan',
          'limits: { maxSteps: 20, timeoutMs: 600000, maxCostUsd: 0.5 }',
          'outputSchema: { type: object, properties: { verdict: { type: string } }, required: [verdict] }',
        ].join('\n'),
        'You are a careful reviewer.\n\nList problems.',
      ),
      'none.md': file('name: none\ndescription: No tools.\nmodel: ollama/llama3.1\ntools: []'),
      'notes.txt': 'not an agent',
    });
    const { items, diagnostics } = await loadAgents({ root, home });
    expect(diagnostics).toEqual([]);
    expect(items).toEqual([
      {
        name: 'none',
        description: 'No tools.',
        model: 'ollama/llama3.1',
        tools: [],
        system: 'You review code.',
        file: join(root, '.rein/agents/none.md'),
      },
      {
        name: 'reviewer',
        description: 'Reviews a diff.',
        model: 'openai/gpt-4o-mini',
        baseUrl: 'http://127.0.0.1:8000/v1',
        tools: ['read_file', 'github__*'],
        mode: 'plan',
        limits: { maxSteps: 20, timeoutMs: 600000, maxCostUsd: 0.5 },
        outputSchema: { type: 'object', properties: { verdict: { type: 'string' } }, required: ['verdict'] },
        system: 'You are a careful reviewer.\n\nList problems.',
        file: join(root, '.rein/agents/reviewer.md'),
      },
    ]);
  });

  it('a bad file is a diagnostic naming the file, the field and what to fix; the other agents still load', async () => {
    const { root, home } = await layout({
      'a.md': file('name: b\ndescription: x\nmodel: openai/m'),
      'c.md': file('name: c\nmodel: openai/m'),
      'd.md': file('name: d\ndescription: x\nmodel: gpt-4o'),
      'e.md': file('name: e\ndescription: x\nmodel: opnai/gpt-4o'),
      'f.md': file('name: f\ndescription: x\nmodel: openai/m\nlimits: { maxSteps: "20", maxStep: 3, timeoutMs: -1 }'),
      'g.md': file('name: g\ndescription: x\nmodel: openai/m\nmode: yolo'),
      'h.md': file('name: h\ndescription: x\nmodel: openai/m\nbaseUrl: ftp://host'),
      'i.md': file('name: i\ndescription: x\nmodel: openai/m\ntools: ["bash(git *)"]'),
      'j.md': file('name: j\ndescription: x\nmodel: openai/m\noutputSchema: { type: objekt }'),
      'k.md': 'no front matter',
      'l.md': file('name: l\ndescription: x\nmodel: [openai]\n  bad: indent'),
      'ok.md': file('name: ok\ndescription: Fine.\nmodel: openai/m\ntool: [read_file]'),
    });
    const { items, diagnostics } = await loadAgents({ root, home });
    expect(items.map((a) => a.name)).toEqual(['ok']);
    const at = (name: string) =>
      diagnostics
        .filter((d) => d.file === join(root, '.rein/agents', name))
        .map((d) => ({ field: d.field, message: d.message, severity: d.severity }));
    expect(at('a.md')).toEqual([
      { field: 'name', message: '"b" must equal the file name "a.md" without .md: rename one of them', severity: 'error' },
    ]);
    expect(at('c.md')).toEqual([
      { field: 'description', message: 'missing: say what the agent does and when to use it', severity: 'error' },
    ]);
    expect(at('d.md')[0]).toMatchObject({ field: 'model', message: expect.stringMatching(/"gpt-4o" must be "<provider>\/<model>"/) });
    expect(at('e.md')[0]).toMatchObject({
      field: 'model',
      message: expect.stringMatching(/unknown provider "opnai" \(did you mean openai\?\)/),
    });
    expect(at('f.md').map((d) => d.field)).toEqual(['limits.maxSteps', 'limits.maxStep', 'limits.timeoutMs']);
    expect(at('f.md')[0]!.message).toMatch(/must be a positive whole number of model calls; got string "20"/);
    expect(at('f.md')[1]!.message).toMatch(/unknown limit \(did you mean maxSteps\?\)/);
    expect(at('g.md')).toEqual([
      {
        field: 'mode',
        message: expect.stringMatching(/a project agent file cannot choose yolo: put the agent in ~\/\.rein\/agents\//),
        severity: 'error',
      },
    ]);
    expect(at('h.md')[0]).toMatchObject({ field: 'baseUrl', message: expect.stringMatching(/http:\/\/ or https:\/\//) });
    expect(at('i.md')[0]).toMatchObject({
      field: 'tools',
      message: expect.stringMatching(/argument patterns such as bash\(git \*\) belong in permission rules/),
    });
    expect(at('j.md')[0]).toMatchObject({ field: 'outputSchema', message: expect.stringMatching(/is not a valid JSON Schema/) });
    expect(at('k.md')[0]).toMatchObject({ field: undefined, message: expect.stringMatching(/no front matter/) });
    expect(at('l.md')[0]).toMatchObject({ message: expect.stringMatching(/invalid YAML in the front matter/) });
    expect(at('ok.md')).toEqual([
      {
        field: 'tool',
        message:
          'unknown field, ignored (did you mean tools?): an agent file takes name, description, model, baseUrl, tools, mode, limits, outputSchema, agents, inputSchema',
        severity: 'warning',
      },
    ]);
  });

  it("the project's agent wins over the user's of the same name; a user file may choose yolo", async () => {
    const { root, home } = await layout(
      { 'dup.md': file('name: dup\ndescription: Project.\nmodel: openai/m') },
      {
        'dup.md': file('name: dup\ndescription: User.\nmodel: openai/m'),
        'free.md': file('name: free\ndescription: Mine.\nmodel: openai/m\nmode: yolo'),
      },
    );
    const { items, diagnostics } = await loadAgents({ root, home });
    expect(items.map((a) => `${a.name}:${a.description}`)).toEqual(['dup:Project.', 'free:Mine.']);
    expect(items[1]!.mode).toBe('yolo');
    expect(diagnostics).toEqual([
      {
        file: join(home, '.rein/agents/dup.md'),
        message: expect.stringMatching(/already defined by .*project.*takes precedence/),
        severity: 'warning',
      },
    ]);
  });

  it('sub-agents: agents lists other agents by name, inputSchema is an object schema; mistakes name the field', async () => {
    const { root, home } = await layout({
      'lead.md': file('name: lead\ndescription: Leads.\nmodel: openai/m\nagents: [reviewer, researcher]'),
      'reviewer.md': file(
        'name: reviewer\ndescription: Reviews.\nmodel: openai/m\ninputSchema: { type: object, properties: { diff: { type: string } }, required: [diff] }',
      ),
      'm.md': file('name: m\ndescription: x\nmodel: openai/m\nagents: reviewer'),
      'n.md': file('name: n\ndescription: x\nmodel: openai/m\nagents: [n]'),
      'o.md': file('name: o\ndescription: x\nmodel: openai/m\nagents: [Bad_Name]'),
      'p.md': file('name: p\ndescription: x\nmodel: openai/m\ninputSchema: { type: string }'),
      'q.md': file('name: q\ndescription: x\nmodel: openai/m\nagents: [a, a]'),
    });
    const { items, diagnostics } = await loadAgents({ root, home });
    expect(items.find((a) => a.name === 'lead')?.agents).toEqual(['reviewer', 'researcher']);
    expect(items.find((a) => a.name === 'reviewer')?.inputSchema).toEqual({
      type: 'object',
      properties: { diff: { type: 'string' } },
      required: ['diff'],
    });
    const at = (name: string) =>
      diagnostics.filter((d) => d.file === join(root, '.rein/agents', name)).map((d) => ({ field: d.field, message: d.message }));
    expect(at('m.md')).toEqual([
      {
        field: 'agents',
        message: expect.stringMatching(/must be a list of agent names, e.g. \[reviewer, researcher\]; got string "reviewer"/),
      },
    ]);
    expect(at('n.md')).toEqual([{ field: 'agents', message: expect.stringMatching(/"n" is this agent itself/) }]);
    expect(at('o.md')).toEqual([{ field: 'agents', message: expect.stringMatching(/the name of an agent file .*got string "Bad_Name"/) }]);
    expect(at('p.md')).toEqual([{ field: 'inputSchema', message: expect.stringMatching(/must be a JSON Schema of an object/) }]);
    expect(at('q.md')).toEqual([{ field: 'agents', message: '"a" is listed twice' }]);
  });

  it('no agents folder is no agents and no diagnostic', async () => {
    const base = await mkdtemp(join(tmpdir(), 'rein-agents-'));
    expect(await loadAgents({ root: base, home: base })).toEqual({ items: [], diagnostics: [] });
  });
});
