// What `rein run` puts around the model, through the real binary (needs `npm run build`):
// the permission policy (flags, modes, .rein/settings.json), durable approval pauses that
// `rein approve` continues, workspace confinement, MCP servers from .mcp.json, project
// rules and skills; and, in process at a fake terminal, questions asked at the prompt.
// Each test has its own project folder as cwd and its own HOME.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rein as spawnRein, type CliRun } from './spawn.js';
import { makeProject, removeProject, type TempProject } from './project.js';
import { command as runCommand } from '../../src/cli/commands/run.js';
import type { CliIO } from '../../src/cli/io.js';
import { openWorkbench } from '../../src/cli/workbench.js';
import { openSqliteStore } from '../../src/store/open.js';
import { startScriptedServer, type ChatRequest, type ScriptedServer, type ScriptToolCall } from '../../src/testing/index.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const EVERYTHING = join(repo, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

const servers: ScriptedServer[] = [];
/** A folder holding the project (cwd of rein) and, beside it, what must stay out of reach. */
let base: string;
let project: string;
let home: string;
let dirs: TempProject;

beforeEach(async () => {
  dirs = await makeProject('rein-workbench-');
  ({ base, project, home } = dirs);
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await removeProject(dirs);
});

/** Runs `rein <args>` in the project with a clean environment and the test's HOME. */
function rein(args: string[]): Promise<CliRun> {
  return spawnRein(args, { cwd: project, stdin: '', env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1' } });
}

/**
 * A scripted model that answers the task with `calls` and, once it has seen tool results,
 * with their texts joined: so stdout shows exactly what reached the model.
 */
async function model(calls: ScriptToolCall[]): Promise<ScriptedServer> {
  const s = await startScriptedServer({
    script: (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'user') return { toolCalls: calls };
      return { text: request.messages.flatMap((m) => (m.role === 'tool' ? [`[${m.name}] ${m.content}`] : [])).join('\n') };
    },
  });
  servers.push(s);
  return s;
}

type Event = { type: string; runId: string; [key: string]: unknown };

function events(stdout: string): Event[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Event);
}

/** The tool messages of a Chat Completions request, by tool call id. */
function toolTexts(request: ChatRequest | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of request?.messages ?? []) if (m.role === 'tool') out[String(m.tool_call_id)] = String(m.content);
  return out;
}

function mcpJson(servers: Record<string, unknown>): Promise<void> {
  return writeFile(join(project, '.mcp.json'), JSON.stringify({ mcpServers: servers }));
}

/** server-everything over stdio; the project path in its arguments lets the test find it in /proc. */
function everything(): Record<string, unknown> {
  return { command: process.execPath, args: [EVERYTHING, 'stdio', `--started-for=${project}`] };
}

describe('rein run: approvals and the permission policy', () => {
  it('a write under the default mode with --json pauses the run (exit 4); rein approve continues it and the file is written', async () => {
    const s = await model([{ id: 'call_w', name: 'write_file', arguments: { path: 'notes/todo.txt', content: 'buy milk\n' } }]);
    const paused = await rein(['run', '--json', '--base-url', s.url, 'note it down']);
    expect(paused.code).toBe(4);
    const log = events(paused.stdout);
    expect(log.find((e) => e.type === 'permission_decided')).toMatchObject({
      name: 'write_file',
      decision: 'ask',
      rule: 'default: risk write asks',
    });
    expect(log.find((e) => e.type === 'approval_requested')).toMatchObject({
      toolCallId: 'call_w',
      name: 'write_file',
      arguments: { path: 'notes/todo.txt' },
    });
    expect(log.at(-1)).toMatchObject({ type: 'run_finished', status: 'paused', reason: 'awaiting_approval' });
    expect(log.some((e) => e.type === 'tool_started')).toBe(false);
    expect(existsSync(join(project, 'notes', 'todo.txt'))).toBe(false);
    // The run was logged in the project's default store, where `rein approve` finds it.
    expect(existsSync(join(project, '.rein', 'rein.db'))).toBe(true);

    const approved = await rein(['approve', log[0]!.runId, '--base-url', s.url]);
    expect(approved.code).toBe(0);
    expect(await readFile(join(project, 'notes', 'todo.txt'), 'utf8')).toBe('buy milk\n');
    expect(approved.stdout.trim()).toBe('[write_file] Created notes/todo.txt (9 bytes, 1 lines).');
    expect(approved.stderr).toMatch(/→ write_file \{"path":"notes\/todo.txt"/);
    expect(s.requests).toHaveLength(2);
  });

  it('a paused run names each call waiting and its rule; approve --call decides one, the run pauses again naming the other', async () => {
    const s = await model([
      { id: 'call_a', name: 'write_file', arguments: { path: 'a.txt', content: 'A' } },
      { id: 'call_b', name: 'write_file', arguments: { path: 'b.txt', content: 'B' } },
    ]);
    const paused = await rein(['run', '--base-url', s.url, 'write two files']);
    expect(paused.code).toBe(4);
    const runId = /rein approve (run_\w+)/.exec(paused.stderr)?.[1];
    expect(runId).toBeDefined();
    expect(paused.stderr).toContain(
      'rein: waiting for approval: write_file {"path":"a.txt","content":"A"} (default: risk write asks) [call_a]\n',
    );
    expect(paused.stderr).toContain(
      'rein: waiting for approval: write_file {"path":"b.txt","content":"B"} (default: risk write asks) [call_b]\n',
    );
    // rein show says the same of the stored run, later, from another process.
    const shown = await rein(['show', runId!]);
    expect(shown.code).toBe(0);
    expect(shown.stderr).toContain(
      'rein: waiting for approval: write_file {"path":"a.txt","content":"A"} (default: risk write asks) [call_a]\n',
    );
    expect(shown.stderr).toContain(
      'rein: waiting for approval: write_file {"path":"b.txt","content":"B"} (default: risk write asks) [call_b]\n',
    );
    expect(shown.stderr).toContain(`rein: the run waits for approval: rein approve ${runId} (or --deny)\n`);

    const first = await rein(['approve', runId!, '--call', 'call_a', '--base-url', s.url]);
    expect(first.code).toBe(4);
    expect(first.stderr).not.toContain('[call_a]');
    expect(first.stderr).toContain(
      'rein: waiting for approval: write_file {"path":"b.txt","content":"B"} (default: risk write asks) [call_b]\n',
    );
    expect(first.stderr).toContain(`rein: the run waits for approval: rein approve ${runId}`);
    // The log of a run resumed and paused again: only the call still waiting.
    const replayed = await rein(['replay', runId!]);
    expect(replayed.stderr).not.toContain('[call_a]');
    expect(replayed.stderr).toContain(
      'rein: waiting for approval: write_file {"path":"b.txt","content":"B"} (default: risk write asks) [call_b]\n',
    );

    const second = await rein(['approve', runId!, '--deny', '--reason', 'b stays as it is', '--base-url', s.url]);
    expect(second.code).toBe(0);
    expect(await readFile(join(project, 'a.txt'), 'utf8')).toBe('A');
    expect(existsSync(join(project, 'b.txt'))).toBe(false);
    const seen = toolTexts(s.requests[1]);
    expect(seen.call_a).toBe('Created a.txt (1 bytes, 1 lines).');
    expect(seen.call_b).toContain('b stays as it is');
  });

  it('rein approve continues with the limits and the model server the run was started with', async () => {
    const s = await model([{ name: 'write_file', arguments: { path: 'a.txt', content: 'A' } }]);
    const paused = await rein(['run', '--json', '--max-steps', '1', '--base-url', s.url, 'write a file']);
    expect(paused.code).toBe(4);
    // No --base-url: the run's own is used; --max-steps 1 still holds, so no second tool
    // turn: the one request after it is the answer at the limit, with no tools.
    const approved = await rein(['approve', events(paused.stdout)[0]!.runId]);
    expect(approved.code).toBe(3);
    expect(approved.stderr).toMatch(/max_steps · 1 step · 1 tool call/);
    expect(await readFile(join(project, 'a.txt'), 'utf8')).toBe('A');
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1]!.tools ?? []).toEqual([]);
  });

  it('--mode acceptEdits runs the same write at once', async () => {
    const s = await model([{ name: 'write_file', arguments: { path: 'notes/todo.txt', content: 'buy milk\n' } }]);
    const out = await rein(['run', '--json', '--mode', 'acceptEdits', '--base-url', s.url, 'note it down']);
    expect(out.code).toBe(0);
    const log = events(out.stdout);
    expect(log.find((e) => e.type === 'permission_decided')).toMatchObject({
      decision: 'allow',
      rule: 'mode acceptEdits: risk write allows',
    });
    expect(log.some((e) => e.type === 'approval_requested')).toBe(false);
    expect(await readFile(join(project, 'notes', 'todo.txt'), 'utf8')).toBe('buy milk\n');
  });

  it('--deny write_file(secret/**) refuses a write under secret/ (the model is told) while another path still pauses for approval', async () => {
    const s = await model([
      { id: 'call_secret', name: 'write_file', arguments: { path: 'secret/key.txt', content: 'hunter2' } },
      { id: 'call_public', name: 'write_file', arguments: { path: 'public/readme.txt', content: 'hello' } },
    ]);
    const paused = await rein(['run', '--json', '--deny', 'write_file(secret/**)', '--base-url', s.url, 'write both']);
    expect(paused.code).toBe(4);
    const log = events(paused.stdout);
    const decided = log.filter((e) => e.type === 'permission_decided').map((e) => [e.toolCallId, e.decision, e.rule]);
    expect(decided).toEqual([
      ['call_secret', 'deny', 'deny write_file(secret/**)'],
      ['call_public', 'ask', 'default: risk write asks'],
    ]);
    expect(log.filter((e) => e.type === 'approval_requested').map((e) => e.toolCallId)).toEqual(['call_public']);
    expect(existsSync(join(project, 'secret'))).toBe(false);
    expect(existsSync(join(project, 'public'))).toBe(false);

    // The recorded --deny is rebuilt by approve: the secret write stays refused.
    const approved = await rein(['approve', log[0]!.runId, '--base-url', s.url]);
    expect(approved.code).toBe(0);
    expect(existsSync(join(project, 'secret'))).toBe(false);
    expect(await readFile(join(project, 'public', 'readme.txt'), 'utf8')).toBe('hello');
    const seen = toolTexts(s.requests[1]);
    expect(seen.call_secret).toMatch(
      /^permission denied for tool "write_file": the rule "deny write_file\(secret\/\*\*\)" refuses this call for "secret\/key.txt"/,
    );
    expect(seen.call_public).toBe('Created public/readme.txt (5 bytes, 1 lines).');
  });

  it('--allow and --ask rules decide before the defaults; rein approve --deny refuses every call that asked', async () => {
    await mkdir(join(project, 'private'));
    await writeFile(join(project, 'private', 'p.txt'), 'private text');
    await writeFile(join(project, 'public.txt'), 'public text');
    const s = await model([
      { id: 'call_echo', name: 'bash', arguments: { command: 'echo ok' } },
      { id: 'call_touch', name: 'bash', arguments: { command: 'touch made-by-bash' } },
      { id: 'call_private', name: 'read_file', arguments: { path: 'private/p.txt' } },
      { id: 'call_public', name: 'read_file', arguments: { path: 'public.txt' } },
    ]);
    const paused = await rein(['run', '--json', '--allow', 'bash(echo *)', '--ask', 'read_file(private/**)', '--base-url', s.url, 'look']);
    expect(paused.code).toBe(4);
    const log = events(paused.stdout);
    expect(log.filter((e) => e.type === 'permission_decided').map((e) => [e.toolCallId, e.decision, e.rule])).toEqual([
      ['call_echo', 'allow', 'allow bash(echo *)'],
      ['call_touch', 'ask', 'default: risk execute asks'],
      ['call_private', 'ask', 'ask read_file(private/**)'],
      ['call_public', 'allow', 'default: risk read allows'],
    ]);
    expect(log.filter((e) => e.type === 'approval_requested').map((e) => e.toolCallId)).toEqual(['call_touch', 'call_private']);

    const denied = await rein(['approve', log[0]!.runId, '--deny', '--reason', 'not now', '--base-url', s.url]);
    expect(denied.code).toBe(0);
    const seen = toolTexts(s.requests[1]);
    expect(seen.call_echo).toMatch(/^ok\n/);
    expect(seen.call_public).toContain('public text');
    expect(seen.call_touch).toContain('not now');
    expect(seen.call_private).toContain('not now');
    expect(seen.call_private).not.toContain('private text');
    expect(existsSync(join(project, 'made-by-bash'))).toBe(false);
  });

  it('--mode plan refuses writes and bash; read-only tools still run', async () => {
    await writeFile(join(project, 'plan.md'), 'step one\n');
    const s = await model([
      { id: 'call_w', name: 'write_file', arguments: { path: 'a.txt', content: 'x' } },
      { id: 'call_b', name: 'bash', arguments: { command: 'touch made-by-bash' } },
      { id: 'call_r', name: 'read_file', arguments: { path: 'plan.md' } },
    ]);
    const out = await rein(['run', '--mode', 'plan', '--base-url', s.url, 'plan it']);
    expect(out.code).toBe(0);
    // The model is offered only what plan mode allows; a call to anything else is refused.
    const offered = ((s.requests[0] as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);
    expect(offered).toContain('read_file');
    expect(offered).not.toContain('write_file');
    expect(offered).not.toContain('bash');
    const seen = toolTexts(s.requests[1]);
    expect(seen.call_w).toMatch(/write_file/);
    expect(seen.call_b).toMatch(/bash/);
    expect(seen.call_w).not.toContain('Created');
    expect(seen.call_r).toContain('step one');
    expect(existsSync(join(project, 'a.txt'))).toBe(false);
    expect(existsSync(join(project, 'made-by-bash'))).toBe(false);
  });

  it('--mode yolo prints a loud banner on stderr and runs bash without asking', async () => {
    const s = await model([{ name: 'bash', arguments: { command: 'echo hi' } }]);
    const out = await rein(['run', '--json', '--mode', 'yolo', '--base-url', s.url, 'say hi']);
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/^rein: ⚠ YOLO MODE: EVERY TOOL CALL RUNS WITHOUT ASKING\./m);
    const log = events(out.stdout);
    expect(log.find((e) => e.type === 'permission_decided')).toMatchObject({
      name: 'bash',
      decision: 'allow',
      rule: 'mode yolo: allow all',
    });
    expect(log.some((e) => e.type === 'approval_requested')).toBe(false);
    expect(log.at(-1)).toMatchObject({
      type: 'run_finished',
      reason: 'final_answer',
      result: { text: expect.stringMatching(/^\[bash\] hi\n/) },
    });
  });

  it('--tools read_file offers only read_file; another tool is refused as unknown; ../ paths are refused; a --tools typo is said', async () => {
    await writeFile(join(project, 'inside.txt'), 'inside text');
    await writeFile(join(base, 'outside'), 'TOP SECRET outside the workspace');
    const s = await model([
      { id: 'call_in', name: 'read_file', arguments: { path: 'inside.txt' } },
      { id: 'call_out', name: 'read_file', arguments: { path: '../outside' } },
      { id: 'call_w', name: 'write_file', arguments: { path: 'a.txt', content: 'x' } },
    ]);
    const out = await rein(['run', '--tools', 'read_file,grpe', '--base-url', s.url, 'read']);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('rein: --tools grpe matches no tool (did you mean grep?)');
    expect(out.stderr).not.toContain('--tools read_file');
    expect(s.requests.map((r) => (r.tools ?? []).map((t) => t.function.name))).toEqual([['read_file'], ['read_file']]);
    const seen = toolTexts(s.requests[1]);
    expect(seen.call_in).toContain('inside text');
    expect(seen.call_out).toMatch(/^tool "read_file" failed: path "\.\.\/outside" is refused: "\.\." leads outside the workspace root/);
    expect(seen.call_w).toBe('unknown tool "write_file". Available tools: read_file');
    expect(out.stdout).not.toContain('TOP SECRET');
    expect(existsSync(join(project, 'a.txt'))).toBe(false);
  });

  it('rules in .rein/settings.json apply; a bad rule there is reported with file and key and the others still apply', async () => {
    await mkdir(join(project, '.rein'));
    const settings = join(project, '.rein', 'settings.json');
    await writeFile(settings, JSON.stringify({ permissions: { allow: ['write_file(docs/**)', 'bash(('] } }));
    const s = await model([
      { id: 'call_docs', name: 'write_file', arguments: { path: 'docs/a.md', content: '# A' } },
      { id: 'call_src', name: 'write_file', arguments: { path: 'src/a.ts', content: 'x' } },
    ]);
    const out = await rein(['run', '--json', '--base-url', s.url, 'write docs']);
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(`rein: ${settings} (permissions.allow[1]): `);
    const decided = events(out.stdout)
      .filter((e) => e.type === 'permission_decided')
      .map((e) => [e.toolCallId, e.decision, e.rule]);
    expect(decided).toEqual([
      ['call_docs', 'allow', 'allow write_file(docs/**)'],
      ['call_src', 'ask', 'default: risk write asks'],
    ]);
    expect(existsSync(join(project, 'src'))).toBe(false);
  });
});

/**
 * A terminal, in process: stdin and stderr say they are TTYs (so `rein run` asks instead of
 * pausing), keys are typed into stdin, and everything drawn is kept in order.
 */
function terminal() {
  const drawn = { screen: '', stdout: '' };
  const changed: Array<() => void> = [];
  const stderr = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        drawn.screen += String(chunk);
        for (const wake of changed.splice(0)) wake();
        done();
      },
    }),
    { isTTY: true, columns: 100 },
  );
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      drawn.stdout += String(chunk);
      done();
    },
  });
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const io: CliIO = { stdin, stdout, stderr, env: { HOME: home, NO_COLOR: '1' }, signal: new AbortController().signal };
  return {
    io,
    drawn,
    type: (keys: string) => stdin.write(keys),
    close: () => stdin.destroy(),
    async waitFor(text: string): Promise<void> {
      while (!drawn.screen.includes(text)) await new Promise<void>((resolve) => changed.push(resolve));
    },
  };
}

describe('rein run at a terminal', () => {
  it('asks at the prompt, and nothing it draws (the spinner) erases the question while it waits for the answer', async () => {
    const s = await model([{ name: 'bash', arguments: { command: 'echo hi' } }]);
    const tty = terminal();
    const exit = runCommand.run(['--no-store', '--no-mcp', '--root', project, '--base-url', s.url, 'say hi'], tty.io);
    await tty.waitFor('allow? ');
    // Whatever was still queued to draw has drawn by now (it takes microtasks, not time).
    await new Promise((resolve) => setTimeout(resolve, 100));
    const question = tty.drawn.screen.slice(tty.drawn.screen.lastIndexOf('? bash needs your approval'));
    // readline moves the cursor to column 1 before its prompt; only an erased line is a fault.
    expect(question.replace(/\x1b\[\d*[GJ]/g, '')).toMatch(
      /^\? bash needs your approval\n {2}command: echo hi\n {2}allow\? \[y\]es, \[n\]o, \[a\]lways this session: /,
    );
    expect(question).not.toContain('\x1b[2K');
    tty.type('y\r');
    expect(await exit).toBe(0);
    expect(tty.drawn.stdout).toContain('[bash] hi');
    tty.close();
  });

  it('Ctrl-C at the question refuses the call and stops the run (exit 130), as Ctrl-C does elsewhere', async () => {
    await mkdir(join(project, '.rein'));
    const s = await model([{ name: 'bash', arguments: { command: 'touch made-by-bash' } }]);
    const tty = terminal();
    const exit = runCommand.run(
      ['--store', join(project, '.rein', 'runs.db'), '--no-mcp', '--root', project, '--base-url', s.url, 'touch it'],
      tty.io,
    );
    await tty.waitFor('allow? ');
    tty.type('\x03');
    expect(await exit).toBe(130);
    expect(tty.drawn.screen).toContain('denied: no answer: interrupted');
    expect(tty.drawn.screen).toMatch(/■ aborted · 1 step/);
    expect(existsSync(join(project, 'made-by-bash'))).toBe(false);
    // The model was not asked again after the interruption, and the log says how the run ended.
    expect(s.requests).toHaveLength(1);
    const store = await openSqliteStore({ path: join(project, '.rein', 'runs.db') });
    try {
      expect((await store.listRuns()).map((r) => r.status)).toEqual(['aborted']);
    } finally {
      await store.close();
    }
    tty.close();
  });
});

describe('rein run: MCP servers from .mcp.json', () => {
  it('the model calls a server tool and gets its real result; @server:uri attaches a resource; a broken entry is reported with file and key', async () => {
    await mcpJson({ everything: everything(), broken: { command: 'node', timeoutMS: 10 } });
    const s = await model([{ id: 'call_echo', name: 'everything__echo', arguments: { message: 'ping from the model' } }]);
    const task = 'echo something about @everything:demo://resource/dynamic/text/7 and @everything:demo://nope/x.';
    const out = await rein(['run', '--base-url', s.url, task]);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain(`rein: mcp ${join(project, '.mcp.json')} (mcpServers.broken.timeoutMS) `);
    // The resource the server really holds is in the task; the one it does not is said, and the text still goes.
    expect(out.stderr).toContain('↳ attached everything:demo://resource/dynamic/text/7');
    expect(out.stderr).toMatch(/rein: @everything:demo:\/\/nope\/x was not attached: .*not found/);
    expect(s.requests[0]!.messages.at(-1)).toMatchObject({
      role: 'user',
      content: expect.stringMatching(
        new RegExp(
          `^${task.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\n\\[resource demo://resource/dynamic/text/7 .*\\]\nResource 7: This is a plaintext resource`,
        ),
      ),
    });
    expect(s.requests[0]!.tools!.map((t) => t.function.name)).toEqual(expect.arrayContaining(['everything__echo', 'read_file', 'bash']));
    expect(toolTexts(s.requests[1])).toEqual({ call_echo: 'Echo: ping from the model' });
    expect(out.stdout.trim()).toBe('[everything__echo] Echo: ping from the model');
    // What the server wrote to its stderr stays off the terminal.
    expect(out.stderr).not.toContain('Starting default (STDIO) server');
  });

  it('a server that cannot start is one notice naming it and its error; a misspelt key is one notice', async () => {
    await mcpJson({ missing: { command: 'rein-no-such-mcp-server' }, broken: { command: 'node', timeoutMS: 10 } });
    const io: CliIO = {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr: new PassThrough(),
      env: { PATH: process.env.PATH, HOME: home },
      signal: new AbortController().signal,
    };
    const bench = await openWorkbench({ root: project, 'no-skills': true }, io, []);
    try {
      expect(bench.notices.filter((n) => n.includes('missing'))).toEqual([
        expect.stringMatching(
          /^mcp server "missing" did not start: cannot start "rein-no-such-mcp-server": not found .*\(retrying in the background\)$/,
        ),
      ]);
      expect(bench.notices.filter((n) => n.includes('broken'))).toEqual([
        expect.stringContaining(`mcp ${join(project, '.mcp.json')} (mcpServers.broken.timeoutMS) `),
      ]);
    } finally {
      await bench.close();
    }
  });

  it('an MCP tool that may change things pauses the run; rein approve restarts the server, with the same --tools, and runs it', async () => {
    await mcpJson({ everything: everything() });
    const s = await model([{ id: 'call_t', name: 'everything__toggle-simulated-logging', arguments: {} }]);
    const paused = await rein(['run', '--json', '--tools', 'everything__toggle-*', '--base-url', s.url, 'toggle logging']);
    expect(paused.code).toBe(4);
    const log = events(paused.stdout);
    expect(log.find((e) => e.type === 'permission_decided')).toMatchObject({
      name: 'everything__toggle-simulated-logging',
      decision: 'ask',
      rule: 'default: risk write asks',
    });
    const approved = await rein(['approve', log[0]!.runId, '--base-url', s.url]);
    expect(approved.code).toBe(0);
    expect(toolTexts(s.requests[1]).call_t).toMatch(/^(Started|Stopped) simulated/);
    const offered = ['everything__toggle-simulated-logging', 'everything__toggle-subscriber-updates'];
    expect(s.requests.map((r) => (r.tools ?? []).map((t) => t.function.name))).toEqual([offered, offered]);
  });
});

describe('rein run: project rules and skills', () => {
  it('AGENTS.md reaches the system message; /skill:name injects the body; a broken SKILL.md is reported and the good one still works', async () => {
    await writeFile(join(project, 'AGENTS.md'), '# Rules\nAlways run the linter before committing (rule R-17).\n');
    await mkdir(join(project, '.rein', 'skills', 'deploy-check'), { recursive: true });
    await writeFile(
      join(project, '.rein', 'skills', 'deploy-check', 'SKILL.md'),
      '---\nname: deploy-check\ndescription: Checks a deployment before it goes live.\n---\nVerify the health endpoint answers 200 (step D-42).\n',
    );
    await mkdir(join(project, '.rein', 'skills', 'broken'), { recursive: true });
    const brokenFile = join(project, '.rein', 'skills', 'broken', 'SKILL.md');
    await writeFile(brokenFile, 'No front matter here.\n');
    const s = await startScriptedServer({ script: [{ text: 'Checked.' }] });
    servers.push(s);

    const out = await rein(['run', '--base-url', s.url, '/skill:deploy-check for staging']);
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe('Checked.');
    expect(out.stderr).toContain(`rein: skill ${brokenFile}: no front matter`);
    const request = s.received[0]!.request!;
    expect(request.system).toContain('Always run the linter before committing (rule R-17).');
    const user = request.messages
      .filter((m) => m.role === 'user')
      .map((m) => m.content)
      .join('\n');
    expect(user).toContain('Verify the health endpoint answers 200 (step D-42).');
    expect(user).toContain('for staging');
    expect(user).not.toContain('/skill:deploy-check');
  });
});
