import { describe, expect, it } from 'vitest';
import { ReinError } from '../../src/errors.js';
import { normalizeSubjectPath, parsePermissionRule } from '../../src/permissions/rule.js';

describe('parsePermissionRule', () => {
  it.each([
    ['read_file', 'read_file', undefined, 'read_file'],
    ['github__*', 'github__*', undefined, 'github__*'],
    ['*', '*', undefined, '*'],
    ['{read_file,grep}', '{read_file,grep}', undefined, '{read_file,grep}'],
    ['bash(git status*)', 'bash', 'git status*', 'bash(git status*)'],
    ['  bash ( git status* )  ', 'bash', 'git status*', 'bash(git status*)'],
    ['write_file(src/**)', 'write_file', 'src/**', 'write_file(src/**)'],
    ['bash(echo (a) b)', 'bash', 'echo (a) b', 'bash(echo (a) b)'],
    ['bash(echo ")")', 'bash', 'echo ")"', 'bash(echo ")")'],
    ['bash(npm run test:*)', 'bash', 'npm run test:*', 'bash(npm run test:*)'],
  ])('%j → tool %j, argument %j', (text, tool, argument, normalized) => {
    const rule = parsePermissionRule(text);
    expect(rule.tool).toBe(tool);
    expect(rule.argument).toBe(argument);
    expect(rule.text).toBe(normalized);
  });

  it.each([
    ['', 'it is empty'],
    ['   ', 'it is empty'],
    ['bash(git status', 'the argument pattern is not closed: end the rule with ")"'],
    ['(git status)', 'the tool name before "(" is missing'],
    ['bash()', 'the argument pattern is empty: drop the parentheses to match every call of the tool'],
    ['bash(  )', 'the argument pattern is empty'],
    ['bash(a))', 'the parentheses in the argument pattern are unbalanced'],
    ['bash((a)', 'the parentheses in the argument pattern are unbalanced'],
    ['read file', 'the tool name "read file" may only hold letters, digits, "_", "-" and the glob characters * ? [ ] { } ,'],
    ['bash:git', 'may only hold'],
    ['!bash', 'may only hold'],
    ['mcp/github', 'may only hold'],
  ])('%j is refused: %s', (text, problem) => {
    let error: unknown;
    try {
      parsePermissionRule(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ReinError);
    const { code, kind, message } = error as ReinError;
    expect({ code, kind }).toEqual({ code: 'config', kind: 'fatal' });
    expect(message).toContain(`bad permission rule ${JSON.stringify(text)}: `);
    expect(message).toContain(problem);
    // Every refusal shows what a good rule looks like.
    expect(message).toContain('"bash(git status*)"');
  });

  it('a non-string rule is refused', () => {
    expect(() => parsePermissionRule(42 as never)).toThrow(/a rule must be a string/);
  });

  it('matches names case-insensitively, exactly unless globbed', () => {
    expect(parsePermissionRule('READ_FILE').matchesTool('read_file')).toBe(true);
    expect(parsePermissionRule('read').matchesTool('read_file')).toBe(false);
    expect(parsePermissionRule('read*').matchesTool('read_file')).toBe(true);
    expect(parsePermissionRule('github__*').matchesTool('gitlab__x')).toBe(false);
  });

  it('a rule without pattern matches no argument', () => {
    const rule = parsePermissionRule('bash');
    expect(rule.matchesCommand('ls')).toBe(false);
    expect(rule.matchesPath('a')).toBe(false);
  });
});

describe('normalizeSubjectPath', () => {
  it.each([
    ['src/a.ts', 'src/a.ts', false],
    ['./src/a.ts', 'src/a.ts', false],
    ['src//x/../a.ts', 'src/a.ts', false],
    ['src\\a.ts', 'src/a.ts', false],
    ['.', '', false],
    ['../a', '../a', true],
    ['a/../../b', '../b', true],
    ['/etc/passwd', '/etc/passwd', true],
    ['C:\\Users\\x', 'C:/Users/x', true],
  ])('%j → %j (outside: %s)', (subject, path, outside) => {
    expect(normalizeSubjectPath(subject)).toEqual({ path, outside });
  });
});
