import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/model/types.js';
import { loadSkills } from '../../src/skills/load.js';
import { skillNamesIn, skillsCatalog } from '../../src/skills/render.js';
import { SkillSession } from '../../src/skills/session.js';
import { fakeSkill, tempDir, writeFiles, writeSkill } from './helpers.js';

const tools = [
  'read_file',
  'write_file',
  'bash',
  'github__search',
  'github__create_issue',
  'load_skill',
  'read_skill_file',
  'final_answer',
].map((name) => ({ name }));
const names = (list: Array<{ name: string }>) => list.map((t) => t.name);

describe('the catalog (system layer)', () => {
  it('lists name and description of model-invocable skills and says how to load one', () => {
    const text = skillsCatalog([
      fakeSkill('pdf-tools', 'Work with <PDF> files & forms.'),
      fakeSkill('deploy', 'Deploy by hand.', { disableModelInvocation: true }),
    ]);
    expect(text).toContain('<skill name="pdf-tools">Work with &lt;PDF&gt; files &amp; forms.</skill>');
    expect(text).toContain('call load_skill with its name');
    expect(text).toContain('read_skill_file');
    expect(text).not.toContain('deploy');
  });

  it('is empty when no skill can be loaded by the model', () => {
    expect(skillsCatalog([])).toBe('');
    expect(skillsCatalog([fakeSkill('x', 'y', { disableModelInvocation: true })])).toBe('');
  });
});

describe('activation', () => {
  it('injects a skill once per run, whatever the mode', () => {
    const session = new SkillSession([fakeSkill('a', 'A.'), fakeSkill('b', 'B.')]);
    const first = session.activate('a', 'explicit');
    expect(first).toBe('<skill name="a">\nInstructions of a.\n</skill>');
    expect(session.activate('a', 'matched')).toBeUndefined();
    expect(session.activate('b', 'model')).toBeUndefined(); // the tool result carries it
    expect(session.activate('b', 'explicit')).toBeUndefined(); // already active
    expect(session.active().map((a) => [a.skill.name, a.mode])).toEqual([
      ['a', 'explicit'],
      ['b', 'model'],
    ]);
  });

  it('unknown names throw not_found naming the loaded skills', () => {
    const session = new SkillSession([fakeSkill('a', 'A.')]);
    expect(() => session.activate('zz')).toThrow(
      expect.objectContaining({ code: 'not_found', message: expect.stringMatching(/unknown skill "zz": loaded skills are a/) }),
    );
  });

  it('restore marks skills active without injecting them again (a resumed run)', () => {
    const session = new SkillSession([fakeSkill('a', 'A.')]);
    expect(session.restore(['a', 'gone'])).toEqual(['gone']);
    expect(session.prepareInput('/skill:a go').injection).toBeUndefined();
    expect(session.active().map((a) => a.mode)).toEqual(['restored']);
  });

  it('the names of the skills a history holds are found again for a resume', () => {
    const skills = [fakeSkill('a', 'A.'), fakeSkill('b', 'B.'), fakeSkill('c', 'C.')];
    const injected = new SkillSession(skills).activate('a')!;
    const loaded = (name: string, isError = false) => ({
      role: 'tool' as const,
      toolCallId: 't',
      toolName: 'load_skill',
      isError,
      content: [{ type: 'text' as const, text: `<skill name="${name}">\nbody\n</skill>` }],
    });
    const history: Message[] = [
      { role: 'user' as const, content: `${injected}\n\nplease` },
      // An assistant quoting the wrapper does not make a skill active (only the fields the function reads).
      { role: 'assistant', content: [{ type: 'text', text: '<skill name="c">\n' }] } as unknown as Message,
      loaded('b'),
      loaded('c', true),
      { ...loaded('c'), toolName: 'read_skill_file' },
    ];
    expect(skillNamesIn(history)).toEqual(['a', 'b']);
    const resumed = new SkillSession(skills);
    resumed.restore(skillNamesIn(history));
    expect(resumed.prepareInput('/skill:a again').injection).toBeUndefined();
  });

  it('notifies listeners on activation', () => {
    const session = new SkillSession([fakeSkill('a', 'A.')]);
    let calls = 0;
    const off = session.onChange(() => calls++);
    session.activate('a');
    session.activate('a');
    off();
    expect(calls).toBe(1);
  });
});

describe('prepareInput: explicit and harness-matched loading end to end', () => {
  async function skillsOnDisk() {
    const base = await tempDir();
    const root = join(base, '.rein/skills');
    await writeSkill(root, 'pdf-tools', 'Extract text and tables from PDF files, merge and split PDF documents.', 'Use pdftk for merging.');
    await writeSkill(root, 'changelog', 'Write the changelog entry for a release from the merged pull requests.', 'Group entries by type.');
    await writeSkill(
      root,
      'hotfix',
      'Ship an emergency hotfix to production.',
      'Page the on-call first.',
      'disable-model-invocation: true',
    );
    await writeFiles(root, { 'pdf-tools/references/pdftk.md': 'pdftk cheat sheet' });
    const { skills, diagnostics } = await loadSkills({ cwd: base, home: join(base, 'home') });
    expect(diagnostics).toEqual([]);
    return skills;
  }

  it('explicit: /skill:name injects the body (with its files) and strips the token', async () => {
    const session = new SkillSession(await skillsOnDisk());
    const prepared = session.prepareInput('/skill:hotfix the login bug');
    expect(prepared.text).toBe('the login bug');
    expect(prepared.injection).toBe('<skill name="hotfix">\nPage the on-call first.\n</skill>');
    expect(prepared.activated.map((a) => [a.skill.name, a.mode])).toEqual([['hotfix', 'explicit']]);
  });

  it('matched: input that fits a description injects that skill; the file list comes along', async () => {
    const session = new SkillSession(await skillsOnDisk());
    const prepared = session.prepareInput('please merge these PDF documents into one');
    expect(prepared.activated.map((a) => [a.skill.name, a.mode])).toEqual([['pdf-tools', 'matched']]);
    expect(prepared.injection).toContain('<skill name="pdf-tools">\nUse pdftk for merging.\n</skill>');
    expect(prepared.injection).toContain('- references/pdftk.md');
    expect(prepared.text).toBe('please merge these PDF documents into one');
    // A later input that matches again injects nothing new.
    expect(session.prepareInput('split the PDF documents').injection).toBeUndefined();
  });

  it('unrelated input injects nothing; matching can be turned off; user-only skills never match', async () => {
    const session = new SkillSession(await skillsOnDisk());
    expect(session.prepareInput('what time is it in Tokyo?')).toEqual({
      text: 'what time is it in Tokyo?',
      injection: undefined,
      activated: [],
      unknown: [],
    });
    expect(session.prepareInput('merge the PDF documents', { match: false }).injection).toBeUndefined();
    expect(session.prepareInput('ship an emergency hotfix to production').activated).toEqual([]);
  });

  it('explicit and matched together: explicit first, then the matches of the remaining text', async () => {
    const session = new SkillSession(await skillsOnDisk());
    const prepared = session.prepareInput('/skill:changelog and merge the PDF documents', { match: { limit: 3 } });
    expect(prepared.activated.map((a) => [a.skill.name, a.mode])).toEqual([
      ['changelog', 'explicit'],
      ['pdf-tools', 'matched'],
    ]);
    expect(prepared.injection!.indexOf('name="changelog"')).toBeLessThan(prepared.injection!.indexOf('name="pdf-tools"'));
  });

  it('unknown commands are reported, and the rest of the input still works', async () => {
    const session = new SkillSession(await skillsOnDisk());
    const prepared = session.prepareInput('/skill:changlog now');
    expect(prepared.unknown).toEqual([{ name: 'changlog', suggestion: 'changelog', message: expect.any(String) }]);
    expect(prepared.activated).toEqual([]);
  });
});

describe('allowed-tools narrows the tools while the skill is active', () => {
  const reader = fakeSkill('reader', 'Reads.', { allowedTools: ['read_file', 'bash(git status*)'] });
  const github = fakeSkill('gh', 'GitHub.', { allowedTools: ['github__*'] });
  const free = fakeSkill('free', 'No restriction declared.');
  const nothing = fakeSkill('nothing', 'Declares no tools at all.', { allowedTools: [] });

  it('nothing is narrowed until a skill that declares allowed-tools is active', () => {
    const session = new SkillSession([reader, free]);
    expect(session.allowedTools()).toBeUndefined();
    expect(session.filterTools(tools)).toEqual(tools);
    session.activate('free');
    expect(session.allowedTools()).toBeUndefined();
    expect(session.isToolAllowed('write_file')).toBe(true);
  });

  it('an active skill leaves its tools (by name, argument patterns dropped) and the harness tools', () => {
    const session = new SkillSession([reader]);
    session.activate('reader', 'model');
    expect([...session.allowedTools()!].sort()).toEqual(['bash', 'final_answer', 'load_skill', 'read_file', 'read_skill_file']);
    expect(names(session.filterTools(tools))).toEqual(['read_file', 'bash', 'load_skill', 'read_skill_file', 'final_answer']);
    expect(session.checkTool('read_file')).toEqual({ allowed: true });
    expect(session.checkTool('write_file')).toEqual({
      allowed: false,
      reason:
        'tool "write_file" is not allowed while skill "reader" is active; allowed tools: load_skill, read_skill_file, final_answer, read_file, bash',
    });
  });

  it('several narrowing skills allow the union of their lists, globs included; a skill declaring nothing lifts nothing', () => {
    const session = new SkillSession([reader, github, free]);
    session.activate('reader');
    session.activate('gh');
    session.activate('free');
    expect(names(session.filterTools(tools))).toEqual([
      'read_file',
      'bash',
      'github__search',
      'github__create_issue',
      'load_skill',
      'read_skill_file',
      'final_answer',
    ]);
    expect(session.isToolAllowed('write_file')).toBe(false);
    expect(session.checkTool('write_file')).toMatchObject({
      reason: expect.stringMatching(/^tool "write_file" is not allowed while skills "reader", "gh" are active/),
    });
  });

  it('the same tool list gets the same array back every turn until the active skills change', () => {
    const session = new SkillSession([reader, github]);
    // Not narrowed: the list itself, so per-list work downstream (tool selection, token counts) is kept.
    expect(session.filterTools(tools)).toBe(tools);
    session.activate('reader');
    const narrowed = session.filterTools(tools);
    expect(session.filterTools(tools)).toBe(narrowed);
    session.activate('gh');
    const wider = session.filterTools(tools);
    expect(wider).not.toBe(narrowed);
    expect(names(wider)).toContain('github__search');
  });

  it('an empty allowed-tools leaves only the harness tools; alwaysAllowedTools is configurable', () => {
    const session = new SkillSession([nothing], { alwaysAllowedTools: ['load_skill'] });
    session.activate('nothing');
    expect(names(session.filterTools(tools))).toEqual(['load_skill']);
  });
});
