// `rein chat` with tools. Through the real binary (needs `npm run build`), stdin piped:
// approval questions answered by the next line typed (yes, no, always for the session),
// input that ends before a question, and MCP in the chat (`@server:uri` attaches a
// resource, `/server:prompt args` sends a prompt). In process, at a fake terminal: Ctrl-C
// at a question. Each test has its own project folder as cwd and its own HOME.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, removeProject, type TempProject } from './project.js';
import { startRein } from './spawn.js';
import { command as chatCommand } from '../../src/cli/commands/chat.js';
import type { CliIO } from '../../src/cli/io.js';
import { openSqliteStore } from '../../src/store/open.js';
import { startScriptedServer, type ChatRequest, type ScriptFunction, type ScriptedServer } from '../../src/testing/index.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const EVERYTHING_DIST = join(repo, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist');

const servers: ScriptedServer[] = [];
let project: string;
let home: string;
let dirs: TempProject;

beforeEach(async () => {
  dirs = await makeProject('rein-chat-tools-');
  ({ project, home } = dirs);
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await removeProject(dirs);
});

/** An interactive `rein chat` in the project: write lines, wait for output, await its end. */
function chat(args: string[], extraEnv: Record<string, string> = {}) {
  const session = startRein(['chat', ...args], { cwd: project, env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', ...extraEnv } });
  return { ...session, done: session.done.then(({ code }) => ({ code })) };
}

/** The chat's prompt, at the start of a line (what follows it is written on the same line). */
const PROMPT = /(?:^|\n)> /;
const QUESTION = /allow\? \[y\]es, \[n\]o, \[a\]lways this session: /;

async function model(script: ScriptFunction): Promise<ScriptedServer> {
  const s = await startScriptedServer({ script });
  servers.push(s);
  return s;
}

/** The content blocks of the last user message of Anthropic request number `index`. */
function lastUserContent(s: ScriptedServer, index: number): Array<{ type: string; text?: string }> {
  const messages = s.received[index]!.body.messages as Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
  const content = messages.at(-1)!.content;
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/** The texts of the tool messages of a Chat Completions request. */
function toolTexts(request: ChatRequest | undefined): string[] {
  return (request?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));
}

/** Each prompt (`write <path> <content>`) makes the model write that file; tool results are answered with their text. */
const writer: ScriptFunction = (request) => {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return { text: `result: ${last.content}` };
  const [, path, content] = /^write (\S+) (.*)$/.exec(last.content) ?? [];
  return { toolCalls: [{ name: 'write_file', arguments: { path: path ?? 'none', content: content ?? '' } }] };
};

describe('rein chat: approval questions at the prompt', () => {
  it('"y" runs the write; "n" refuses it with "declined at the prompt", and the model is told', async () => {
    const s = await model(writer);
    const session = chat(['--base-url', s.url]);
    await session.waitFor(PROMPT);
    session.write('write notes.txt first note');
    await session.waitFor(QUESTION);
    // The question shows the call and the diff it would make.
    expect(session.out.stderr).toMatch(/\? write_file needs your approval\n {2}path: notes.txt\n {2}content: first note\n/);
    expect(session.out.stderr).toMatch(/^\s+\+first note$/m);
    session.write('y');
    await session.waitFor(PROMPT, 2);
    expect(await readFile(join(project, 'notes.txt'), 'utf8')).toBe('first note');
    expect(session.out.stdout).toContain('result: Created notes.txt');

    session.write('write other.txt second note');
    await session.waitFor(QUESTION, 2);
    session.write('n');
    await session.waitFor(PROMPT, 3);
    session.write('exit');
    expect(await session.done).toEqual({ code: 0 });
    expect(existsSync(join(project, 'other.txt'))).toBe(false);
    expect(toolTexts(s.requests.at(-1)).at(-1)).toBe(
      'permission denied for tool "write_file": a person declined it: declined at the prompt',
    );
    expect(session.out.stdout).toContain('declined at the prompt');
  });

  it('"a" allows calls like it for the rest of the session: asked once, and a different path is still asked', async () => {
    const s = await model(writer);
    const session = chat(['--base-url', s.url]);
    await session.waitFor(PROMPT);
    session.write('write notes.txt one');
    await session.waitFor(QUESTION);
    session.write('a');
    await session.waitFor(PROMPT, 2);
    expect(session.out.stderr).toContain('  allowed for this session: write_file(notes.txt)\n');
    expect(await readFile(join(project, 'notes.txt'), 'utf8')).toBe('one');

    // The same kind of call (the same file) runs without a question.
    session.write('write notes.txt two');
    await session.waitFor(PROMPT, 3);
    expect(await readFile(join(project, 'notes.txt'), 'utf8')).toBe('two');
    expect(session.out.stderr.match(/needs your approval/g)).toHaveLength(1);

    // The session rule is no broader than the call: another file is asked about.
    session.write('write other.txt three');
    await session.waitFor(QUESTION, 2);
    session.write('n');
    await session.waitFor(PROMPT, 4);
    session.write('exit');
    expect(await session.done).toEqual({ code: 0 });
    expect(session.out.stderr.match(/needs your approval/g)).toHaveLength(2);
    expect(existsSync(join(project, 'other.txt'))).toBe(false);
    expect(s.requests).toHaveLength(6);
  });
});

describe('rein chat: input that ends', () => {
  it('a question asked after the input ended is refused at once; the run still ends with its summary', async () => {
    const s = await model(writer);
    const session = chat(['--base-url', s.url]);
    await session.waitFor(PROMPT);
    // As `echo "write notes.txt x" | rein chat` does: the input ends before the model answers.
    session.write('write notes.txt x');
    session.end();
    expect(await session.done).toEqual({ code: 0 });
    expect(session.out.stderr).toContain('? write_file needs your approval');
    expect(session.out.stderr).toContain('denied: no answer: the input was closed');
    expect(session.out.stderr).toMatch(/✓ final_answer · 2 steps · 1 tool call/);
    expect(session.out.stdout).toContain(
      'result: permission denied for tool "write_file": a person declined it: no answer: the input was closed',
    );
    expect(existsSync(join(project, 'notes.txt'))).toBe(false);
    // The run was logged as finished, not left running.
    const store = await openSqliteStore({ path: join(project, '.rein', 'rein.db') });
    try {
      expect((await store.listRuns()).map((r) => [r.status, r.reason])).toEqual([['done', 'final_answer']]);
    } finally {
      await store.close();
    }
  });
});

describe('rein chat at a terminal', () => {
  it('Ctrl-C at an approval question refuses the call and stops that run; the session goes on', async () => {
    const s = await model(writer);
    // In process, with stdin and stderr that say they are TTYs: readline reads keys, Ctrl-C included.
    let screen = '';
    const changed: Array<() => void> = [];
    const stderr = Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          screen += String(chunk);
          for (const wake of changed.splice(0)) wake();
          done();
        },
      }),
      { isTTY: true, columns: 100 },
    );
    const stdout = new Writable({ write: (_chunk, _encoding, done) => done() });
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const io: CliIO = { stdin, stdout, stderr, env: { HOME: home, NO_COLOR: '1' }, signal: new AbortController().signal };
    const count = (text: string): number => screen.split(text).length - 1;
    const until = async (text: string, times = 1): Promise<void> => {
      while (count(text) < times) await new Promise<void>((resolve) => changed.push(resolve));
    };
    const exit = chatCommand.run(['--no-store', '--no-mcp', '--root', project, '--base-url', s.url], io);
    await until('> ');
    stdin.write('write notes.txt x\r');
    await until('allow? ');
    stdin.write('\x03');
    await until('■ aborted');
    expect(screen).toContain('denied: no answer: interrupted');
    expect(existsSync(join(project, 'notes.txt'))).toBe(false);

    // The session is still there, and the next question is answered as usual.
    stdin.write('write other.txt y\r');
    await until('allow? ', 2);
    stdin.write('y\r');
    await until('✓ final_answer');
    stdin.write('exit\r');
    expect(await exit).toBe(0);
    expect(await readFile(join(project, 'other.txt'), 'utf8')).toBe('y');
    // The interrupted run did not go back to the model.
    expect(s.requests).toHaveLength(3);
  });
});

describe('rein chat: MCP resources and prompts', () => {
  it('@server:uri attaches the resource to the user message; /server:prompt args sends the prompt; a bad one is said and the session goes on', async () => {
    await writeFile(
      join(project, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [join(EVERYTHING_DIST, 'index.js'), 'stdio', `--started-for=${project}`] },
        },
      }),
    );
    const s = await model((request) => ({ text: `Answer ${request.messages.filter((m) => m.role === 'user').length}.` }));
    // Anthropic's wire keeps a user message's parts apart, so the attachment is seen as its own part.
    const session = chat(['--model', 'anthropic/claude-sonnet-4-5'], { ANTHROPIC_BASE_URL: s.origin, ANTHROPIC_API_KEY: 'sk-ant-test' });
    await session.waitFor(PROMPT);
    const uri = 'demo://resource/static/document/instructions.md';
    session.write(`summarize @everything:${uri} please`);
    await session.waitFor(PROMPT, 2);
    expect(session.out.stderr).toContain(`↳ attached everything:${uri}`);
    const parts = lastUserContent(s, 0);
    expect(parts[0]).toEqual({ type: 'text', text: `summarize @everything:${uri} please` });
    // The second part is the document the server really holds.
    const document = await readFile(join(EVERYTHING_DIST, 'docs', 'instructions.md'), 'utf8');
    expect(parts[1]).toMatchObject({ type: 'text', text: expect.stringContaining(document.trim()) });
    expect(parts[1]!.text).toContain(uri);
    expect(parts).toHaveLength(2);

    session.write('/everything:args-prompt city=Paris');
    await session.waitFor(PROMPT, 3);
    expect(session.out.stderr).toContain(
      '↳ MCP prompt everything:args-prompt — A prompt with two arguments, one required and one optional',
    );
    expect(lastUserContent(s, 1)).toEqual([{ type: 'text', text: "What's weather in Paris?" }]);

    session.write('/everything:no-such-prompt');
    await session.waitFor(PROMPT, 4);
    expect(session.out.stderr).toContain('rein: MCP server "everything" has no prompt "no-such-prompt"; its prompts: ');
    session.write('exit');
    expect(await session.done).toEqual({ code: 0 });
    // The unknown prompt was not sent to the model.
    expect(s.received).toHaveLength(2);
  });
});
