// rein's and git's own files are never written by the file tools without a question, in
// every mode but yolo: through the real workspace tools and the real policy.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPermissionPolicy, type PermissionOptions } from '../../src/permissions/policy.js';
import { createWorkspaceTools } from '../../src/workspace/index.js';
import { protectedReason } from '../../src/workspace/protected-paths.js';

const root = mkdtempSync(join(tmpdir(), 'rein-protected-'));
mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
mkdirSync(join(root, 'src'));
symlinkSync(join(root, '.git', 'hooks'), join(root, 'hooks-link'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const tools = Object.fromEntries(createWorkspaceTools({ root, tools: ['write_file', 'edit_file'] }).map((t) => [t.name, t]));

const PROTECTED = [
  '.rein/settings.json',
  '.rein/agents/helper.md',
  '.rein/skills/deploy/SKILL.md',
  'sub/.rein/settings.json',
  '.mcp.json',
  'packages/app/.mcp.json',
  'AGENTS.md',
  'docs/CLAUDE.md',
  '.agents/skills/x/SKILL.md',
  '.claude/settings.json',
  '.git/hooks/pre-commit',
  '.git/config',
  'hooks-link/post-checkout',
  './.rein/../.rein/settings.json',
];
const PLAIN = ['src/index.ts', 'README.md', 'docs/agents.md', '.github/CODEOWNERS', 'rein/settings.json', '.gitignore'];

const MODES: Array<[string, PermissionOptions]> = [
  ['default', {}],
  ['acceptEdits', { mode: 'acceptEdits' }],
  ['default with allow write_file', { allow: ['write_file', 'edit_file'] }],
  ['acceptEdits with allow *', { mode: 'acceptEdits', allow: ['*'] }],
];

describe('protected paths', () => {
  for (const [mode, options] of MODES) {
    it.each(PROTECTED)(`${mode}: writing %j asks`, (path) => {
      const policy = createPermissionPolicy(options);
      for (const name of ['write_file', 'edit_file']) {
        const verdict = policy.decide({ name, arguments: { path, content: '{}', old_text: 'a', new_text: 'b' } }, tools[name]);
        expect(verdict).toMatchObject({ decision: 'ask', rule: 'protected path' });
      }
    });
  }

  it.each(PROTECTED)('yolo: writing %j runs (the person chose yolo)', (path) => {
    const verdict = createPermissionPolicy({ mode: 'yolo' }).decide(
      { name: 'write_file', arguments: { path, content: '' } },
      tools.write_file,
    );
    expect(verdict.decision).toBe('allow');
  });

  it.each(PLAIN)('acceptEdits: writing %j runs', (path) => {
    const verdict = createPermissionPolicy({ mode: 'acceptEdits' }).decide(
      { name: 'write_file', arguments: { path, content: '' } },
      tools.write_file,
    );
    expect(verdict.decision).toBe('allow');
  });

  it('deny rules and plan mode still refuse a protected path first', () => {
    const args = { path: '.rein/settings.json', content: '' };
    expect(
      createPermissionPolicy({ deny: ['write_file(.rein)'] }).decide({ name: 'write_file', arguments: args }, tools.write_file).decision,
    ).toBe('deny');
    expect(createPermissionPolicy({ mode: 'plan' }).decide({ name: 'write_file', arguments: args }, tools.write_file).decision).toBe(
      'deny',
    );
  });

  it("the reason names the file and what it is; the user's rein folder is protected from any workspace", () => {
    const verdict = createPermissionPolicy({ mode: 'acceptEdits' }).decide(
      { name: 'write_file', arguments: { path: '.mcp.json', content: '' } },
      tools.write_file,
    );
    expect(verdict.reason).toMatch(/"\.mcp\.json" is MCP servers rein starts/);
    expect(protectedReason('x/settings.json', '/home/u/.rein', '/home/u')).toMatch(/user's rein folder/);
    expect(protectedReason('project/a.ts', '/home/u', '/home/u')).toBeUndefined();
  });
});
