import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProjectRules } from '../../src/context/rules.js';
import { setup } from '../loop/helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A temp tree: `files` maps relative paths to contents (a `null` content makes a directory). */
async function tree(files: Record<string, string | null>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'rein-rules-'));
  dirs.push(root);
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    if (content === null) {
      await mkdir(full, { recursive: true });
      continue;
    }
    await mkdir(join(full, '..'), { recursive: true });
    await writeFile(full, content);
  }
  return root;
}

describe('loadProjectRules', () => {
  it('reads AGENTS.md from the repo root down to cwd, outermost first so nearer rules come last', async () => {
    const root = await tree({
      '.git': null,
      'AGENTS.md': 'ROOT: use tabs',
      'packages/AGENTS.md': 'PACKAGES: run npm test',
      'packages/api/AGENTS.md': 'API: use spaces',
      'packages/api/src/x.ts': '',
      'packages/web/AGENTS.md': 'WEB: not on the way down',
    });
    const cwd = join(root, 'packages', 'api', 'src');
    const rules = await loadProjectRules({ cwd, home: false });
    expect(rules.files).toEqual([join(root, 'AGENTS.md'), join(root, 'packages/AGENTS.md'), join(root, 'packages/api/AGENTS.md')]);
    expect(rules.diagnostics).toEqual([]);
    const order = ['ROOT: use tabs', 'PACKAGES: run npm test', 'API: use spaces'].map((t) => rules.text.indexOf(t));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(rules.text).not.toContain('WEB');
    // Each file under a header naming its path from the repository root.
    expect(rules.text).toContain('## AGENTS.md\n\nROOT: use tabs');
    expect(rules.text).toContain('## packages/api/AGENTS.md\n\nAPI: use spaces');
    expect(rules.text).toMatch(/^# Project rules/);
  });

  it('reads CLAUDE.md too, after the AGENTS.md of the same directory', async () => {
    const root = await tree({ '.git': null, 'CLAUDE.md': 'from claude', 'AGENTS.md': 'from agents', 'sub/CLAUDE.md': 'nested claude' });
    const rules = await loadProjectRules({ cwd: join(root, 'sub'), home: false });
    expect(rules.files).toEqual([join(root, 'AGENTS.md'), join(root, 'CLAUDE.md'), join(root, 'sub/CLAUDE.md')]);
    expect(rules.text.indexOf('from agents')).toBeLessThan(rules.text.indexOf('from claude'));
    expect(rules.text.indexOf('from claude')).toBeLessThan(rules.text.indexOf('nested claude'));
  });

  it('puts the user rules from ~/.rein/AGENTS.md first', async () => {
    const home = await tree({ '.rein/AGENTS.md': 'USER: answer in English' });
    const root = await tree({ '.git': null, 'AGENTS.md': 'PROJECT: answer in French' });
    const rules = await loadProjectRules({ cwd: root, home });
    expect(rules.files).toEqual([join(home, '.rein/AGENTS.md'), join(root, 'AGENTS.md')]);
    expect(rules.text).toContain('## ~/.rein/AGENTS.md\n\nUSER: answer in English');
    expect(rules.text.indexOf('USER')).toBeLessThan(rules.text.indexOf('PROJECT'));
  });

  it('includes a CLAUDE.md symlinked to AGENTS.md once, and the same text in two places once', async () => {
    const root = await tree({
      '.git': null,
      'AGENTS.md': 'shared rules',
      'sub/AGENTS.md': 'shared rules',
      'sub/deeper/AGENTS.md': 'own rules',
    });
    await symlink('AGENTS.md', join(root, 'CLAUDE.md'));
    const rules = await loadProjectRules({ cwd: join(root, 'sub', 'deeper'), home: false });
    expect(rules.text.split('shared rules')).toHaveLength(2);
    expect(rules.text).toContain('## AGENTS.md\n\nshared rules');
    expect(rules.files).toEqual([join(root, 'AGENTS.md'), join(root, 'sub/deeper/AGENTS.md')]);
    expect(rules.diagnostics).toEqual([]);
  });

  it('reports a file it cannot read and still loads the others', async () => {
    const root = await tree({ '.git': null, 'AGENTS.md': 'root rules', 'a/AGENTS.md': null, 'a/b/c/AGENTS.md': 'nearest rules' });
    await symlink('missing.md', join(root, 'a', 'CLAUDE.md'));
    // A link to itself cannot be read by anyone, root included (ELOOP).
    await mkdir(join(root, 'a', 'b'), { recursive: true });
    await symlink('AGENTS.md', join(root, 'a', 'b', 'AGENTS.md'));
    const rules = await loadProjectRules({ cwd: join(root, 'a', 'b', 'c'), home: false });
    expect(rules.files).toEqual([join(root, 'AGENTS.md'), join(root, 'a/b/c/AGENTS.md')]);
    expect(rules.text).toContain('root rules');
    expect(rules.text).toContain('nearest rules');
    const reasons = Object.fromEntries(rules.diagnostics.map((d) => [d.file, d.reason]));
    expect(Object.keys(reasons)).toHaveLength(3);
    expect(reasons[join(root, 'a/AGENTS.md')]).toMatch(/is a directory/);
    expect(reasons[join(root, 'a/CLAUDE.md')]).toMatch(/symbolic link to a file that does not exist/);
    expect(reasons[join(root, 'a/b/AGENTS.md')]).toMatch(/symbolic link that leads back to itself/);
  });

  it('without a repository reads only cwd', async () => {
    const outer = await tree({ 'AGENTS.md': 'outside any repository', 'work/AGENTS.md': 'here' });
    const rules = await loadProjectRules({ cwd: join(outer, 'work'), home: false });
    expect(rules.files).toEqual([join(outer, 'work/AGENTS.md')]);
    expect(rules.text).toContain('## AGENTS.md\n\nhere');
    expect(rules.text).not.toContain('outside any repository');
  });

  it('treats a .git file (a worktree) as the repository root', async () => {
    const root = await tree({ '.git': 'gitdir: /elsewhere', 'AGENTS.md': 'worktree root rules', 'pkg/AGENTS.md': 'pkg rules' });
    const rules = await loadProjectRules({ cwd: join(root, 'pkg'), home: false });
    expect(rules.files).toEqual([join(root, 'AGENTS.md'), join(root, 'pkg/AGENTS.md')]);
  });

  it('cuts a file over the size cap with a note and a diagnostic', async () => {
    const root = await tree({ '.git': null, 'AGENTS.md': 'r'.repeat(5_000) });
    const rules = await loadProjectRules({ cwd: root, home: false, maxFileChars: 1_000 });
    expect(rules.text).toContain(`${'r'.repeat(1_000)}\n[cut: only the first 1,000 of 5,000 characters of this file are included]`);
    expect(rules.text).not.toContain('r'.repeat(1_001));
    expect(rules.diagnostics).toEqual([{ file: join(root, 'AGENTS.md'), reason: expect.stringMatching(/longer than 1000 characters/) }]);
  });

  it('returns empty text when there are no rules, and skips empty files', async () => {
    const root = await tree({ '.git': null, 'AGENTS.md': '  \n\n' });
    expect(await loadProjectRules({ cwd: root, home: false })).toEqual({ text: '', files: [], diagnostics: [] });
  });

  it('AGENTS.md rules reach the system layer of a model request', async () => {
    const root = await tree({ '.git': null, 'AGENTS.md': 'Always answer with the word PINEAPPLE.' });
    const rules = await loadProjectRules({ cwd: root, home: false });
    const { server, agent } = await setup([{ text: 'PINEAPPLE' }], { system: ['You are a helpful agent.', rules.text].join('\n\n') });
    const result = await agent.run('hello');
    expect(result.reason).toBe('final_answer');
    const system = server.received[0]?.request?.system ?? '';
    expect(system).toContain('You are a helpful agent.');
    expect(system).toContain('## AGENTS.md\n\nAlways answer with the word PINEAPPLE.');
    // Rules are system instructions, never a user message.
    expect(JSON.stringify(server.received[0]?.request?.messages)).not.toContain('PINEAPPLE');
  });
});
