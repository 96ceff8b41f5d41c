// The shell command analysis fails closed: each way found to talk a rule around, through
// the real policy. A command whose words cannot be read as literals is opaque: it asks in
// `default`, and in `yolo` a deny rule of the shell refuses it.
import { describe, expect, it } from 'vitest';
import { analyzeCommand } from '../../src/permissions/command.js';
import { cmd, decide } from './helpers.js';

const DENY_RM = { deny: ['bash(rm *)'] };

/** [command, what it does in bash] — each runs `rm` (or may) while hiding it from a prefix rule. */
const DENY_BYPASSES: Array<[string, string]> = [
  // The seven of the issue.
  ["$'\\x72m' -rf x", 'ANSI-C quoting spells rm'],
  ['a=rm; $a -rf x', 'a variable in command position'],
  ['coproc rm -rf x', 'coproc runs its command'],
  ['function f { rm -rf x; }; f', 'a function body'],
  ['alias l=rm; l x', 'an alias'],
  ['rm${IFS}-rf x', '$IFS splits the word'],
  ['ls; coproc rm -rf x', 'coproc after another command'],
  // Found on the way.
  ['f() { rm -rf x; }; f', 'a function definition, POSIX form'],
  ['$(echo rm) -rf x', 'a substitution in command position'],
  ['`echo rm` -rf x', 'backquotes in command position'],
  ['eval "r""m -rf x"', 'eval of a quoted string'],
  ['x=r; ${x}m -rf x', 'an expansion joined to a word'],
  ['{rm,-rf,x}', 'brace expansion makes the words'],
  ['/bin/r? -rf x', 'a glob in command position'],
  ['/usr/bin/r[m] -rf x', 'a bracket glob in command position'],
  ['r\\\nm -rf x', 'a backslash-newline joins the word'],
  ['<in rm -rf x', 'an input redirection before the command'],
  ['echo rm -rf x | sh', 'a shell reading its input'],
  ['bash <<EOF\nrm -rf x\nEOF', 'a here-document fed to a shell'],
  ['bash <<< "rm -rf x"', 'a here-string fed to a shell'],
  ['python3 -c "import shutil; shutil.rmtree(\'x\')"', 'inline Python'],
  ["node -e \"require('fs').rmSync('x', {recursive: true})\"", 'inline JavaScript'],
  ['perl -e "system(q(rm -rf x))"', 'inline Perl'],
  ['awk \'BEGIN { system("rm -rf x") }\'', 'awk calls system()'],
  ['source ./cleanup.sh', 'source runs a file'],
  ['. ./cleanup.sh', 'the dot builtin runs a file'],
  ["trap 'rm -rf x' EXIT", 'trap runs a string at exit'],
  ['exec rm -rf x', 'exec'],
  ['busybox rm -rf x', 'a busybox applet'],
  ["git -c alias.x='!rm -rf x' x", 'a git alias running a shell command'],
  ['hash -p /bin/rm ls; ls -rf x', 'hash -p renames a command'],
  ['command eval "rm -rf x"', 'eval behind a wrapper'],
  ['sudo $cmd -rf x', 'an expansion behind a wrapper'],
];

describe('deny rules cannot be talked around', () => {
  it.each(DENY_BYPASSES)('%j (%s): refused in yolo, asked in default', (command) => {
    const yolo = decide({ ...DENY_RM, mode: 'yolo' }, 'bash', cmd(command));
    expect(yolo.decision).toBe('deny');
    expect(decide(DENY_RM, 'bash', cmd(command)).decision).not.toBe('allow');
    expect(decide({ ...DENY_RM, allow: ['bash(ls*)', 'bash(echo*)', 'bash(git *)'] }, 'bash', cmd(command)).decision).not.toBe('allow');
  });

  it('an opaque refusal says why and how to go on', () => {
    const verdict = decide({ ...DENY_RM, mode: 'yolo' }, 'bash', cmd('a=rm; $a -rf x'));
    expect(verdict).toMatchObject({ decision: 'deny', rule: 'opaque: deny bash(rm *)' });
    expect(verdict.reason).toMatch(/cannot be read as plain commands \(a command name that is an expansion\)/);
    expect(verdict.reason).toMatch(/literal command names.*or run without yolo mode/);
  });

  it('opaque commands run in yolo when no deny rule exists for the shell, and a visible rm is still named', () => {
    expect(decide({ mode: 'yolo' }, 'bash', cmd('eval "$x"')).decision).toBe('allow');
    expect(decide({ mode: 'yolo', deny: ['read_file(.env)'] }, 'bash', cmd('eval "$x"')).decision).toBe('allow');
    expect(decide({ ...DENY_RM, mode: 'yolo' }, 'bash', cmd("$'\\x72m' -rf x"))).toMatchObject({ rule: 'deny bash(rm *)' });
  });

  it.each(['rm -rf x', 'sudo rm -rf x', '"rm" -rf x', "r'm' -rf x", 'echo ok && rm -rf x', 'x=$(rm -rf x)'])(
    '%j is denied by the rule itself',
    (command) => {
      expect(decide({ ...DENY_RM, mode: 'yolo' }, 'bash', cmd(command))).toMatchObject({ decision: 'deny', rule: 'deny bash(rm *)' });
    },
  );

  it.each([
    'ls -la',
    'git status',
    'echo "$HOME"',
    'npm test',
    'cat <<EOF\nhello\nEOF',
    "printf '%s\\n' a",
    'grep -r rm src',
    'command -v node',
    'python3 script.py',
  ])('%j is plain: it runs in yolo with deny rules', (command) => {
    expect(analyzeCommand(command).opaque).toBeUndefined();
    expect(decide({ ...DENY_RM, mode: 'yolo' }, 'bash', cmd(command)).decision).toBe('allow');
  });
});

/** [allow rule, command] — an allow rule that matched a line it did not understand. */
const ALLOW_BYPASSES: Array<[string, string]> = [
  ['bash(echo *)', "echo $'\\''; touch PWNED"],
  ['bash(ls*)', "ls $'\\''; touch PWNED"],
  ['bash(git status*)', "git status $'\\''; touch PWNED"],
  ['bash(cat *)', 'cat <<"E"OF\nhello\nEOF\ntouch PWNED'],
  ['bash(cat *)', "cat <<'EOF'\nhello\nEOF\ntouch PWNED"],
  ['bash(cat *)', 'cat <<\\EOF\nhello\nEOF\ntouch PWNED'],
  ['bash(cat *)', 'cat <<E"O"F\nhello\nEOF\ntouch PWNED'],
  ['bash(cat *)', 'cat <<-EOF\nhello\n\tEOF\ntouch PWNED'],
  ['bash(cat *)', 'cat << EOF\nhello\nEOF\ntouch PWNED'],
  ['bash(cat *)', 'cat <<EOF\nhello\n EOF\nEOF\ntouch PWNED'],
  ['bash(echo *)', 'echo ok; f() { touch PWNED; }'],
  ['bash(echo *)', 'echo r\\\n; touch PWNED'],
];

describe('an allow rule matches only what it fully understands', () => {
  it.each(ALLOW_BYPASSES)('%s does not allow %j', (rule, command) => {
    expect(decide({ allow: [rule] }, 'bash', cmd(command)).decision).toBe('ask');
  });

  it('ANSI-C strings and here-document delimiters are read as bash reads them', () => {
    expect(analyzeCommand("echo $'\\''; touch PWNED").parts).toEqual(["echo $'\\''", 'touch PWNED']);
    expect(analyzeCommand('cat <<"E"OF\nhello\nEOF\ntouch PWNED').parts).toEqual(['cat <<"E"OF', 'touch PWNED']);
    expect(analyzeCommand('cat <<-EOF\nhello\n\tEOF\ntouch PWNED').parts).toEqual(['cat <<EOF', 'touch PWNED']);
    expect(analyzeCommand("$'\\x72m' -rf x").hidden).toContain('rm -rf x');
    expect(analyzeCommand("echo $'a\\tb\\101\\u00e9'").hidden).toContain('echo a bAé');
  });

  it('the allowed forms still are', () => {
    expect(decide({ allow: ['bash(echo *)'] }, 'bash', cmd("echo $'a\\nb'")).decision).toBe('allow');
    expect(decide({ allow: ['bash(cat *)'] }, 'bash', cmd('cat <<"EOF"\nhello; rm -rf x\nEOF')).decision).toBe('allow');
  });
});
