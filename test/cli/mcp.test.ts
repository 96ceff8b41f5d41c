// `rein mcp list | tools | call` through the real binary (needs `npm run build`), in a
// temporary project with its own .mcp.json and HOME, against real servers from npm.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rein as spawnRein, spawned, type CliRun } from './spawn.js';
import { isGone } from '../mcp/helpers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const EVERYTHING = join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const MEMORY = join(root, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
const FIXTURE = join(root, 'test', 'mcp', 'fixtures', 'fault-server.mjs');

const children: ChildProcess[] = [];
let project: string;
let home: string;

beforeEach(async () => {
  project = await mkdtemp(join(tmpdir(), 'rein-mcp-cli-'));
  home = await mkdtemp(join(tmpdir(), 'rein-mcp-home-'));
  await mkdir(join(home, '.rein'));
  await writeFile(
    join(home, '.rein', 'mcp.json'),
    JSON.stringify({
      mcpServers: { memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(home, 'memory.jsonl') } } },
    }),
  );
  await writeFile(
    join(project, '.mcp.json'),
    JSON.stringify({
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        f: { command: process.execPath, args: [FIXTURE], timeoutMs: 2000 },
        broken: { command: 'node', timeoutMS: 10 },
        missing: { command: 'rein-no-such-mcp-server' },
      },
    }),
  );
});

afterEach(async () => {
  // Every rein process has ended (each test awaits it); none is left to kill.
  expect(children.filter((c) => c.exitCode === null && c.signalCode === null)).toEqual([]);
  children.length = 0;
  await rm(project, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

/** Runs `rein <args>` in the project with a clean environment and the test's HOME. */
function rein(args: string[]): Promise<CliRun> {
  const run = spawnRein(args, { cwd: project, stdin: '', env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1' } });
  children.push(spawned[spawned.length - 1] as ChildProcess);
  return run;
}

describe('rein mcp', () => {
  it('list shows every server with transport, status, tool count and last error; servers’ stderr stays off the terminal', async () => {
    const out = await rein(['mcp', 'list']);
    expect(out.code).toBe(1);
    const lines = out.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+TRANSPORT\s+STATUS\s+TOOLS\s+LAST ERROR$/);
    expect(out.stdout).toMatch(/^memory\s+stdio\s+connected\s+9\s*$/m);
    // 13: rein announces roots, so the server adds get-roots-list to its 12.
    expect(out.stdout).toMatch(/^everything\s+stdio\s+connected\s+13\s*$/m);
    expect(out.stdout).toMatch(/^f\s+stdio\s+connected\s+15\s*$/m);
    expect(out.stdout).toMatch(/^missing\s+stdio\s+failed\s+0\s+cannot start "rein-no-such-mcp-server": not found/m);
    expect(out.stdout).toMatch(
      new RegExp(
        `^broken\\s+unknown\\s+failed\\s+0\\s+${join(project, '.mcp.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: mcpServers\\.broken\\.timeoutMS is not a known field`,
        'm',
      ),
    );
    expect(out.stderr).toContain(`rein mcp: error: ${join(project, '.mcp.json')}: mcpServers.broken.timeoutMS is not a known field`);
    // What the servers wrote to their stderr went to rein's log, not to ours.
    expect(out.stderr).not.toContain('Starting default (STDIO) server');
    expect(out.stderr).not.toContain('fixture: stdio server');
  });

  it('list --json gives the statuses and diagnostics', async () => {
    const out = await rein(['mcp', 'list', '--json']);
    const data = JSON.parse(out.stdout) as {
      servers: Array<{ name: string; state: string; recentLog: string[] }>;
      diagnostics: Array<{ key: string }>;
    };
    expect(data.servers.map((s) => [s.name, s.state])).toEqual([
      ['memory', 'connected'],
      ['everything', 'connected'],
      ['f', 'connected'],
      ['missing', 'failed'],
      ['broken', 'failed'],
    ]);
    expect(data.servers.find((s) => s.name === 'everything')?.recentLog).toContain('Starting default (STDIO) server...');
    expect(data.diagnostics.map((d) => d.key)).toEqual(['mcpServers.broken.timeoutMS']);
  });

  it('tools [server] lists the tools the model would see', async () => {
    const out = await rein(['mcp', 'tools', 'everything']);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^NAME\s+SERVER\s+RISK\s+DESCRIPTION$/m);
    expect(out.stdout).toMatch(/^everything__echo\s+everything\s+read\s+Echoes back the input string/m);
    expect(out.stdout).not.toContain('memory__');
    const json = await rein(['mcp', 'tools', 'memory', '--json']);
    const tools = JSON.parse(json.stdout) as Array<{ name: string; mcpName: string; parameters: { type: string } }>;
    expect(tools.find((t) => t.mcpName === 'create_entities')).toMatchObject({
      name: 'memory__create_entities',
      parameters: { type: 'object' },
    });
  });

  it('call runs one tool without a model and prints its result', async () => {
    const out = await rein(['mcp', 'call', 'everything', 'echo', '{"message": "hi from the CLI"}']);
    expect(out).toMatchObject({ code: 0, stdout: 'Echo: hi from the CLI\n' });
    const json = await rein(['mcp', 'call', 'everything', 'everything__get-structured-content', '{"location": "Chicago"}', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      server: 'everything',
      isError: false,
      details: { structuredContent: { temperature: expect.any(Number) } },
    });
  });

  it('call reports tool errors, timeouts, bad input and unknown or failed servers with exit codes', async () => {
    const failed = await rein(['mcp', 'call', 'f', 'fail']);
    expect(failed).toMatchObject({ code: 1, stdout: '' });
    expect(failed.stderr).toContain('the widget is jammed; try widget 2');

    const slow = await rein(['mcp', 'call', 'f', 'hang', '{}', '--timeout', '300']);
    expect(slow.code).toBe(1);
    expect(slow.stderr).toContain('did not answer tools/call "hang" within 300 ms');

    const badJson = await rein(['mcp', 'call', 'f', 'echo', '{text:']);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain('the arguments are not valid JSON');

    const unknown = await rein(['mcp', 'call', 'nope', 'echo']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no MCP server named "nope"');

    const missing = await rein(['mcp', 'call', 'missing', 'echo']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('server "missing" is failed: cannot start "rein-no-such-mcp-server"');

    const noSub = await rein(['mcp', 'frobnicate']);
    expect(noSub.code).toBe(2);
  });

  it('--verbose shows the server’s stderr and progress on stderr', async () => {
    const out = await rein(['mcp', 'call', 'f', 'progress', '{"steps": 2}', '-v']);
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/^\[f\] fixture: stdio server \d+ ready$/m);
    expect(out.stderr).toMatch(/^\[f\] info: connected over stdio to fault-fixture 1\.0\.0, 15 tools$/m);
    expect(out.stderr).toContain('[f] progress 2/2 step 2');
  });

  it('leaves no server process behind, grandchildren included', async () => {
    const who = await rein(['mcp', 'call', 'f', 'whoami']);
    const child = await rein(['mcp', 'call', 'f', 'spawn_child']);
    const pids = [Number(who.stdout), Number(child.stdout)];
    expect(pids.every((pid) => pid > 0)).toBe(true);
    expect(pids.map(isGone)).toEqual([true, true]);
  });

  it('a program that exits without closing its host still takes its servers down', async () => {
    const script = `
      const { startMcp } = await import(${JSON.stringify(join(root, 'dist', 'mcp', 'host.js'))});
      const mcp = await startMcp({ servers: { f: { command: process.execPath, args: [${JSON.stringify(FIXTURE)}] } } });
      const grandchild = await mcp.callTool('f', 'spawn_child');
      console.log(mcp.status()[0].pid, grandchild.content[0].text);
      process.exit(0);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    const pids = stdout.trim().split(' ').map(Number);
    expect(pids).toHaveLength(2);
    await expect.poll(() => pids.map(isGone), { timeout: 5000, interval: 20 }).toEqual([true, true]);
  });

  it('is listed in rein --help', async () => {
    const out = await rein(['--help']);
    expect(out.stdout).toMatch(/^\s+mcp\s+list MCP servers and their tools; call a tool without a model$/m);
  });
});
