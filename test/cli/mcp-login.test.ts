// `rein mcp login | logout | list` through the real binary against an OAuth-protected MCP
// server over HTTP; `$BROWSER` is a stand-in browser that follows the authorization URL.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOAuthServer, type OAuthTestServer } from '../mcp/oauth-server.js';
import { rein } from './spawn.js';

const FOLLOW = fileURLToPath(new URL('../mcp/fixtures/follow-url.mjs', import.meta.url));
let project: string;
let home: string;
let server: OAuthTestServer;

beforeEach(async () => {
  project = await mkdtemp(join(tmpdir(), 'rein-login-'));
  home = await mkdtemp(join(tmpdir(), 'rein-login-home-'));
  server = await startOAuthServer();
  await writeFile(join(project, '.mcp.json'), JSON.stringify({ mcpServers: { p: { url: server.url } } }));
});

afterEach(async () => {
  await server.close();
  await rm(project, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

const run = (args: string[], extra: Record<string, string> = {}) =>
  rein(args, { cwd: project, stdin: '', env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', ...extra } });

describe('rein mcp login', () => {
  it('list shows the server needs a login; login logs in through the browser; logout forgets it', async () => {
    const before = await run(['mcp', 'list']);
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(/^p\s+http\s+needs login\s+0\s+.*rein mcp login p/m);
    // A run without a terminal never started a login.
    expect(server.requests).not.toContain('GET /authorize');

    const login = await run(['mcp', 'login', 'p'], { BROWSER: `${process.execPath} ${FOLLOW}` });
    expect(login.stderr).toContain('Open this URL to log in');
    expect(login.stdout).toContain('Logged in to "p" (2 tools).');
    expect(login.code).toBe(0);
    expect(server.pkceVerified).toBe(1);
    // Tokens live under ~/.rein/mcp-auth, and nothing printed holds one.
    expect(await readdir(join(home, '.rein', 'mcp-auth'))).toEqual([expect.stringMatching(/^p-[0-9a-f]{12}\.json$/)]);
    for (const secret of server.secrets) expect(login.stdout + login.stderr).not.toContain(secret);

    const after = await run(['mcp', 'list']);
    expect(after.stdout).toMatch(/^p\s+http\s+connected\s+2\s*$/m);
    expect(after.code).toBe(0);

    const logout = await run(['mcp', 'logout', 'p']);
    expect(logout.stdout).toContain('Logged out of "p"');
    expect((await run(['mcp', 'list'])).stdout).toMatch(/^p\s+http\s+needs login/m);
  }, 60_000);

  it('keeps tokens under $REIN_HOME when it is set, and logout of an unknown server is a usage error', async () => {
    const reinHome = join(home, 'elsewhere');
    const login = await run(['mcp', 'login', 'p'], { BROWSER: `${process.execPath} ${FOLLOW}`, REIN_HOME: reinHome });
    expect(login.code).toBe(0);
    expect(await readdir(join(reinHome, 'mcp-auth'))).toHaveLength(1);
    const unknown = await run(['mcp', 'logout', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no MCP server named "nope"');
  }, 60_000);
});
