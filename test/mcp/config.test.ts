// `.mcp.json` and `~/.rein/mcp.json`: parsing, merging, ${VAR} expansion, and diagnostics
// that name the file and the key while the good entries are kept.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandVars } from '../../src/mcp/config-entry.js';
import { loadMcpConfig } from '../../src/mcp/config.js';
import { startMcp } from '../../src/mcp/host.js';
import { tempDir } from './helpers.js';

async function project(files: {
  project?: unknown;
  user?: unknown;
}): Promise<{ cwd: string; home: string; projectFile: string; userFile: string }> {
  const cwd = await tempDir();
  const home = await tempDir();
  const projectFile = join(cwd, '.mcp.json');
  const userFile = join(home, '.rein', 'mcp.json');
  if (files.project !== undefined)
    await writeFile(projectFile, typeof files.project === 'string' ? files.project : JSON.stringify(files.project, null, 2));
  if (files.user !== undefined) {
    await mkdir(join(home, '.rein'), { recursive: true });
    await writeFile(userFile, typeof files.user === 'string' ? files.user : JSON.stringify(files.user));
  }
  return { cwd, home, projectFile, userFile };
}

describe('loadMcpConfig', () => {
  it('reads the user file then the project file; the project wins on a shared name', async () => {
    const p = await project({
      user: {
        mcpServers: {
          shared: { command: 'user-cmd' },
          mine: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        },
      },
      project: { mcpServers: { shared: { command: 'project-cmd', args: ['--x', 3], cwd: 'tools', env: { PORT: 8080 } } } },
    });
    const config = await loadMcpConfig({ cwd: p.cwd, home: p.home, env: { TOKEN: 'secret' } });
    expect(config.diagnostics).toEqual([]);
    expect(config.servers).toEqual({
      shared: { command: 'project-cmd', args: ['--x', '3'], cwd: join(p.cwd, 'tools'), env: { PORT: '8080' } },
      mine: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer secret' } },
    });
    expect(config.sources).toEqual({ shared: p.projectFile, mine: p.userFile });
  });

  it('missing files are no problem', async () => {
    const p = await project({});
    expect(await loadMcpConfig({ cwd: p.cwd, home: p.home })).toEqual({ servers: {}, sources: {}, diagnostics: [] });
  });

  it('a file named in `files` that does not exist is an error; a missing default file is not', async () => {
    const p = await project({ project: { mcpServers: { ok: { command: 'ok' } } } });
    const absent = join(p.cwd, 'nope.json');
    const config = await loadMcpConfig({ cwd: p.cwd, home: p.home, files: [absent, p.projectFile] });
    expect(Object.keys(config.servers)).toEqual(['ok']);
    expect(config.diagnostics).toEqual([
      { severity: 'error', file: absent, key: '', message: 'does not exist: check the path given for it' },
    ]);
  });

  it('startMcp: a file named in configFiles that does not exist is reported; the default files stay optional', async () => {
    const p = await project({});
    const absent = join(p.cwd, 'nope.json');
    const named = await startMcp({ cwd: p.cwd, home: p.home, configFiles: [absent] });
    const defaults = await startMcp({ cwd: p.cwd, home: p.home });
    try {
      expect(named.diagnostics).toEqual([
        { severity: 'error', file: absent, key: '', message: 'does not exist: check the path given for it' },
      ]);
      expect(defaults.diagnostics).toEqual([]);
    } finally {
      await Promise.all([named.close(), defaults.close()]);
    }
  });

  it('a file that starts with a byte-order mark is read', async () => {
    const p = await project({ project: `\uFEFF${JSON.stringify({ mcpServers: { ok: { command: 'ok' } } })}` });
    const config = await loadMcpConfig({ cwd: p.cwd, home: p.home });
    expect(config).toMatchObject({ servers: { ok: { command: 'ok' } }, diagnostics: [] });
  });

  it('a file that is not JSON is reported with line and column, and the other file still counts', async () => {
    const p = await project({
      project: '{\n  "mcpServers": {\n    "a": { "command": "x", }\n  }\n}',
      user: { mcpServers: { ok: { command: 'ok' } } },
    });
    const config = await loadMcpConfig({ cwd: p.cwd, home: p.home });
    expect(Object.keys(config.servers)).toEqual(['ok']);
    expect(config.diagnostics).toEqual([
      {
        severity: 'error',
        file: p.projectFile,
        key: '',
        message: expect.stringMatching(/^is not valid JSON \(line 3, column \d+: .*\); no server of this file was started$/),
      },
    ]);
  });

  it('reports each broken entry with its key and keeps the good ones', async () => {
    const p = await project({
      project: {
        mcpServers: {
          good: { command: 'node', args: ['server.js'], timeoutMs: 5000, tools: { allow: ['read_*'], deny: ['read_secret'] } },
          nocommand: { args: ['x'] },
          typo: { command: 'node', timeoutMS: 5 },
          both: { command: 'x', url: 'http://x' },
          badurl: { url: 'ftp://example.com' },
          badtypes: { command: 'x', args: 'not-an-array', env: { A: { nested: true } }, timeoutMs: -1, enabled: 'yes' },
          wrongtype: { type: 'websocket', url: 'http://x' },
          'bad name!': { command: 'x' },
          unset: { command: 'x', env: { KEY: '${NOT_SET_ANYWHERE}' } },
          notobject: 'node server.js',
        },
      },
    });
    const config = await loadMcpConfig({ cwd: p.cwd, home: p.home, env: {} });
    expect(Object.keys(config.servers)).toEqual(['good']);
    const keys = config.diagnostics.map((d) => `${d.key}: ${d.message}`);
    expect(keys).toEqual([
      'mcpServers.nocommand.command: is missing: give "command" (and "args") to start a local server, or "url" for a remote one',
      expect.stringMatching(
        /^mcpServers\.typo\.timeoutMS: is not a known field of a stdio server \(known: type, timeoutMs, .*\); remove it or fix its spelling$/,
      ),
      'mcpServers.both: has both "command" and "url": keep "command" for a local (stdio) server or "url" for a remote one',
      'mcpServers.badurl.url: must be an http:// or https:// URL; got "ftp://example.com"',
      'mcpServers.badtypes.timeoutMs: must be a positive number of milliseconds; got number -1',
      'mcpServers.badtypes.enabled: must be true or false; got string "yes"',
      'mcpServers.badtypes.args: must be an array of strings; got string "not-an-array"',
      'mcpServers.badtypes.env.A: must be a string; got an object',
      'mcpServers.wrongtype.type: must be "stdio", "http" or "sse"; got "websocket"',
      'mcpServers.bad name!: server name "bad name!" is not usable: use letters, digits, "_", "-" or "." (it becomes part of tool names)',
      'mcpServers.unset.env.KEY: uses ${NOT_SET_ANYWHERE}, which is not set: export NOT_SET_ANYWHERE or write ${NOT_SET_ANYWHERE:-default}',
      'mcpServers.notobject: must be an object with "command" (a local server) or "url" (a remote one); got string "node server.js"',
    ]);
    expect(config.diagnostics.every((d) => d.file === p.projectFile && d.severity === 'error')).toBe(true);
    expect(config.diagnostics[0]?.server).toBe('nocommand');
  });

  it('a broken project entry replaces a good user entry of the same name instead of silently falling back', async () => {
    const p = await project({ user: { mcpServers: { s: { command: 'ok' } } }, project: { mcpServers: { s: { comand: 'typo' } } } });
    const config = await loadMcpConfig({ cwd: p.cwd, home: p.home });
    expect(config.servers).toEqual({});
    expect(config.diagnostics.map((d) => d.key)).toEqual(['mcpServers.s.command', 'mcpServers.s.comand']);
  });

  it('accepts the fields other clients write: type, disabled, description', async () => {
    const p = await project({
      project: {
        mcpServers: {
          a: { type: 'stdio', command: 'x', disabled: true, description: 'the a server' },
          b: { type: 'streamable-http', url: 'https://b.example/mcp' },
          c: { type: 'sse', url: 'https://c.example/sse', toolPrefix: 'c_' },
        },
      },
    });
    const config = await loadMcpConfig({ cwd: p.cwd, home: p.home });
    expect(config.diagnostics).toEqual([]);
    expect(config.servers).toEqual({
      a: { command: 'x', enabled: false, cwd: p.cwd },
      b: { url: 'https://b.example/mcp', type: 'http' },
      c: { url: 'https://c.example/sse', type: 'sse', toolPrefix: 'c_' },
    });
  });

  it('servers given in code are checked the same way and win over files', async () => {
    const p = await project({ project: { mcpServers: { s: { command: 'file' } } } });
    const config = await loadMcpConfig({ cwd: p.cwd, home: p.home, servers: { s: { command: 'code' }, t: { url: 'nope' } } });
    expect(config.servers).toEqual({ s: { command: 'code' } });
    expect(config.sources).toEqual({ s: 'options' });
    expect(config.diagnostics).toEqual([
      { severity: 'error', key: 'mcpServers.t.url', server: 't', message: 'must be an http:// or https:// URL; got "nope"' },
    ]);
  });

  it('a file without mcpServers is a warning, a wrong shape an error', async () => {
    const p = await project({ project: { servers: {} }, user: '[1, 2]' });
    const config = await loadMcpConfig({ cwd: p.cwd, home: p.home });
    expect(config.diagnostics).toEqual([
      { severity: 'error', file: p.userFile, key: '', message: expect.stringContaining('must be a JSON object') },
      { severity: 'warning', file: p.projectFile, key: 'mcpServers', message: 'is missing: this file declares no servers' },
    ]);
  });
});

describe('expandVars', () => {
  it('expands ${VAR} and ${VAR:-default}, and reports unset variables', () => {
    const missing: string[] = [];
    const env = { HOME: '/home/me', EMPTY: '' };
    expect(expandVars('${HOME}/x ${EMPTY:-fallback} ${NOPE:-} ${GONE} $HOME', env, (name) => missing.push(name))).toBe(
      '/home/me/x fallback   $HOME',
    );
    expect(missing).toEqual(['GONE']);
  });
});
