// `rein run --record <file>` against a provider (the scripted server stands in for it), then
// `rein scripted-server --fixture <file>` playing it back to `rein run`; a changed run's first
// differing request is reported. Through the real binary (needs `npm run build`).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, removeProject, type TempProject } from './project.js';
import { rein, startRein } from './spawn.js';

let dirs: TempProject;
let env: NodeJS.ProcessEnv;
const KEY = 'sk-proj-recordtestkey0123456789abcdefghijklmnopq';

beforeEach(async () => {
  dirs = await makeProject('rein-record-');
  env = { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1', OPENAI_API_KEY: KEY };
});

afterEach(async () => {
  await removeProject(dirs);
});

async function serve(args: string[]) {
  const server = startRein(['scripted-server', ...args], { cwd: dirs.project, env });
  await server.waitFor(/^\{.*\}\n/m);
  await server.waitFor(/Ctrl-C stops it/);
  const address = JSON.parse(server.out.stdout.split('\n')[0]!) as { url: string; origin: string };
  return { server, ...address };
}

const lastEvent = (stdout: string) =>
  JSON.parse(stdout.trim().split('\n').at(-1)!) as { type: string; status: string; result?: { text: string } };

describe('rein run --record and rein scripted-server --fixture', () => {
  it('records a run, plays it back to the same run, and names the first request a changed run makes differently', async () => {
    const script = join(dirs.project, 'provider.mjs');
    await writeFile(
      script,
      `export default (request) =>
  request.messages.at(-1).role === 'user'
    ? { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] }
    : { text: 'It is ' + request.messages.at(-1).content + '.' };
`,
    );
    const fixture = join(dirs.project, 'run.fixture.jsonl');
    const provider = await serve(['--script-module', script]);
    try {
      const recorded = await rein(['run', '--no-store', '--base-url', provider.url, '--record', fixture, '--json', 'what is 6 * 7?'], {
        cwd: dirs.project,
        env,
      });
      expect(recorded.code).toBe(0);
      expect(lastEvent(recorded.stdout)).toMatchObject({ status: 'done', result: { text: 'It is 42.' } });
    } finally {
      provider.server.kill();
      await provider.server.done;
    }
    const text = await readFile(fixture, 'utf8');
    expect(text.split('\n')[0]).toBe('{"rein":"fixture","version":1}');
    expect(text.trim().split('\n')).toHaveLength(3);
    expect(text).not.toContain(KEY);

    // The same run against the recording: the same answer, no provider needed.
    const playback = await serve(['--fixture', fixture]);
    try {
      expect(playback.server.out.stderr).toContain(`the recording ${fixture}`);
      const again = await rein(['run', '--no-store', '--base-url', playback.url, '--json', 'what is 6 * 7?'], { cwd: dirs.project, env });
      expect(again.code).toBe(0);
      expect(lastEvent(again.stdout)).toMatchObject({ status: 'done', result: { text: 'It is 42.' } });
      playback.server.terminate();
      expect((await playback.server.done).code).toBe(0);
    } finally {
      playback.server.kill();
      await playback.server.done;
    }

    // A changed run: its first request differs, and the server says where.
    const changed = await serve(['--fixture', fixture]);
    try {
      const run = await rein(['run', '--no-store', '--base-url', changed.url, '--json', 'what is 7 * 6?'], { cwd: dirs.project, env });
      expect(run.code).not.toBe(0);
      await changed.server.waitFor(/differs from the recording/);
      expect(changed.server.out.stderr).toMatch(
        /request 1 differs from the recording at messages\[\d+\]\.content: expected "what is 6 \* 7\?", got "what is 7 \* 6\?"/,
      );
      expect(lastEvent(run.stdout)).toMatchObject({ type: 'run_finished', status: 'failed' });
      changed.server.terminate();
      expect((await changed.server.done).code).toBe(1);
    } finally {
      changed.server.kill();
      await changed.server.done;
    }
  });

  it('bad uses are refused saying what to fix', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['scripted-server', '--fixture', 'missing.jsonl'], /missing\.jsonl: no such fixture file/],
      [
        ['scripted-server', '--fixture', 'x.jsonl', '--chunk-size', '3'],
        /--fixture plays a recording back as it was: leave out --chunk-size/,
      ],
      [['chat', '--record', 'x.jsonl'], /--record is for `rein run`/],
      [['run', '--tool-calling', 'text', 'hi'], /--tool-calling expects native or prompt, got "text"/],
    ];
    for (const [args, message] of cases) {
      const out = await rein(args, { cwd: dirs.project, env });
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr).toMatch(message);
      expect(out.stdout).toBe('');
    }
  });
});
