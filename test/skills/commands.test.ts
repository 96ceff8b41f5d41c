import { describe, expect, it } from 'vitest';
import { parseSkillCommands } from '../../src/skills/commands.js';
import { fakeSkill } from './helpers.js';

const skills = [
  fakeSkill('release-notes', 'Write release notes.'),
  fakeSkill('deploy', 'Deploy the service.', { disableModelInvocation: true }),
  fakeSkill('pdf', 'Work with PDF files.'),
];

describe('explicit mode: /skill:name', () => {
  it('activates the named skill and removes the token from the text', () => {
    const result = parseSkillCommands('/skill:release-notes for v2.1', skills);
    expect(result.activated.map((s) => s.name)).toEqual(['release-notes']);
    expect(result.text).toBe('for v2.1');
    expect(result.unknown).toEqual([]);
  });

  it('finds tokens anywhere, keeps order, activates each once and leaves the rest of the text intact', () => {
    const input = 'Please /skill:pdf merge a.pdf and b.pdf, then /skill:release-notes.\n  indented line /skill:pdf';
    const result = parseSkillCommands(input, skills);
    expect(result.activated.map((s) => s.name)).toEqual(['pdf', 'release-notes']);
    expect(result.text).toBe('Please merge a.pdf and b.pdf, then .\n  indented line');
  });

  it('activates skills the model may not invoke: that is what the flag is for', () => {
    expect(parseSkillCommands('/skill:deploy now', skills).activated.map((s) => s.name)).toEqual(['deploy']);
  });

  it('an input that is only a command leaves empty text', () => {
    expect(parseSkillCommands('  /skill:pdf  ', skills).text).toBe('');
  });

  it('unknown names stay in the text and are reported with the closest name and the list', () => {
    const result = parseSkillCommands('/skill:relase-notes please, and /skill:zzz', skills);
    expect(result.activated).toEqual([]);
    expect(result.text).toBe('/skill:relase-notes please, and /skill:zzz');
    expect(result.unknown).toEqual([
      {
        name: 'relase-notes',
        suggestion: 'release-notes',
        message: expect.stringMatching(
          /unknown skill "relase-notes": did you mean "release-notes"\? \(available: release-notes, deploy, pdf\)/,
        ),
      },
      { name: 'zzz', message: expect.stringMatching(/^unknown skill "zzz" \(available/) },
    ]);
  });

  it('is not fooled by paths or URLs that contain /skill:', () => {
    const input = 'see http://host/skill:pdf and a/skill:pdf';
    const result = parseSkillCommands(input, skills);
    expect(result.activated).toEqual([]);
    expect(result.text).toBe(input);
  });

  it('a bare "/skill:" is reported, and a name is matched case-insensitively', () => {
    const result = parseSkillCommands('(/skill:PDF) /skill:', skills);
    expect(result.activated.map((s) => s.name)).toEqual(['pdf']);
    expect(result.unknown).toEqual([{ name: '', message: expect.stringMatching(/needs a skill name/) }]);
  });
});
