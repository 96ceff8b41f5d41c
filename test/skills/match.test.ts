import { describe, expect, it } from 'vitest';
import { keywords, stem } from '../../src/skills/keywords.js';
import { explainMatches, matchSkills } from '../../src/skills/match.js';
import { fakeSkill } from './helpers.js';

const pdf = fakeSkill(
  'pdf-tools',
  'Extract text and tables from PDF files, fill PDF forms, merge and split documents. Use when the user works with PDF files.',
);
const git = fakeSkill('git-release', 'Prepare a release: bump the version, write the changelog, create and push the git tag.');
const sql = fakeSkill('sql-review', 'Review SQL migrations for locking problems and missing indexes before they run in production.');
const secret = fakeSkill('rotate-keys', 'Rotate the production API keys and update the secrets vault.', { disableModelInvocation: true });
const skills = [pdf, git, sql, secret];

describe('keywords', () => {
  it('drop stop-words and description boilerplate, and meet across inflections', () => {
    expect(keywords('Use this skill when the user asks to merge PDFs')).toEqual(['merg', 'pdf']);
    expect(['merging', 'merged', 'merges', 'merge'].map(stem)).toEqual(['merg', 'merg', 'merg', 'merg']);
    expect(['tables', 'table'].map(stem)).toEqual(['tabl', 'tabl']);
    expect(['committing', 'commits', 'commit'].map(stem)).toEqual(['commit', 'commit', 'commit']);
    expect(['indexes', 'index'].map(stem)).toEqual(['index', 'index']);
    expect(['status', 'analysis', 'class'].map(stem)).toEqual(['status', 'analysis', 'class']);
  });
});

describe('harness matching', () => {
  it('matches the skill whose description shares keywords with the input', () => {
    expect(matchSkills('Can you merge these two PDF files into one?', skills)).toEqual([pdf]);
    expect(matchSkills('bump the version and tag the release', skills)).toEqual([git]);
    expect(matchSkills('please review this migration, I worry about locking', skills)).toEqual([sql]);
  });

  it('unrelated input matches nothing, and one shared word is not enough', () => {
    expect(matchSkills('What is the capital of France?', skills)).toEqual([]);
    expect(matchSkills('Write a haiku about autumn.', skills)).toEqual([]);
    expect(matchSkills('open the pdf', skills)).toEqual([]);
    expect(matchSkills('', skills)).toEqual([]);
  });

  it('never matches a skill with disable-model-invocation', () => {
    expect(matchSkills('rotate the production API keys in the secrets vault', skills)).toEqual([]);
  });

  it('ranks by shared keywords, is deterministic, and honours limit and minMatches', () => {
    const input = 'extract the tables from the PDF, then bump the version, write the changelog and push the git tag';
    const first = explainMatches(input, skills);
    expect(first.map((m) => m.skill.name)).toEqual(['git-release', 'pdf-tools']);
    expect(first[0]!.matched).toEqual(['git', 'bump', 'version', 'writ', 'changelog', 'push', 'tag']);
    expect(explainMatches(input, [...skills].reverse())).toEqual(first);
    expect(matchSkills(input, skills, { limit: 1 })).toEqual([git]);
    expect(matchSkills('open the pdf', skills, { minMatches: 1 })).toEqual([pdf]);
    expect(matchSkills(input, skills, { minMatches: 8 })).toEqual([]);
  });

  it('the skill name counts as keywords', () => {
    expect(matchSkills('run sql-review on this', skills)).toEqual([sql]);
  });
});
