// The README's quickstart, as written: its library program (which is examples/quickstart.ts,
// run as a user runs it) and its script for `rein scripted-server` with the `rein run`
// against it (through the real CLI), each printing what the README shows.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, removeProject, type TempProject } from './cli/project.js';
import { rein, startRein } from './cli/spawn.js';
import { codeBlocksOf, sectionUnder } from './docs/markdown.js';
import { repoRoot, runExample } from './examples/run-example.js';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const quickstart = sectionUnder(readme, 'Quickstart, offline') ?? '';
const blocks = codeBlocksOf(quickstart);
/** The quickstart's blocks of one kind, in order: `json`, `sh`, `ts`, or '' (shown output). */
const blocksOf = (lang: string): string[] => blocks.filter((b) => b.lang === lang).map((b) => b.body);

/** A line of shown output as a pattern: `…` stands for what differs from run to run (ids, times, tokens). */
function shownLine(line: string): RegExp {
  return new RegExp(
    `^${line
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*?')}$`,
  );
}

describe('the README quickstart', () => {
  let dirs: TempProject;

  beforeEach(async () => {
    dirs = await makeProject('rein-readme-');
  });

  afterEach(async () => {
    await removeProject(dirs);
  });

  it('has the blocks this test reads', () => {
    expect(blocksOf('json')).toHaveLength(1);
    expect(blocksOf('ts')).toHaveLength(1);
    expect(blocksOf('sh').length).toBeGreaterThanOrEqual(2);
    expect(blocksOf('')).toHaveLength(2);
  });

  it('the README library example is examples/quickstart.ts, and works as written', async () => {
    expect(`${blocksOf('ts')[0]}\n`).toBe(readFileSync(join(repoRoot, 'examples/quickstart.ts'), 'utf8'));
    const run = await runExample('quickstart.ts');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // Streamed text, the tool's results, the result's status, reason, text and totals, and
    // the system prompt as the model server received it.
    expect(run.stdout).toBe(
      [
        'add → 42',
        'add → 50',
        'It is 50.',
        'done (final_answer): "It is 50." after 3 steps, 2 tool calls',
        "the model was sent: { role: 'system', content: 'Be brief.' }",
        '',
      ].join('\n'),
    );
    // What the README says it prints.
    expect(`${blocksOf('')[1]}\n`).toBe(run.stdout);
  }, 120_000);

  it('the scripted server answers rein run from the three-line script, as shown', async () => {
    const [script] = blocksOf('json');
    expect(script!.split('\n')).toHaveLength(3);
    const commands = blocksOf('sh')
      .find((body) => body.includes('scripted-server'))!
      .split('\n');
    const serve = /^npx rein scripted-server --script turns\.json --port (\d+)$/.exec(commands[0]!);
    const run = /^npx rein run --base-url http:\/\/127\.0\.0\.1:(\d+)\/v1 "([^"]+)"$/.exec(commands[1]!);
    expect(serve, commands[0]).not.toBeNull();
    expect(run, commands[1]).not.toBeNull();
    expect(run![1]).toBe(serve![1]);
    await writeFile(join(dirs.project, 'turns.json'), `${script}\n`);

    const env = { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1' };
    // Any free port rather than the README's: another process may hold that one.
    const server = startRein(['scripted-server', '--script', 'turns.json'], { cwd: dirs.project, env });
    await server.waitFor(/^\{.*\}\n/m);
    const { url } = JSON.parse(server.out.stdout.split('\n')[0]!) as { url: string };
    try {
      const answer = await rein(['run', '--base-url', url, run![2]!], { cwd: dirs.project, env });
      expect(answer.code, answer.stderr).toBe(0);
      // At a terminal the answer (stdout) comes between the tool calls and the summary (stderr).
      const shown = blocksOf('')[0]!.split('\n');
      const answerLine = shown.findIndex((line) => line === answer.stdout.trim());
      expect(answerLine, `the answer ${JSON.stringify(answer.stdout)} among ${shown.join('\n')}`).toBeGreaterThan(0);
      expect(answer.stdout).toBe(`${shown[answerLine]}\n`);
      const notes = answer.stderr.trimEnd().split('\n');
      const expectedNotes = shown.filter((_, i) => i !== answerLine);
      expect(notes).toHaveLength(expectedNotes.length);
      for (const [i, line] of expectedNotes.entries()) expect(notes[i], answer.stderr).toMatch(shownLine(line));

      // The run is logged in the project's .rein/rein.db, so `rein runs` shows it.
      const runs = await rein(['runs', '--json'], { cwd: dirs.project, env });
      expect(runs.code).toBe(0);
      expect(
        runs.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { status: string; reason: string }),
      ).toMatchObject([{ status: 'done', reason: 'final_answer' }]);
    } finally {
      // SIGTERM stops it (exit 0), and it has ended before the project folder goes.
      server.terminate();
      expect((await server.done).code).toBe(0);
    }
  }, 120_000);
});
