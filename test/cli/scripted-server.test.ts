// `rein scripted-server`: the scripted model server from a script file, as a user starts it
// to try rein offline, and `rein run` pointed at it; through the real binary (needs
// `npm run build`), in a project folder of its own.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, removeProject, type TempProject } from './project.js';
import { rein, startRein } from './spawn.js';

let dirs: TempProject;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  dirs = await makeProject('rein-scripted-server-');
  env = { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1' };
});

afterEach(async () => {
  await removeProject(dirs);
});

type Event = { type: string; status?: string; result?: { text: string } };

function events(stdout: string): Event[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Event);
}

/** Starts `rein scripted-server <args>` and reads the address it prints. */
async function serve(args: string[]) {
  const server = startRein(['scripted-server', ...args], { cwd: dirs.project, env });
  // The address on stdout, then the hint on stderr.
  await server.waitFor(/^\{.*\}\n/m);
  await server.waitFor(/Ctrl-C stops it/);
  const address = JSON.parse(server.out.stdout.split('\n')[0]!) as { url: string; origin: string };
  return { server, ...address };
}

describe('rein scripted-server', () => {
  it('serves the turns of a script module; rein run --base-url answers from it; SIGTERM stops it (exit 0)', async () => {
    const script = join(dirs.project, 'script.mjs');
    await writeFile(
      script,
      `export default (request) =>
  request.messages.at(-1).role === 'user'
    ? { toolCalls: [{ name: 'calculate', arguments: { expression: '6 * 7' } }] }
    : { text: 'The script says ' + request.messages.at(-1).content + '.' };
`,
    );
    const { server, url, origin } = await serve(['--script-module', script]);
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      expect(origin).toBe(url.replace(/\/v1$/, ''));
      expect(server.out.stderr).toContain(`rein run --base-url ${url} "hello"`);
      const run = await rein(['run', '--no-store', '--base-url', url, '--json', 'hi'], { cwd: dirs.project, env });
      expect(run.code).toBe(0);
      expect(events(run.stdout).at(-1)).toMatchObject({ type: 'run_finished', status: 'done', result: { text: 'The script says 42.' } });
      server.terminate();
      const end = await server.done;
      expect(end.code).toBe(0);
    } finally {
      // Reaped even when a check failed (removeProject fails on a rein left running).
      server.kill();
      await server.done;
    }
  });

  it('serves a JSON list of turns (--script) through every wire: an anthropic/… model at its origin', async () => {
    const turns = join(dirs.project, 'turns.json');
    await writeFile(turns, JSON.stringify([{ toolCalls: [{ name: 'roll_dice', arguments: { sides: 6 } }] }, { text: 'Rolled.' }]));
    const { server, origin } = await serve(['--script', turns, '--port', '0', '--host', '127.0.0.1']);
    try {
      const run = await rein(['run', '--no-store', '--model', 'anthropic/claude-sonnet-4-5', '--base-url', origin, 'roll a die'], {
        cwd: dirs.project,
        env,
      });
      expect(run.code).toBe(0);
      expect(run.stdout.trim()).toBe('Rolled.');
      expect(run.stderr).toMatch(/→ roll_dice \{"sides":6,"count":1\}/);
      server.terminate();
      expect((await server.done).code).toBe(0);
    } finally {
      // Reaped even when a check failed (removeProject fails on a rein left running).
      server.kill();
      await server.done;
    }
  });

  it('a bad script or flag is a usage error (exit 2) that says what is wrong, and nothing is served', async () => {
    await writeFile(join(dirs.project, 'named.mjs'), 'export const turns = [];\n');
    await writeFile(join(dirs.project, 'typo.json'), JSON.stringify([{ text: 'a' }, { tool_calls: [] }]));
    const cases: Array<[string[], RegExp]> = [
      [['--script-module', 'named.mjs'], /named\.mjs: the default export must be a script: a list of turns or a function of the request/],
      [['--script-module', 'missing.mjs'], /missing\.mjs: no such script module/],
      [['--script', 'typo.json'], /typo\.json: turn 2 has an unknown field "tool_calls"/],
      [[], /no script given: --script-module <file\.mjs>/],
      [['--script-module', 'named.mjs', '--port', 'eighty'], /--port expects a whole number from 0 to 65535, got "eighty"/],
    ];
    for (const [args, message] of cases) {
      const out = await rein(['scripted-server', ...args], { cwd: dirs.project, env });
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr).toMatch(message);
      expect(out.stderr).not.toMatch(/\n\s+at /);
      expect(out.stdout).toBe('');
    }
  });
});
