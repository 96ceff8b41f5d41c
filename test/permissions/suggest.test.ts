import { describe, expect, it } from 'vitest';
import { createPermissionPolicy } from '../../src/permissions/policy.js';
import { suggestSessionRules } from '../../src/permissions/suggest.js';
import { all } from './helpers.js';

const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

describe('suggestSessionRules', () => {
  it.each([
    ['git push origin main', ['bash(git push)']],
    ['npm test', ['bash(npm test)']],
    ['ls -la', ['bash(ls)']],
    ['git add -A && git commit -m x', ['bash(git add)', 'bash(git commit)']],
    ['git status; git status -s', ['bash(git status)']],
    ['cat README.md', ['bash(cat)']],
    ['echo $(whoami)', []],
    ['echo hi > out.txt', []],
    ['FOO=1 make', []],
  ])('for the command %j: %j', (command, rules) => {
    expect(suggestSessionRules(call('bash', { command }), all.bash!)).toEqual(rules);
  });

  it('a path tool gets the exact path; outside the workspace nothing', () => {
    expect(suggestSessionRules(call('write_file', { path: './src/a.ts' }), all.write_file!)).toEqual(['write_file(src/a.ts)']);
    expect(suggestSessionRules(call('write_file', { path: '../x' }), all.write_file!)).toEqual([]);
  });

  it('a tool without subject gets its name', () => {
    expect(suggestSessionRules(call('github__create_issue', { title: 'x' }), all.github__create_issue!)).toEqual(['github__create_issue']);
    expect(suggestSessionRules(call('bash', {}), all.bash!)).toEqual(['bash']);
  });

  it('the suggested rules allow the call they came from, and no more', () => {
    const policy = createPermissionPolicy({});
    const asked = call('bash', { command: 'git add -A && git commit -m "wip"' });
    for (const rule of suggestSessionRules(asked, all.bash!)) policy.allowForSession(rule);
    expect(policy.decide(asked, all.bash)).toMatchObject({
      decision: 'allow',
      rule: 'session: allow bash(git add), session: allow bash(git commit)',
    });
    expect(policy.decide(call('bash', { command: 'git push' }), all.bash).decision).toBe('ask');
  });
});
