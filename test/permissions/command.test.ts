import { describe, expect, it } from 'vitest';
import { analyzeCommand } from '../../src/permissions/command.js';

describe('analyzeCommand: parts', () => {
  it.each([
    ['git status', ['git status']],
    ['  git   status  ', ['git status']],
    ['a; b && c || d | e |& f & g\nh', ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']],
    ['echo "a; b" \'c && d\'', ['echo "a; b" \'c && d\'']],
    ['echo a\\;b', ['echo a\\;b']],
    ['(cd sub && make)', ['cd sub', 'make']],
    ['{ a; b; }', ['a', 'b']],
    ['if a; then b; elif c; then d; else e; fi', ['a', 'b', 'c', 'd', 'e']],
    ['while a; do b; done', ['a', 'b']],
    ['! grep -q x f', ['grep -q x f']],
    ['git status # a comment; rm -rf /', ['git status']],
    ['echo a#b', ['echo a#b']],
    ['git status 2>/dev/null', ['git status']],
    ['make 2>&1 | tee', ['make', 'tee']],
    ['cat <<EOF\nline one\nEOF\necho done', ['cat <<EOF', 'echo done']],
    ['', []],
    ['# only a comment', []],
  ])('%j → %j', (command, parts) => {
    expect(analyzeCommand(command).parts).toEqual(parts);
  });
});

describe('analyzeCommand: unsafe', () => {
  it.each([
    ['echo $(date)', 'command substitution'],
    ['echo `date`', 'command substitution'],
    ['echo "$(date)"', 'command substitution'],
    ['echo $((1 + 2))', 'command substitution'],
    ['diff <(a) <(b)', 'process substitution'],
    ['tee >(gzip > x.gz)', 'process substitution'],
    ['echo x > f', 'redirection to a file'],
    ['echo x >> f', 'redirection to a file'],
    ['echo x >| f', 'redirection to a file'],
    ['echo x &> f', 'redirection to a file'],
    ['echo x &>> f', 'redirection to a file'],
    ['echo x >& f', 'redirection to a file'],
    ['echo x 1>"out file"', 'redirection to a file'],
  ])('%j is unsafe: %s', (command, why) => {
    expect(analyzeCommand(command).unsafe).toBe(why);
  });

  it.each([
    'echo x > /dev/null',
    'echo x 2>/dev/null',
    'echo x >&2',
    'echo x 2>&1',
    'echo x 2>&-',
    'echo "$HOME" \'$(not run)\'',
    'wc -l < file',
    'cat <<< "text"',
    'echo "a > b"',
    'git log --format="%H > %s"',
  ])('%j is safe', (command) => {
    expect(analyzeCommand(command).unsafe).toBeUndefined();
  });
});

describe('analyzeCommand: hidden forms', () => {
  it('finds commands inside substitutions, nested shells and here-documents', () => {
    const { hidden } = analyzeCommand('echo $(curl x | sh) && bash -c "rm a; rm b" && python3 <<EOF\nimport os\nEOF');
    expect(hidden).toEqual(expect.arrayContaining(['curl x', 'sh', 'rm a', 'rm b', 'import os']));
  });

  it('strips assignments, wrappers, directories and quotes', () => {
    const { hidden } = analyzeCommand('LC_ALL=C sudo -n /usr/bin/rm "-rf" x');
    expect(hidden).toEqual(expect.arrayContaining(['rm -rf x', 'sudo -n /usr/bin/rm -rf x']));
  });

  it('follows nesting deep enough for real commands', () => {
    let command = 'rm x';
    for (let i = 0; i < 10; i++) command = `echo $(${command})`;
    const analysis = analyzeCommand(command);
    expect(analysis).toMatchObject({ unsafe: 'command substitution' });
    expect(analysis.hidden).toContain('rm x');
    expect(analysis.opaque).toBeUndefined();
  });

  it('calls a line nested deeper than it follows opaque', () => {
    let command = 'rm x';
    for (let i = 0; i < 40; i++) command = `echo $(${command})`;
    expect(analyzeCommand(command)).toMatchObject({ opaque: 'commands nested too deeply', unsafe: 'command substitution' });
  });

  it('an unclosed quote or substitution does not throw', () => {
    expect(analyzeCommand('echo "abc').parts).toEqual(['echo "abc']);
    expect(analyzeCommand('echo $(abc').unsafe).toBe('command substitution');
    expect(analyzeCommand("echo 'abc").parts).toEqual(["echo 'abc"]);
  });
});
