import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSkills } from '../../src/skills/load.js';
import { skillMd, tempDir, writeFiles, writeSkill } from './helpers.js';

/** A repository with a nested working directory, and a separate home. */
async function layout() {
  const base = await tempDir();
  const repo = join(base, 'repo');
  const cwd = join(repo, 'packages', 'app');
  const home = join(base, 'home');
  await mkdir(join(repo, '.git'), { recursive: true });
  await mkdir(cwd, { recursive: true });
  await mkdir(home, { recursive: true });
  return { base, repo, cwd, home };
}

describe('discovery', () => {
  it('finds skills in .rein/skills and .agents/skills from cwd up to the repo root, then in the home folder', async () => {
    const { repo, cwd, home } = await layout();
    await writeSkill(join(cwd, '.rein/skills'), 'near', 'Nearest project skill.');
    await writeSkill(join(cwd, '.agents/skills'), 'near-agents', 'Agents folder skill.');
    await writeSkill(join(repo, '.rein/skills'), 'root', 'Repository root skill.');
    await writeSkill(join(home, '.rein/skills'), 'mine', 'User skill.');
    const { skills, diagnostics } = await loadSkills({ cwd, home });
    expect(diagnostics).toEqual([]);
    expect(skills.map((s) => s.name)).toEqual(['near', 'near-agents', 'root', 'mine']);
    const near = skills[0]!;
    expect(near).toMatchObject({
      description: 'Nearest project skill.',
      disableModelInvocation: false,
      dir: join(cwd, '.rein/skills/near'),
      file: join(cwd, '.rein/skills/near/SKILL.md'),
      body: 'Do the thing step by step.',
    });
    expect(near.allowedTools).toBeUndefined();
  });

  it('does not look above the repository root', async () => {
    const { base, cwd, home } = await layout();
    await writeSkill(join(base, '.rein/skills'), 'outside', 'Above the repository.');
    const { skills } = await loadSkills({ cwd, home });
    expect(skills.map((s) => s.name)).toEqual([]);
  });

  it('outside a repository only the working directory (and home) are searched', async () => {
    const base = await tempDir();
    const cwd = join(base, 'a', 'b');
    await mkdir(cwd, { recursive: true });
    await writeSkill(join(base, 'a', '.rein/skills'), 'parent', 'In a parent folder.');
    await writeSkill(join(cwd, '.rein/skills'), 'here', 'In the working directory.');
    const { skills } = await loadSkills({ cwd, home: join(base, 'nohome') });
    expect(skills.map((s) => s.name)).toEqual(['here']);
  });

  it('a .git file (worktree, submodule) marks the repository root too', async () => {
    const base = await tempDir();
    const repo = join(base, 'wt');
    await writeFiles(repo, { '.git': 'gitdir: /elsewhere\n' });
    await writeSkill(join(repo, '.rein/skills'), 'wt-skill', 'In a worktree.');
    await writeSkill(join(base, '.rein/skills'), 'above', 'Above the worktree.');
    const cwd = join(repo, 'src');
    await mkdir(cwd);
    const { skills } = await loadSkills({ cwd, home: join(base, 'nohome') });
    expect(skills.map((s) => s.name)).toEqual(['wt-skill']);
  });

  it('extra dirs come first and win; defaults: false loads only them', async () => {
    const { cwd, home, base } = await layout();
    await writeSkill(join(cwd, '.rein/skills'), 'shared', 'Project version.');
    await writeSkill(join(base, 'extra'), 'shared', 'Extra version.');
    const all = await loadSkills({ cwd, home, dirs: [join(base, 'extra')] });
    expect(all.skills.map((s) => [s.name, s.description])).toEqual([['shared', 'Extra version.']]);
    expect(all.diagnostics).toHaveLength(1);
    expect(all.diagnostics[0]!.file).toBe(join(cwd, '.rein/skills/shared/SKILL.md'));
    const only = await loadSkills({ cwd, home, dirs: ['../../../extra'], defaults: false });
    expect(only.skills.map((s) => s.description)).toEqual(['Extra version.']);
    expect(only.diagnostics).toEqual([]);
  });

  it('follows a symlinked skill folder, and loads a home folder that is also a project folder once', async () => {
    const { base, repo } = await layout();
    await writeSkill(join(base, 'library'), 'linked', 'Shared by a link.');
    await mkdir(join(repo, '.rein/skills'), { recursive: true });
    await symlink(join(base, 'library/linked'), join(repo, '.rein/skills/linked'), 'dir');
    const { skills, diagnostics } = await loadSkills({ cwd: repo, home: repo });
    expect(skills.map((s) => s.name)).toEqual(['linked']);
    expect(diagnostics).toEqual([]);
  });

  it('ignores folders without SKILL.md and hidden folders, but reports a misnamed skill.md', async () => {
    const { cwd, home } = await layout();
    const root = join(cwd, '.rein/skills');
    await writeSkill(root, 'good', 'A good one.');
    await writeFiles(root, {
      'notes/README.md': '# not a skill',
      '.hidden/SKILL.md': skillMd('name: .hidden\ndescription: x'),
      'lower/skill.md': skillMd('name: lower\ndescription: lowercase file name'),
      'loose.md': 'a loose file',
    });
    const { skills, diagnostics } = await loadSkills({ cwd, home });
    expect(skills.map((s) => s.name)).toEqual(['good']);
    expect(diagnostics).toEqual([{ file: join(root, 'lower/skill.md'), reason: expect.stringMatching(/must be named SKILL\.md/) }]);
  });
});

describe('invalid files are reported and the rest still load', () => {
  it('a broken SKILL.md does not stop the others: each bad file gets its own reason', async () => {
    const { cwd, home } = await layout();
    const root = join(cwd, '.rein/skills');
    await writeSkill(root, 'alpha', 'First good skill.');
    await writeSkill(root, 'zulu', 'Last good skill.');
    await writeFiles(root, {
      'bad-yaml/SKILL.md': '---\nname: bad-yaml\ndescription: [unclosed\n---\nbody\n',
      'no-name/SKILL.md': skillMd('description: Has no name.'),
      'wrong-folder/SKILL.md': skillMd('name: other-name\ndescription: Name differs from folder.'),
      'long-desc/SKILL.md': skillMd(`name: long-desc\ndescription: ${'x'.repeat(1025)}`),
      'no-front/SKILL.md': '# Just markdown\n\nNo front matter here.\n',
      'unclosed/SKILL.md': '---\nname: unclosed\ndescription: never closed\n',
      'Upper/SKILL.md': skillMd('name: Upper\ndescription: Uppercase name.'),
      'empty-desc/SKILL.md': skillMd('name: empty-desc\ndescription: "   "'),
      'bad-flag/SKILL.md': skillMd('name: bad-flag\ndescription: Flag is a string.\ndisable-model-invocation: "yes"'),
      'bad-tools/SKILL.md': skillMd('name: bad-tools\ndescription: Tools is a number.\nallowed-tools: 42'),
      'list-front/SKILL.md': '---\n- a\n- b\n---\nbody\n',
      'dup-key/SKILL.md': '---\nname: dup-key\nname: dup-key\ndescription: twice\n---\nbody\n',
    });
    const { skills, diagnostics } = await loadSkills({ cwd, home });
    expect(skills.map((s) => s.name)).toEqual(['alpha', 'zulu']);
    const reasons = Object.fromEntries(diagnostics.map((d) => [d.file.slice(root.length + 1, -'/SKILL.md'.length), d.reason]));
    expect(reasons).toEqual({
      'bad-flag': expect.stringMatching(/disable-model-invocation must be true or false/),
      'bad-tools': expect.stringMatching(/allowed-tools must be a string/),
      'bad-yaml': expect.stringMatching(/invalid YAML/),
      'dup-key': expect.stringMatching(/invalid YAML/),
      'empty-desc': expect.stringMatching(/description is empty/),
      'list-front': expect.stringMatching(/must be a YAML mapping/),
      'long-desc': expect.stringMatching(/description is 1025 characters; at most 1024/),
      'no-front': expect.stringMatching(/no front matter/),
      'no-name': expect.stringMatching(/name is missing: add "name: no-name"/),
      unclosed: expect.stringMatching(/not closed/),
      Upper: expect.stringMatching(/lowercase/),
      'wrong-folder': expect.stringMatching(/must equal its folder name "wrong-folder"/),
    });
  });

  it('a SKILL.md that cannot be read is a diagnostic', async () => {
    const { cwd, home } = await layout();
    const root = join(cwd, '.rein/skills');
    await writeSkill(root, 'ok', 'Fine.');
    await mkdir(join(root, 'dangling'), { recursive: true });
    await symlink(join(root, 'nowhere.md'), join(root, 'dangling/SKILL.md'));
    await mkdir(join(root, 'is-dir/SKILL.md'), { recursive: true });
    const { skills, diagnostics } = await loadSkills({ cwd, home });
    expect(skills.map((s) => s.name)).toEqual(['ok']);
    expect(diagnostics).toEqual([
      { file: join(root, 'dangling/SKILL.md'), reason: expect.stringMatching(/not a readable file/) },
      { file: join(root, 'is-dir/SKILL.md'), reason: expect.stringMatching(/not a readable file/) },
    ]);
  });

  it('duplicates: the nearest wins and each later one is reported with the winner', async () => {
    const { repo, cwd, home } = await layout();
    await writeSkill(join(cwd, '.agents/skills'), 'dup', 'Nearest, agents folder.');
    await writeSkill(join(repo, '.rein/skills'), 'dup', 'Root.');
    await writeSkill(join(home, '.rein/skills'), 'dup', 'Home.');
    const { skills, diagnostics } = await loadSkills({ cwd, home });
    expect(skills.map((s) => s.description)).toEqual(['Nearest, agents folder.']);
    expect(diagnostics.map((d) => d.file)).toEqual([join(repo, '.rein/skills/dup/SKILL.md'), join(home, '.rein/skills/dup/SKILL.md')]);
    expect(diagnostics[0]!.reason).toContain(join(cwd, '.agents/skills/dup/SKILL.md'));
  });

  it('a skill root that is a file is reported', async () => {
    const { cwd, home } = await layout();
    await mkdir(join(cwd, '.rein'), { recursive: true });
    await writeFile(join(cwd, '.rein/skills'), 'not a folder');
    await writeSkill(join(cwd, '.agents/skills'), 'fine', 'Still loads.');
    const { skills, diagnostics } = await loadSkills({ cwd, home });
    expect(skills.map((s) => s.name)).toEqual(['fine']);
    expect(diagnostics).toEqual([{ file: join(cwd, '.rein/skills'), reason: expect.stringMatching(/cannot list the skill folder/) }]);
  });
});

describe('front matter fields', () => {
  it('reads allowed-tools as a string (spaces or commas, parentheses kept) or a list, and the invocation flag', async () => {
    const { cwd, home } = await layout();
    const root = join(cwd, '.rein/skills');
    await writeFiles(root, {
      'spaced/SKILL.md': skillMd('name: spaced\ndescription: d\nallowed-tools: read_file grep'),
      'commas/SKILL.md': skillMd('name: commas\ndescription: d\nallowed-tools: "read_file, bash(git status*), github__*"'),
      'listed/SKILL.md': skillMd(
        'name: listed\ndescription: d\nallowed-tools:\n  - read_file\n  - write_file\ndisable-model-invocation: true',
      ),
      'extras/SKILL.md': skillMd('name: extras\ndescription: d\nlicense: MIT\ncompatibility: node 20\nmetadata:\n  author: someone'),
    });
    const { skills, diagnostics } = await loadSkills({ cwd, home });
    expect(diagnostics).toEqual([]);
    const by = Object.fromEntries(skills.map((s) => [s.name, s]));
    expect(by.spaced!.allowedTools).toEqual(['read_file', 'grep']);
    expect(by.commas!.allowedTools).toEqual(['read_file', 'bash(git status*)', 'github__*']);
    expect(by.listed).toMatchObject({ allowedTools: ['read_file', 'write_file'], disableModelInvocation: true });
    expect(by.extras).toMatchObject({ disableModelInvocation: false });
    expect(by.extras!.allowedTools).toBeUndefined();
  });

  it('keeps the markdown body after the front matter, with a BOM and CRLF line ends', async () => {
    const { cwd, home } = await layout();
    await writeFiles(join(cwd, '.rein/skills'), {
      'crlf/SKILL.md': '\uFEFF---\r\nname: crlf\r\ndescription: Windows file.\r\n---\r\n\r\n# Steps\r\n\r\n1. One\r\n',
    });
    const { skills, diagnostics } = await loadSkills({ cwd, home });
    expect(diagnostics).toEqual([]);
    expect(skills[0]!.body).toBe('# Steps\r\n\r\n1. One');
  });
});
