// Skills, memory, tool-output paging and tool selection as agent options, through real runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openMemory } from '../../src/memory/sqlite-memory.js';
import type { Skill } from '../../src/skills/types.js';
import { defineTool } from '../../src/tools/define.js';
import { addTool, collect, setup } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rein-extras-'));
  dirs.push(dir);
  return dir;
}

function skill(name: string, description: string, body: string, extra: Partial<Skill> = {}): Skill {
  const dir = tempDir();
  return { name, description, body, disableModelInvocation: false, dir, file: join(dir, 'SKILL.md'), ...extra };
}

const releaseNotes = skill(
  'release-notes',
  'Write release notes from a changelog for a product release.',
  'Start every release note with the version number.',
  {
    allowedTools: ['add'],
  },
);
const echo = defineTool({
  name: 'echo',
  description: 'Echo text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  effect: 'pure',
  execute: ({ text }) => String(text),
});

const sentTools = (request: unknown) =>
  ((request as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);
const userTexts = (request: unknown) =>
  (request as { messages: Array<{ role: string; content: unknown }> }).messages
    .filter((m) => m.role === 'user')
    .map((m) => String(m.content));

describe('skills as an agent option', () => {
  it('explicit: /skill:name injects the body, and its allowed-tools narrow the tools', async () => {
    const script = [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: 'done' }];
    const { agent, server } = await setup(script, { tools: [addTool, echo], skills: [releaseNotes] });
    const result = await agent.run('/skill:release-notes notes for v2');
    expect(result.status).toBe('done');
    const first = server.requests[0]!;
    expect(userTexts(first)[0]).toContain('Start every release note with the version number.');
    expect(userTexts(first)[0]).toContain('notes for v2');
    expect(userTexts(first)[0]).not.toContain('/skill:release-notes');
    expect(sentTools(first)).toEqual(['add', 'load_skill', 'read_skill_file']);
    const refused = result.messages.find((m) => m.role === 'tool');
    expect(refused).toMatchObject({ isError: true });
    expect(JSON.stringify(refused)).toMatch(/release-notes/);
  });

  it('matched: an input that matches the description injects the skill without a command', async () => {
    const { agent, server } = await setup([{ text: 'ok' }], { tools: [addTool], skills: [releaseNotes] });
    await agent.run('please write the release notes for the product release from the changelog');
    expect(userTexts(server.requests[0])[0]).toContain('<skill name="release-notes">');
  });

  it('model-decided: the catalog is in the system layer and load_skill returns the body', async () => {
    const script = [{ toolCalls: [{ name: 'load_skill', arguments: { name: 'release-notes' } }] }, { text: 'ok' }];
    const { agent, server } = await setup(script, { tools: [addTool], skills: { skills: [releaseNotes], match: false } });
    const result = await agent.run('hello there');
    const system = server.requests[0]!.messages[0] as { role: string; content: string };
    expect(system.role).toBe('system');
    expect(system.content).toContain('release-notes');
    expect(system.content).toContain('Write release notes from a changelog');
    const loaded = result.messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(loaded)).toContain('Start every release note with the version number.');
    // Once loaded by the model, the skill's allowed-tools narrow the next request.
    expect(sentTools(server.requests[1])).toEqual(['add', 'load_skill', 'read_skill_file']);
  });
});

describe('memory as an agent option', () => {
  it('remember in one run, and the memory reaches a later run that asks about it', async () => {
    const memory = await openMemory({ path: ':memory:', project: 'test' });
    try {
      const script = [
        { toolCalls: [{ name: 'remember', arguments: { text: 'The staging database lives on port 6543.' } }] },
        { text: 'noted' },
        { text: 'port 6543' },
      ];
      const { agent, server } = await setup(script, { memory });
      await agent.run('remember where the staging database is');
      await agent.run('which port does the staging database use?');
      const last = server.requests.at(-1)!;
      expect(JSON.stringify(last.messages)).toContain('The staging database lives on port 6543.');
      expect(sentTools(last)).toEqual(expect.arrayContaining(['remember', 'recall']));
    } finally {
      memory.close();
    }
  });
});

describe('tool-output paging and tool selection as agent options', () => {
  it('a cut result can be read on with read_tool_output', async () => {
    const big = defineTool({
      name: 'big',
      description: 'Big output.',
      parameters: { type: 'object', properties: {} },
      effect: 'pure',
      execute: () => 'a'.repeat(30_000) + 'THE-END',
    });
    const script = (request: { messages: Array<{ role: string; content: unknown }> }) => {
      const tools = request.messages.filter((m) => m.role === 'tool');
      if (tools.length === 0) return { toolCalls: [{ name: 'big', arguments: {} }] };
      if (tools.length === 1) {
        const offset = /offset (\d+)/.exec(String(tools[0]!.content))?.[1];
        return { toolCalls: [{ name: 'read_tool_output', arguments: { tool_call_id: 'call_1', offset: Number(offset) } }] };
      }
      return { text: 'read it' };
    };
    const { agent, server } = await setup(script as never, { tools: [big], toolOutputPaging: true, maxToolOutputChars: 2_000 });
    const { result } = await collect(agent.run('go'));
    expect(result.status).toBe('done');
    const page = result.messages.filter((m) => m.role === 'tool')[1];
    expect(JSON.stringify(page)).toContain('aaaa');
    expect(String(server.requests[1]!.messages.at(-1)!.content)).toMatch(/call read_tool_output with tool_call_id "call_1"/);
  });

  it('with many tools only a subset is sent, and search_tools brings one in for the next turn', async () => {
    const many = Array.from({ length: 40 }, (_, i) =>
      defineTool({
        name: `tool_${i}`,
        description: i === 33 ? 'Convert temperatures between celsius and fahrenheit.' : `Tool number ${i}.`,
        parameters: { type: 'object', properties: {} },
        effect: 'pure',
        execute: () => `ran ${i}`,
      }),
    );
    const script = [
      { toolCalls: [{ name: 'search_tools', arguments: { query: 'fahrenheit' } }] },
      { toolCalls: [{ name: 'tool_33', arguments: {} }] },
      { text: 'ok' },
    ];
    const source = { id: 'many', tools: () => many };
    const { agent, server } = await setup(script, { tools: [addTool], toolSources: [source], toolSelection: { maxTools: 8, fill: false } });
    const result = await agent.run('convert 20C');
    expect(result.status).toBe('done');
    expect(sentTools(server.requests[0]).length).toBeLessThanOrEqual(8);
    expect(sentTools(server.requests[0])).not.toContain('tool_33');
    expect(sentTools(server.requests[1])).toContain('tool_33');
    expect(JSON.stringify(result.messages)).toContain('ran 33');
  });
});
