import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/types.js';
import { loadSkills } from '../../src/skills/load.js';
import { SkillSession } from '../../src/skills/session.js';
import { createSkillTools } from '../../src/skills/tools.js';
import { tempDir, writeFiles, writeSkill } from './helpers.js';

/** Calls a tool through the real dispatcher (validation included), as the loop would. */
async function call(tools: Tool[], name: string, args: Record<string, unknown>, runId = 'run-1') {
  const dispatcher = createDispatcher(new ToolRegistry(tools));
  const outcome = await dispatcher.dispatch(
    { type: 'tool_call', id: 'c1', name, arguments: args, rawArguments: JSON.stringify(args) },
    { signal: new AbortController().signal, runId, idempotencyKey: `${runId}:0:0` },
  );
  return {
    text: outcome.result.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
    isError: outcome.result.isError,
    details: outcome.result.details,
  };
}

/** A project with a `guide` skill that has references, scripts and an outside secret next to it. */
async function project() {
  const base = await tempDir();
  const cwd = join(base, 'project');
  const root = join(cwd, '.rein/skills');
  await writeSkill(
    root,
    'guide',
    'Explain the style guide of the project.',
    '# Guide\n\nRead references/style.md first.',
    'allowed-tools: read_file',
  );
  await writeSkill(root, 'manual-only', 'Run the release by hand.', 'Release steps.', 'disable-model-invocation: true');
  await writeFiles(join(root, 'guide'), {
    'references/style.md': '# Style\n\nUse tabs.\n',
    'references/deep/more.md': 'More.\n',
    'scripts/check.sh': 'echo ok\n',
    '.hidden': 'not listed',
  });
  await writeFiles(base, { 'secret.txt': 'TOP SECRET\n' });
  await symlink(join(base, 'secret.txt'), join(root, 'guide/references/leak.md'));
  await symlink(join(base), join(root, 'guide/outside-dir'), 'dir');
  await symlink(join(root, 'guide/references/style.md'), join(root, 'guide/inside-link.md'));
  const { skills, diagnostics } = await loadSkills({ cwd, home: join(base, 'home') });
  expect(diagnostics).toEqual([]);
  const session = new SkillSession(skills);
  return { base, root, skills, session, tools: createSkillTools(skills, session) };
}

describe('load_skill (model-decided mode)', () => {
  it('returns the body wrapped, with the files the skill can read, and activates the skill', async () => {
    const { tools, session } = await project();
    const result = await call(tools, 'load_skill', { name: 'guide' });
    expect(result.isError).toBe(false);
    expect(result.text).toContain('<skill name="guide">\n# Guide\n\nRead references/style.md first.\n</skill>');
    expect(result.text).toContain('- inside-link.md\n- references/deep/more.md\n- references/style.md\n- scripts/check.sh');
    // Links out of the folder and hidden files are not offered.
    expect(result.text).not.toMatch(/leak\.md|outside-dir|\.hidden/);
    expect(result.details).toEqual({
      skill: 'guide',
      files: ['inside-link.md', 'references/deep/more.md', 'references/style.md', 'scripts/check.sh'],
    });
    expect(session.active()).toEqual([{ skill: session.get('guide'), mode: 'model' }]);
  });

  it('an unknown name is an error listing the loadable skills, with a suggestion', async () => {
    const { tools } = await project();
    const result = await call(tools, 'load_skill', { name: 'guid' });
    expect(result.isError).toBe(true);
    expect(result.text).toBe('unknown skill "guid": did you mean "guide"?; available skills: guide');
  });

  it('refuses a skill with disable-model-invocation', async () => {
    const { tools, session } = await project();
    const result = await call(tools, 'load_skill', { name: 'manual-only' });
    expect(result).toMatchObject({
      isError: true,
      text: expect.stringMatching(/can only be started by the user \(with \/skill:manual-only\)/),
    });
    expect(session.isActive('manual-only')).toBe(false);
  });

  it('a user-only skill the user started in this run can be reloaded by the model', async () => {
    const { tools, session } = await project();
    session.activate('manual-only', 'explicit');
    expect(await call(tools, 'load_skill', { name: 'manual-only' })).toMatchObject({
      isError: false,
      text: expect.stringContaining('Release steps.'),
    });
  });

  it('returns the instructions again when asked again (they may have been compacted away)', async () => {
    const { tools } = await project();
    await call(tools, 'load_skill', { name: 'guide' });
    expect((await call(tools, 'load_skill', { name: 'guide' })).text).toContain('# Guide');
  });

  it('a session per run: the tools can look the session up by run id', async () => {
    const { skills } = await project();
    const sessions = new Map<string, SkillSession>();
    const sessionOf = (runId: string) => sessions.get(runId) ?? sessions.set(runId, new SkillSession(skills)).get(runId)!;
    const tools = createSkillTools(skills, sessionOf);
    await call(tools, 'load_skill', { name: 'guide' }, 'run-a');
    expect(sessionOf('run-a').isActive('guide')).toBe(true);
    expect(sessionOf('run-b').isActive('guide')).toBe(false);
  });
});

describe('read_skill_file (progressive disclosure)', () => {
  it('reads a file of the skill folder', async () => {
    const { tools } = await project();
    expect(await call(tools, 'read_skill_file', { skill: 'guide', path: 'references/style.md' })).toMatchObject({
      isError: false,
      text: '# Style\n\nUse tabs.',
    });
    expect((await call(tools, 'read_skill_file', { skill: 'guide', path: './references//deep/more.md' })).text).toBe('More.');
    expect((await call(tools, 'read_skill_file', { skill: 'guide', path: 'inside-link.md' })).text).toBe('# Style\n\nUse tabs.');
  });

  it('lists a folder, or the whole skill for "."', async () => {
    const { tools } = await project();
    expect((await call(tools, 'read_skill_file', { skill: 'guide', path: 'references' })).text).toBe(
      'Files in references/ of the skill "guide":\n- references/deep/more.md\n- references/style.md',
    );
    expect((await call(tools, 'read_skill_file', { skill: 'guide', path: '.' })).text).toMatch(
      /^Files in the skill "guide":\n- inside-link\.md/,
    );
  });

  it.each([
    ['../manual-only/SKILL.md', /leaves the skill folder/],
    ['references/../../manual-only/SKILL.md', /leaves the skill folder/],
    ['..\\..\\secret.txt', /leaves the skill folder/],
    ['/etc/passwd', /is not relative/],
    ['~/.ssh/id_rsa', /is not relative/],
    ['C:\\Windows\\win.ini', /is not relative/],
    ['references/leak.md', /link that leads outside/],
    ['outside-dir/secret.txt', /link that leads outside/],
    ['outside-dir', /link that leads outside/],
    ['references/missing.md', /does not exist/],
  ])('refuses %s', async (path, reason) => {
    const { tools } = await project();
    const result = await call(tools, 'read_skill_file', { skill: 'guide', path });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(reason);
    expect(result.text).not.toContain('TOP SECRET');
    // The refusal shows what can be read instead.
    expect(result.text).toContain('- references/style.md');
  });

  it('pages through a long file by lines and says how to read on', async () => {
    const { root, skills, session } = await project();
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i + 1} ${'x'.repeat(40)}`);
    await writeFile(join(root, 'guide/references/long.md'), lines.join('\n'));
    const tools = createSkillTools(skills, session, { maxChars: 1000 });
    const first = await call(tools, 'read_skill_file', { skill: 'guide', path: 'references/long.md' });
    expect(first.text.startsWith('line 1 ')).toBe(true);
    const match = /\[lines 1–(\d+) of 300; call again with startLine: (\d+) to read on\]$/.exec(first.text);
    expect(match).not.toBeNull();
    const next = Number(match![2]);
    expect(next).toBe(Number(match![1]) + 1);
    const second = await call(tools, 'read_skill_file', { skill: 'guide', path: 'references/long.md', startLine: next });
    expect(second.text.startsWith(`line ${next} `)).toBe(true);
    const last = await call(tools, 'read_skill_file', { skill: 'guide', path: 'references/long.md', startLine: 300 });
    expect(last.text).toBe(`${lines[299]}\n[lines 300–300 of 300]`);
    const past = await call(tools, 'read_skill_file', { skill: 'guide', path: 'references/long.md', startLine: 301 });
    expect(past).toMatchObject({ isError: true, text: expect.stringMatching(/has 300 lines; startLine 301 is past the end/) });
  });

  it('caps the bytes read and refuses binary files', async () => {
    const { root, skills, session } = await project();
    await writeFile(join(root, 'guide/references/big.md'), 'a'.repeat(5000));
    await writeFile(join(root, 'guide/references/image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1]));
    const tools = createSkillTools(skills, session, { maxFileBytes: 100, maxChars: 10_000 });
    const big = await call(tools, 'read_skill_file', { skill: 'guide', path: 'references/big.md' });
    expect(big.text).toBe(`${'a'.repeat(100)}\n[only the first 100 bytes of 5000 can be read]`);
    const image = await call(tools, 'read_skill_file', { skill: 'guide', path: 'references/image.png' });
    expect(image).toMatchObject({ isError: true, text: 'references/image.png is a binary file (8 bytes) and cannot be shown as text' });
  });

  it('a user-only skill can be read once the user activated it, not before', async () => {
    const { tools, session, root } = await project();
    await mkdir(join(root, 'manual-only/references'));
    await writeFile(join(root, 'manual-only/references/steps.md'), 'Step one.');
    expect((await call(tools, 'read_skill_file', { skill: 'manual-only', path: 'references/steps.md' })).isError).toBe(true);
    session.activate('manual-only', 'explicit');
    expect(await call(tools, 'read_skill_file', { skill: 'manual-only', path: 'references/steps.md' })).toMatchObject({
      isError: false,
      text: 'Step one.',
    });
  });

  it('an unknown skill or missing arguments are errors the model can fix', async () => {
    const { tools } = await project();
    expect((await call(tools, 'read_skill_file', { skill: 'nope', path: 'x' })).text).toMatch(
      /unknown skill "nope"; available skills: guide/,
    );
    expect((await call(tools, 'read_skill_file', { skill: 'guide' })).text).toMatch(/path/);
  });

  it('both tools are read-only and pure', async () => {
    const { tools } = await project();
    expect(tools.map((t) => [t.name, t.risk, t.effect])).toEqual([
      ['load_skill', 'read', 'pure'],
      ['read_skill_file', 'read', 'pure'],
    ]);
  });
});
