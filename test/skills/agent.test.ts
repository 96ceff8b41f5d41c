// Each loading mode through a real Agent and the scripted model server.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScriptRequest } from '../../src/testing/index.js';
import { defineTool } from '../../src/tools/define.js';
import { loadSkills } from '../../src/skills/load.js';
import { skillsCatalog } from '../../src/skills/render.js';
import { SkillSession } from '../../src/skills/session.js';
import { skillToolSource } from '../../src/skills/tool-source.js';
import { createSkillTools } from '../../src/skills/tools.js';
import { setup } from '../loop/helpers.js';
import { tempDir, writeFiles, writeSkill } from './helpers.js';

async function skillsOnDisk() {
  const base = await tempDir();
  const root = join(base, '.rein/skills');
  await writeSkill(
    root,
    'style-guide',
    'Apply the house style guide to code reviews and formatting questions.',
    'Indent with tabs. See references/naming.md.',
    'allowed-tools: read_file',
  );
  await writeFiles(root, { 'style-guide/references/naming.md': 'Functions are verbs.' });
  const { skills, diagnostics } = await loadSkills({ cwd: base, home: join(base, 'home') });
  expect(diagnostics).toEqual([]);
  return skills;
}

const seen = (requests: Array<{ request?: ScriptRequest }>) => requests.map((r) => r.request!);
const lastTool = (request: ScriptRequest) => request.messages.filter((m) => m.role === 'tool').at(-1);

const tool = (name: string) =>
  defineTool({
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: {} },
    risk: 'read',
    execute: () => `${name} ran`,
  });

describe('skills through a real agent', () => {
  it('model-decided: the catalog is in the system prompt, load_skill returns the body, read_skill_file a reference', async () => {
    const skills = await skillsOnDisk();
    const session = new SkillSession(skills);
    const { agent, server } = await setup(
      [
        { toolCalls: [{ name: 'load_skill', arguments: { name: 'style-guide' } }] },
        { toolCalls: [{ name: 'read_skill_file', arguments: { skill: 'style-guide', path: 'references/naming.md' } }] },
        { text: 'Use tabs, and name functions with verbs.' },
      ],
      { system: `You review code.\n\n${skillsCatalog(skills)}`, tools: createSkillTools(skills, session) },
    );
    const result = await agent.run('How should I format this function?');
    expect(result.reason).toBe('final_answer');
    const [first, second, third] = seen(server.received);
    expect(first!.system).toContain('<skill name="style-guide">Apply the house style guide');
    expect(first!.toolNames).toEqual(['load_skill', 'read_skill_file']);
    expect(lastTool(second!)).toMatchObject({
      name: 'load_skill',
      isError: false,
      content: expect.stringContaining('<skill name="style-guide">\nIndent with tabs.'),
    });
    expect(lastTool(second!)!.content).toContain('- references/naming.md');
    expect(lastTool(third!)).toMatchObject({ name: 'read_skill_file', isError: false, content: 'Functions are verbs.' });
    expect(session.active().map((a) => [a.skill.name, a.mode])).toEqual([['style-guide', 'model']]);
  });

  it('explicit: /skill:name puts the body in the user turn, without the token', async () => {
    const skills = await skillsOnDisk();
    const session = new SkillSession(skills);
    const { text, injection } = session.prepareInput('/skill:style-guide check my indentation');
    const { agent, server } = await setup([{ text: 'Tabs it is.' }], { tools: createSkillTools(skills, session) });
    await agent.run(`${injection}\n\n${text}`);
    const user = seen(server.received)[0]!.messages[0]!;
    expect(user.role).toBe('user');
    expect(user.content).toMatch(/^<skill name="style-guide">\nIndent with tabs\. See references\/naming\.md\.\n<\/skill>\n/);
    expect(user.content).toMatch(/\n\ncheck my indentation$/);
    expect(user.content).not.toContain('/skill:');
  });

  it('harness matching: an input that fits the description gets the body without the model asking', async () => {
    const skills = await skillsOnDisk();
    const session = new SkillSession(skills);
    const { text, injection, activated } = session.prepareInput('a formatting question for the code review');
    expect(activated.map((a) => a.mode)).toEqual(['matched']);
    const { agent, server } = await setup([{ text: 'ok' }]);
    await agent.run(`${injection}\n\n${text}`);
    expect(seen(server.received)[0]!.messages[0]!.content).toContain('<skill name="style-guide">');
  });

  it('allowed-tools: once the model loads the skill, the next turn offers only what it allows', async () => {
    const skills = await skillsOnDisk();
    const session = new SkillSession(skills);
    const source = skillToolSource([...createSkillTools(skills, session), tool('read_file'), tool('write_file')], session);
    const { agent, server } = await setup(
      [
        { toolCalls: [{ name: 'load_skill', arguments: { name: 'style-guide' } }] },
        { toolCalls: [{ name: 'write_file', arguments: {} }] },
        { text: 'done' },
      ],
      { toolSources: [source] },
    );
    await agent.run('review this');
    const [first, second, third] = seen(server.received);
    expect(first!.toolNames).toEqual(['load_skill', 'read_skill_file', 'read_file', 'write_file']);
    expect(second!.toolNames).toEqual(['load_skill', 'read_skill_file', 'read_file']);
    // A call to a tool the skill does not allow is refused, not run.
    // (Chat Completions carries no error flag on tool results, so the text is what tells.)
    expect(lastTool(third!)).toMatchObject({ name: 'write_file', content: expect.stringMatching(/^unknown tool "write_file"/) });
    expect(lastTool(third!)!.content).not.toContain('write_file ran');
  });
});
