// The policy table for modes and session rules.
import { describe, expect, it } from 'vitest';
import { ReinError } from '../../src/errors.js';
import { createPermissionPolicy } from '../../src/permissions/policy.js';
import { all, at, cmd, table } from './helpers.js';

describe('modes', () => {
  table([
    ['plan: reads run', { mode: 'plan' }, 'read_file', at('a.ts'), 'allow', 'default: risk read allows'],
    [
      'plan: writes are denied whatever allow rules say',
      { mode: 'plan', allow: ['write_file'] },
      'write_file',
      at('a.ts'),
      'deny',
      'mode plan: no side effects',
    ],
    [
      'plan: the shell is denied, even allowed commands',
      { mode: 'plan', allow: ['bash(git status*)'] },
      'bash',
      cmd('git status'),
      'deny',
      'mode plan: no side effects',
    ],
    [
      'plan: unknown risk is denied',
      { mode: 'plan', allow: ['github__*'] },
      'github__create_issue',
      {},
      'deny',
      'mode plan: no side effects',
    ],
    [
      'plan: deny rules still deny reads',
      { mode: 'plan', deny: ['read_file(.env)'] },
      'read_file',
      at('.env'),
      'deny',
      'deny read_file(.env)',
    ],
    ['plan: ask rules still ask for reads', { mode: 'plan', ask: ['read_file'] }, 'read_file', at('a.ts'), 'ask', 'ask read_file'],
    [
      'plan: a write without checkable arguments is denied, not asked',
      { mode: 'plan', deny: ['write_file(.env)'] },
      'write_file',
      {},
      'deny',
      'mode plan: no side effects',
    ],
    ['acceptEdits: writes are allowed', { mode: 'acceptEdits' }, 'write_file', at('a.ts'), 'allow', 'mode acceptEdits: risk write allows'],
    ['acceptEdits: the shell still asks', { mode: 'acceptEdits' }, 'bash', cmd('ls'), 'ask', 'default: risk execute asks'],
    ['acceptEdits: unknown risk still asks', { mode: 'acceptEdits' }, 'github__create_issue', {}, 'ask', 'default: unknown risk asks'],
    [
      'acceptEdits: ask rules still ask',
      { mode: 'acceptEdits', ask: ['write_file(package.json)'] },
      'write_file',
      at('package.json'),
      'ask',
      'ask write_file(package.json)',
    ],
    [
      'acceptEdits: deny rules still deny',
      { mode: 'acceptEdits', deny: ['edit_file(.env)'] },
      'edit_file',
      at('.env'),
      'deny',
      'deny edit_file(.env)',
    ],
    [
      'acceptEdits: wins over a configured write default',
      { mode: 'acceptEdits', defaults: { write: 'deny' } },
      'edit_file',
      at('a'),
      'allow',
      'mode acceptEdits: risk write allows',
    ],
    ['yolo: the shell runs', { mode: 'yolo' }, 'bash', cmd('rm -rf build'), 'allow', 'mode yolo: allow all'],
    ['yolo: ask rules are skipped', { mode: 'yolo', ask: ['bash'] }, 'bash', cmd('git push'), 'allow', 'mode yolo: allow all'],
    ['yolo: deny rules still deny', { mode: 'yolo', deny: ['bash(rm*)'] }, 'bash', cmd('rm -rf /'), 'deny', 'deny bash(rm*)'],
    ['yolo: unknown risk runs', { mode: 'yolo' }, 'github__create_issue', {}, 'allow', 'mode yolo: allow all'],
    ['default mode is the default', { mode: 'default' }, 'write_file', at('a'), 'ask', 'default: risk write asks'],
  ]);

  it('yolo is exposed for a loud banner, naming the deny rules that still apply', () => {
    const yolo = createPermissionPolicy({ mode: 'yolo', deny: ['bash(rm*)'] });
    expect(yolo.isYolo).toBe(true);
    expect(yolo.describe()).toBe('YOLO MODE: EVERY TOOL CALL RUNS WITHOUT ASKING. Only the deny rules still refuse: bash(rm*).');
    expect(createPermissionPolicy({ mode: 'yolo' }).describe()).toMatch(/No deny rule is set: nothing is refused\.$/);
    expect(createPermissionPolicy({}).isYolo).toBe(false);
  });

  it('describe() sums up every mode and the rules', () => {
    expect(createPermissionPolicy({}).describe()).toBe('permissions: mode default (reads run, edits ask, commands ask); no rules');
    expect(createPermissionPolicy({ mode: 'acceptEdits', allow: ['bash(git status*)'], deny: ['read_file(.env)'] }).describe()).toBe(
      'permissions: mode acceptEdits (reads run, edits run, commands ask); deny: read_file(.env); allow: bash(git status*)',
    );
    expect(createPermissionPolicy({ mode: 'plan', ask: ['grep'] }).describe()).toBe(
      'permissions: mode plan (only read-only tools run; everything else is refused); ask: grep',
    );
  });

  it('mode names forgive case and separators, and a bad one is a config error', () => {
    expect(createPermissionPolicy({ mode: 'accept-edits' as never }).mode).toBe('acceptEdits');
    expect(createPermissionPolicy({ mode: 'PLAN' as never }).mode).toBe('plan');
    expect(() => createPermissionPolicy({ mode: 'auto' as never })).toThrow(
      /unknown permission mode "auto": use one of default, acceptEdits, plan, yolo/,
    );
  });
});

describe('session rules', () => {
  it('allowForSession allows what was asked before, naming the session rule', () => {
    const policy = createPermissionPolicy({});
    const push = { name: 'bash', arguments: cmd('git push origin main') };
    expect(policy.decide(push, all.bash).decision).toBe('ask');
    policy.allowForSession('bash(git push*)');
    expect(policy.decide(push, all.bash)).toMatchObject({ decision: 'allow', rule: 'session: allow bash(git push*)' });
    expect(policy.decide({ name: 'bash', arguments: cmd('git pull') }, all.bash).decision).toBe('ask');
  });

  it('a session rule outranks an ask rule', () => {
    const policy = createPermissionPolicy({ ask: ['bash(git push*)'] });
    policy.allowForSession('bash(git push*)');
    expect(policy.decide({ name: 'bash', arguments: cmd('git push') }, all.bash)).toMatchObject({
      decision: 'allow',
      rule: 'session: allow bash(git push*)',
    });
  });

  it('a session rule without pattern outranks an ask rule with one', () => {
    const policy = createPermissionPolicy({ ask: ['github__*'] });
    policy.allowForSession('github__create_issue');
    expect(policy.decide({ name: 'github__create_issue', arguments: {} }, all.github__create_issue)).toMatchObject({ decision: 'allow' });
    expect(policy.decide({ name: 'github__search', arguments: {} }, all.github__search)).toMatchObject({ decision: 'ask' });
  });

  it('a session rule outranks an ask only for the parts it allows', () => {
    const policy = createPermissionPolicy({ allow: ['bash'], ask: ['bash(rm*)', 'bash(git push*)'] });
    policy.allowForSession('bash(git push*)');
    expect(policy.decide({ name: 'bash', arguments: cmd('git push && rm x') }, all.bash)).toMatchObject({
      decision: 'ask',
      rule: 'ask bash(rm*)',
    });
    expect(policy.decide({ name: 'bash', arguments: cmd('git status && git push') }, all.bash)).toMatchObject({
      decision: 'allow',
      rule: 'session: allow bash(git push*)',
    });
  });

  it('a session rule joins configured allow rules to cover a compound command', () => {
    const policy = createPermissionPolicy({ allow: ['bash(git status*)'] });
    policy.allowForSession('bash(git push*)');
    expect(policy.decide({ name: 'bash', arguments: cmd('git status && git push') }, all.bash)).toMatchObject({
      decision: 'allow',
      rule: 'allow bash(git status*), session: allow bash(git push*)',
    });
  });

  it('a session rule never outranks a deny rule or plan mode', () => {
    const denied = createPermissionPolicy({ deny: ['bash(git push*)'] });
    denied.allowForSession('bash');
    expect(denied.decide({ name: 'bash', arguments: cmd('git push') }, all.bash).decision).toBe('deny');
    const plan = createPermissionPolicy({ mode: 'plan' });
    plan.allowForSession('write_file');
    expect(plan.decide({ name: 'write_file', arguments: at('a') }, all.write_file)).toMatchObject({
      decision: 'deny',
      rule: 'mode plan: no side effects',
    });
  });

  it('denyForSession denies from then on', () => {
    const policy = createPermissionPolicy({ allow: ['read_file'] });
    policy.denyForSession('read_file(notes/private.md)');
    expect(policy.decide({ name: 'read_file', arguments: at('notes/private.md') }, all.read_file)).toMatchObject({
      decision: 'deny',
      rule: 'session: deny read_file(notes/private.md)',
    });
    expect(policy.decide({ name: 'read_file', arguments: at('notes/public.md') }, all.read_file).decision).toBe('allow');
  });

  it('a bad session rule is refused and changes nothing', () => {
    const policy = createPermissionPolicy({});
    expect(() => policy.allowForSession('bash(git push')).toThrow(ReinError);
    expect(policy.toJSON().sessionAllow).toEqual([]);
  });

  it('toJSON shows configured and session rules apart', () => {
    const policy = createPermissionPolicy({
      mode: 'acceptEdits',
      allow: [' bash ( git status* ) '],
      ask: ['github__*'],
      deny: ['read_file(.env)'],
      defaults: { execute: 'deny' },
    });
    policy.allowForSession('grep');
    policy.denyForSession('bash(rm*)');
    expect(JSON.parse(JSON.stringify(policy))).toEqual({
      mode: 'acceptEdits',
      allow: ['bash(git status*)'],
      ask: ['github__*'],
      deny: ['read_file(.env)'],
      sessionAllow: ['grep'],
      sessionDeny: ['bash(rm*)'],
      defaults: { read: 'allow', write: 'ask', execute: 'deny', unknown: 'ask' },
    });
  });
});
