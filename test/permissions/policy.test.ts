import { describe, expect, it } from 'vitest';
import { ReinError } from '../../src/errors.js';
import { createPermissionPolicy } from '../../src/permissions/policy.js';
import { all, at, cmd, decide, table } from './helpers.js';

describe('defaults by risk', () => {
  table([
    ['a read tool is allowed', {}, 'read_file', at('a.ts'), 'allow', 'default: risk read allows'],
    ['a write tool asks', {}, 'write_file', at('a.ts'), 'ask', 'default: risk write asks'],
    ['the shell asks', {}, 'bash', cmd('ls'), 'ask', 'default: risk execute asks'],
    ['a tool declaring no risk asks', {}, 'github__create_issue', {}, 'ask', 'default: unknown risk asks'],
    ['an unregistered tool is denied', {}, 'delete_everything', {}, 'deny', 'unknown tool'],
    [
      'defaults can be changed: execute denies',
      { defaults: { execute: 'deny' } },
      'bash',
      cmd('ls'),
      'deny',
      'default: risk execute denies',
    ],
    ['defaults can be changed: reads ask', { defaults: { read: 'ask' } }, 'read_file', at('a.ts'), 'ask', 'default: risk read asks'],
    [
      'defaults can be changed: unknown allows',
      { defaults: { unknown: 'allow' } },
      'github__create_issue',
      {},
      'allow',
      'default: unknown risk allows',
    ],
  ]);

  it('an unregistered tool is denied whatever the rules and mode say', () => {
    const policy = createPermissionPolicy({ mode: 'yolo', allow: ['*'] });
    expect(policy.decide({ name: 'nope', arguments: {} }, undefined)).toEqual({
      decision: 'deny',
      rule: 'unknown tool',
      reason: 'there is no tool named "nope"; call one of the tools you were given',
    });
  });
});

describe('precedence: deny, then ask, then allow, whatever the order written', () => {
  table([
    [
      'deny beats an allow of the whole tool',
      { allow: ['bash'], deny: ['bash(rm *)'] },
      'bash',
      cmd('rm -rf build'),
      'deny',
      'deny bash(rm *)',
    ],
    [
      'ask beats an allow of the whole tool',
      { allow: ['bash'], ask: ['bash(git push*)'] },
      'bash',
      cmd('git push origin main'),
      'ask',
      'ask bash(git push*)',
    ],
    ['deny beats ask', { ask: ['bash'], deny: ['bash(rm*)'] }, 'bash', cmd('rm x'), 'deny', 'deny bash(rm*)'],
    [
      'the first matching deny is named',
      { deny: ['bash(git push --force*)', 'bash(git push*)'] },
      'bash',
      cmd('git push --force'),
      'deny',
      'deny bash(git push --force*)',
    ],
    [
      'a later deny matches what an earlier one does not',
      { deny: ['bash(git push --force*)', 'bash(git push*)'] },
      'bash',
      cmd('git push'),
      'deny',
      'deny bash(git push*)',
    ],
    [
      'the first matching allow is named',
      { allow: ['bash(git*)', 'bash(git status*)'] },
      'bash',
      cmd('git status'),
      'allow',
      'allow bash(git*)',
    ],
    [
      'an allow applies when nothing else does',
      { allow: ['bash(git status*)'] },
      'bash',
      cmd('git status -s'),
      'allow',
      'allow bash(git status*)',
    ],
    ['a deny of a read tool overrides its default', { deny: ['read_file'] }, 'read_file', at('a.ts'), 'deny', 'deny read_file'],
    ['an ask of a read tool overrides its default', { ask: ['read_file'] }, 'read_file', at('a.ts'), 'ask', 'ask read_file'],
  ]);
});

describe('tool-name globs', () => {
  table([
    ['an MCP server glob matches its tools', { allow: ['github__*'] }, 'github__create_issue', {}, 'allow', 'allow github__*'],
    ['an MCP server glob leaves other servers alone', { allow: ['github__*'] }, 'memory__write', {}, 'ask', 'default: risk write asks'],
    ['* matches every tool', { deny: ['*'] }, 'read_file', at('a.ts'), 'deny', 'deny *'],
    ['braces list alternatives', { ask: ['{read_file,grep}'] }, 'grep', at('a.ts'), 'ask', 'ask {read_file,grep}'],
    ['? matches one character', { deny: ['gre?'] }, 'grep', at('a.ts'), 'deny', 'deny gre?'],
    ['names match regardless of case', { deny: ['Bash'] }, 'bash', cmd('ls'), 'deny', 'deny Bash'],
    ['a name without glob is exact', { deny: ['read'] }, 'read_file', at('a.ts'), 'allow', 'default: risk read allows'],
    [
      'a glob over a server with patterns on another tool',
      { allow: ['github__*'], deny: ['github__search'] },
      'github__search',
      {},
      'deny',
      'deny github__search',
    ],
  ]);
});

describe('path patterns (file tools)', () => {
  table([
    [
      'a folder glob allows a file inside',
      { allow: ['write_file(src/**)'] },
      'write_file',
      at('src/a/b.ts'),
      'allow',
      'allow write_file(src/**)',
    ],
    [
      'a folder glob leaves other folders alone',
      { allow: ['write_file(src/**)'] },
      'write_file',
      at('test/a.ts'),
      'ask',
      'default: risk write asks',
    ],
    ['a leading ./ is ignored', { allow: ['write_file(src/**)'] }, 'write_file', at('./src/a.ts'), 'allow', 'allow write_file(src/**)'],
    [
      '.. is resolved before matching',
      { allow: ['write_file(src/**)'] },
      'write_file',
      at('src/../secrets/key'),
      'ask',
      'default: risk write asks',
    ],
    [
      'a path outside the workspace is never allowed by a path rule',
      { allow: ['write_file(**)'] },
      'write_file',
      at('../other/a.ts'),
      'ask',
      'default: risk write asks',
    ],
    [
      'an absolute path is never allowed by a path rule',
      { allow: ['write_file(*)'] },
      'write_file',
      at('/etc/passwd'),
      'ask',
      'default: risk write asks',
    ],
    ['* alone allows any path inside', { allow: ['write_file(*)'] }, 'write_file', at('a/b/c.txt'), 'allow', 'allow write_file(*)'],
    [
      'dot files are matched by globs',
      { allow: ['write_file(src/**)'] },
      'write_file',
      at('src/.hidden/x'),
      'allow',
      'allow write_file(src/**)',
    ],
    ['a pattern without / matches at the top', { deny: ['read_file(.env)'] }, 'read_file', at('.env'), 'deny', 'deny read_file(.env)'],
    [
      'a pattern without / matches at any depth',
      { deny: ['read_file(.env)'] },
      'read_file',
      at('config/prod/.env'),
      'deny',
      'deny read_file(.env)',
    ],
    [
      'a pattern without / matches whole names only',
      { deny: ['read_file(.env)'] },
      'read_file',
      at('.env.example'),
      'allow',
      'default: risk read allows',
    ],
    [
      'an extension glob matches at any depth',
      { deny: ['read_file(*.pem)'] },
      'read_file',
      at('certs/server.pem'),
      'deny',
      'deny read_file(*.pem)',
    ],
    [
      'a leading / anchors at the workspace root',
      { deny: ['read_file(/secrets)'] },
      'read_file',
      at('secrets/key'),
      'deny',
      'deny read_file(/secrets)',
    ],
    [
      'an anchored pattern leaves deeper folders alone',
      { deny: ['read_file(/secrets)'] },
      'read_file',
      at('app/secrets/key'),
      'allow',
      'default: risk read allows',
    ],
    [
      'a pattern with / is anchored',
      { deny: ['read_file(config/*.json)'] },
      'read_file',
      at('app/config/a.json'),
      'allow',
      'default: risk read allows',
    ],
    ['a trailing / names a folder', { deny: ['read_file(secrets/)'] }, 'read_file', at('secrets/a/b'), 'deny', 'deny read_file(secrets/)'],
    [
      'a folder name covers what is inside it',
      { allow: ['edit_file(docs)'] },
      'edit_file',
      at('docs/guide/intro.md'),
      'allow',
      'allow edit_file(docs)',
    ],
    ['deny rules see through ../', { deny: ['read_file(.env)'] }, 'read_file', at('../.env'), 'deny', 'deny read_file(.env)'],
    [
      'backslashes are separators',
      { allow: ['write_file(src/**)'] },
      'write_file',
      at('src\\win\\a.ts'),
      'allow',
      'allow write_file(src/**)',
    ],
    [
      'a rule with a pattern never matches a tool without permissionSubject',
      { allow: ['github__create_issue(repo/*)'] },
      'github__create_issue',
      { repo: 'repo/x' },
      'ask',
      'default: unknown risk asks',
    ],
    [
      'nor does a deny rule with a pattern',
      { deny: ['github__search(*)'] },
      'github__search',
      { q: 'x' },
      'allow',
      'default: risk read allows',
    ],
    [
      'arguments naming no path cannot pass a deny rule with a pattern',
      { deny: ['read_file(.env)'] },
      'read_file',
      { file: '.env' },
      'ask',
      'unchecked: deny read_file(.env)',
    ],
  ]);

  it('says why a path outside the workspace was not allowed', () => {
    expect(decide({ allow: ['write_file(**)'] }, 'write_file', at('../x')).reason).toBe(
      'tools that change files need a person\'s approval unless a rule says otherwise ("../x" is outside the workspace, and no path rule allows that)',
    );
  });
});

describe('verdicts a model and a person can read', () => {
  it('a deny names the rule and the subject and says what to do', () => {
    expect(decide({ deny: ['bash(rm *)'] }, 'bash', cmd('rm -rf build'))).toEqual({
      decision: 'deny',
      rule: 'deny bash(rm *)',
      reason: 'the rule "deny bash(rm *)" refuses this call for "rm -rf build"; do it another way or ask the user',
    });
  });

  it('an ask names the rule', () => {
    expect(decide({ ask: ['write_file(package.json)'] }, 'write_file', at('package.json')).reason).toBe(
      'the rule "ask write_file(package.json)" needs a person\'s approval for "package.json"',
    );
  });

  it('plan mode tells the model what to do instead', () => {
    expect(decide({ mode: 'plan' }, 'write_file', at('a')).reason).toBe(
      'plan mode runs only read-only tools; describe the change you would make instead of making it',
    );
  });

  it('a long subject is cut in the reason', () => {
    const { reason } = decide({ deny: ['bash(echo*)'] }, 'bash', cmd(`echo ${'x'.repeat(500)}`));
    expect(reason.length).toBeLessThan(220);
    expect(reason).toContain('..."');
  });
});

describe('bad configuration', () => {
  it('a bad rule in any list is a config error naming it', () => {
    for (const list of ['allow', 'ask', 'deny'] as const) {
      let error: unknown;
      try {
        createPermissionPolicy({ [list]: ['read_file', 'bash(git status'] });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ReinError);
      expect(error).toMatchObject({
        code: 'config',
        kind: 'fatal',
        message: expect.stringContaining('bad permission rule "bash(git status"'),
      });
    }
  });

  it('bad defaults are config errors', () => {
    expect(() => createPermissionPolicy({ defaults: { write: 'maybe' as never } })).toThrow(
      /permission default for write is "maybe": use allow, ask or deny/,
    );
    expect(() => createPermissionPolicy({ defaults: { network: 'deny' } as never })).toThrow(/unknown risk "network"/);
  });
});

describe('cost', () => {
  it('decides thousands of calls quickly, rules compiled once', () => {
    const policy = createPermissionPolicy({
      allow: ['bash(git status*)', 'bash(git diff*)', 'write_file(src/**)', 'github__*'],
      ask: ['bash(git push*)'],
      deny: ['bash(rm *)', 'read_file(.env)', 'write_file(*.pem)'],
    });
    const calls = [
      { name: 'bash', arguments: cmd('git status && git diff --stat | head') },
      { name: 'write_file', arguments: at('src/a/b.ts') },
      { name: 'read_file', arguments: at('README.md') },
      { name: 'github__create_issue', arguments: {} },
    ];
    const started = performance.now();
    for (let i = 0; i < 20_000; i++) {
      const call = calls[i % calls.length]!;
      policy.decide(call, all[call.name]);
    }
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
