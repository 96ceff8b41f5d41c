// OAuth for remote MCP servers against a real authorization server over HTTP
// (./oauth-server.ts): discovery at each metadata location, each registration method,
// PKCE checked by the server, refresh, step-up, client credentials (secret and private-key
// JWT), a wrong resource refused, and tokens never in logs or events.
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpEvent, McpLogEntry } from '../../src/mcp/types.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { collect, setup } from '../loop/helpers.js';
import { host, tempDir, textOf } from './helpers.js';
import { followInBrowser, startOAuthServer, type OAuthServerOptions, type OAuthTestServer } from './oauth-server.js';

const servers: OAuthTestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function oauthServer(options: OAuthServerOptions = {}): Promise<OAuthTestServer> {
  const server = await startOAuthServer(options);
  servers.push(server);
  return server;
}

/** A host with one server `p`, a browser that follows the login, and everything it logged. */
async function connect(
  server: OAuthTestServer,
  extra: Record<string, unknown> = {},
  options: { reinHome?: string; authorize?: boolean } = {},
) {
  const reinHome = options.reinHome ?? (await tempDir('rein-home-'));
  const log: McpLogEntry[] = [];
  const events: McpEvent[] = [];
  const mcp = await host(
    { p: { url: server.url, ...extra } },
    {
      reinHome,
      log: (e) => log.push(e),
      onEvent: (e) => events.push(e),
      ...(options.authorize === false ? {} : { authorize: followInBrowser }),
    },
  );
  return { mcp, reinHome, log, events };
}

/** Every file under a folder, as text. */
function filesUnder(dir: string): Array<{ path: string; text: string; mode: number }> {
  const out: Array<{ path: string; text: string; mode: number }> = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out.push({ path, text: readFileSync(path, 'utf8'), mode: statSync(path).mode & 0o777 });
  }
  return out;
}

function noSecrets(server: OAuthTestServer, ...texts: string[]): void {
  const all = texts.join('\n');
  for (const secret of server.secrets) expect(all).not.toContain(secret);
}

describe('discovery', () => {
  const cases: Array<[string, OAuthServerOptions, RegExp]> = [
    ['protected resource metadata named in WWW-Authenticate', { prm: 'header' }, /GET \/meta\/prm/],
    ['protected resource metadata at the path-aware well-known URL', { prm: 'path' }, /GET \/.well-known\/oauth-protected-resource\/mcp/],
    ['protected resource metadata at the root well-known URL', { prm: 'root' }, /GET \/.well-known\/oauth-protected-resource$/m],
    ['authorization server metadata by OpenID discovery', { asMetadata: 'openid' }, /GET \/.well-known\/openid-configuration$/m],
    ['RFC 8414 metadata of an issuer with a path', { issuerPath: '/tenant' }, /GET \/.well-known\/oauth-authorization-server\/tenant/],
    [
      'OpenID discovery of an issuer with a path',
      { asMetadata: 'openid', issuerPath: '/tenant' },
      /GET \/.well-known\/openid-configuration\/tenant/,
    ],
    ['a legacy server without resource metadata (its own origin)', { prm: 'none' }, /GET \/.well-known\/oauth-authorization-server$/m],
  ];
  for (const [name, options, seen] of cases) {
    it(`logs in with ${name}`, async () => {
      const server = await oauthServer(options);
      const { mcp } = await connect(server);
      expect(mcp.status()[0]).toMatchObject({ state: 'connected' });
      expect(server.requests.join('\n')).toMatch(seen);
      expect(textOf((await mcp.callTool('p', 'whoami', {})).content)).toBe('scope: mcp');
    });
  }
});

describe('registration and the code flow', () => {
  it('registers dynamically, sends PKCE S256 (checked by the server) and the resource indicator, and stores tokens 0600', async () => {
    const server = await oauthServer();
    const { mcp, reinHome, log, events } = await connect(server);
    expect(mcp.status()[0]?.state).toBe('connected');
    expect(server.registrations).toHaveLength(1);
    expect(server.registrations[0]).toMatchObject({
      client_name: 'rein',
      redirect_uris: [expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)],
      grant_types: ['authorization_code', 'refresh_token'],
    });
    expect(server.pkceVerified).toBe(1);
    expect(server.resources).toEqual([server.url, server.url]);
    const files = filesUnder(reinHome);
    expect(files).toHaveLength(1);
    expect(files[0]?.path).toMatch(/mcp-auth\/p-[0-9a-f]{12}\.json$/);
    expect(files[0]?.mode).toBe(0o600);
    expect(statSync(join(reinHome, 'mcp-auth')).mode & 0o777).toBe(0o700);
    expect(events).toContainEqual({ type: 'mcp_auth', server: 'p', status: 'authorized', scope: 'mcp' });
    noSecrets(server, JSON.stringify(log), JSON.stringify(events), JSON.stringify(mcp.status()));
  });

  it('a second process uses the stored token without a login', async () => {
    const server = await oauthServer();
    const first = await connect(server);
    await first.mcp.close();
    const again = await connect(server, {}, { reinHome: first.reinHome, authorize: false });
    expect(again.mcp.status()[0]?.state).toBe('connected');
    expect(server.pkceVerified).toBe(1);
  });

  it('uses a pre-registered client id and secret from the entry (no registration)', async () => {
    const server = await oauthServer({ dynamic: false, clients: { 'rein-app': { secret: 's3cret' } } });
    const { mcp } = await connect(server, { auth: { clientId: 'rein-app', clientSecret: 's3cret', scope: 'mcp' } });
    expect(mcp.status()[0]?.state).toBe('connected');
    expect(server.registrations).toHaveLength(0);
    expect(server.pkceVerified).toBe(1);
  });

  it('uses a Client ID Metadata Document URL as the client id where the server supports it', async () => {
    const server = await oauthServer({ cimd: true });
    const { mcp } = await connect(server, { auth: { clientMetadataUrl: 'https://rein.example/client.json' } });
    expect(mcp.status()[0]?.state).toBe('connected');
    expect(server.registrations).toHaveLength(0);
  });

  it('refuses a server whose metadata names another resource', async () => {
    const server = await oauthServer({ resource: 'http://127.0.0.1:1/elsewhere' });
    const { mcp } = await connect(server);
    const status = mcp.status()[0];
    expect(status?.state).not.toBe('connected');
    expect(status?.lastError).toMatch(/Protected resource http:\/\/127\.0\.0\.1:1\/elsewhere does not match/);
    expect(server.grants).toEqual([]);
  });

  it('without a way to log in, reports the server as needing a login and never waits', async () => {
    const server = await oauthServer();
    const { mcp, events } = await connect(server, {}, { authorize: false });
    expect(mcp.status()[0]).toMatchObject({ state: 'failed', needsLogin: true, lastError: expect.stringContaining('rein mcp login p') });
    expect(events).toContainEqual({ type: 'mcp_auth', server: 'p', status: 'needs_login' });
    expect(server.requests).not.toContain('GET /authorize');
    // Nor was a client registered that nobody would use.
    expect(server.registrations).toEqual([]);
  });
});

describe('refresh and step-up', () => {
  it('refreshes an expired token on 401 and keeps working', async () => {
    const server = await oauthServer();
    const { mcp, events } = await connect(server);
    server.expireTokens();
    expect(textOf((await mcp.callTool('p', 'whoami', {})).content)).toBe('scope: mcp');
    expect(server.grants).toEqual(['authorization_code', 'refresh_token']);
    expect(events.filter((e) => e.type === 'mcp_auth').map((e) => (e as { status: string }).status)).toEqual(['authorized', 'refreshed']);
    expect(server.pkceVerified).toBe(1);
  });

  it('refreshes a token about to expire before the request', async () => {
    const server = await oauthServer();
    const { mcp, reinHome } = await connect(server);
    // The stored token was obtained almost an hour ago: it expires within the minute.
    const [file] = filesUnder(reinHome);
    const stored = JSON.parse(file?.text ?? '{}') as { tokens: { obtained_at: number } };
    stored.tokens.obtained_at = Date.now() - 3590_000;
    writeFileSync(file?.path ?? '', JSON.stringify(stored));
    const before = server.requests.length;
    await mcp.callTool('p', 'whoami', {});
    const after = server.requests.slice(before);
    expect(server.grants).toContain('refresh_token');
    expect(after.slice(0, 2)).toEqual(['POST /token', 'POST /mcp']);
    expect(server.pkceVerified).toBe(1);
  });

  it('steps up the scope on 403 insufficient_scope with a new authorization', async () => {
    const server = await oauthServer();
    const { mcp, events } = await connect(server);
    const result = await mcp.callTool('p', 'admin', {});
    expect(textOf(result.content)).toBe('admin done');
    expect(server.authorizeScopes).toEqual(['mcp', 'mcp admin']);
    expect(events).toContainEqual({ type: 'mcp_auth', server: 'p', status: 'step_up', scope: 'mcp admin' });
  });
});

describe('client credentials', () => {
  it('with a client secret', async () => {
    const server = await oauthServer({ clients: { machine: { secret: 'm-secret' } } });
    const { mcp, log } = await connect(
      server,
      { auth: { grant: 'client_credentials', clientId: 'machine', clientSecret: 'm-secret', scope: 'mcp' } },
      { authorize: false },
    );
    expect(mcp.status()[0]?.state).toBe('connected');
    expect(server.grants).toEqual(['client_credentials']);
    expect(server.requests).not.toContain('GET /authorize');
    noSecrets(server, JSON.stringify(log));
  });

  it('with a private-key JWT', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const server = await oauthServer({
      clients: { signer: { publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() } },
    });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const { mcp } = await connect(
      server,
      { auth: { grant: 'client_credentials', clientId: 'signer', privateKeyPem: pem } },
      { authorize: false },
    );
    expect(mcp.status()[0]?.state).toBe('connected');
    expect(textOf((await mcp.callTool('p', 'whoami', {})).content)).toBe('scope: mcp');
  });

  it("a wrong secret fails with the server's answer", async () => {
    const server = await oauthServer({ clients: { machine: { secret: 'right' } } });
    const { mcp } = await connect(
      server,
      { auth: { grant: 'client_credentials', clientId: 'machine', clientSecret: 'wrong' } },
      { authorize: false },
    );
    expect(mcp.status()[0]?.state).not.toBe('connected');
    expect(mcp.status()[0]?.lastError).toMatch(/authorization server answered invalid_client/);
  });
});

describe('logout', () => {
  it('forgets the stored tokens', async () => {
    const server = await oauthServer();
    const { mcp, reinHome } = await connect(server);
    expect(filesUnder(reinHome)).toHaveLength(1);
    expect(mcp.logout('p')).toBe(true);
    expect(filesUnder(reinHome)).toHaveLength(0);
    expect(mcp.logout('p')).toBe(false);
  });
});

describe('tokens stay out of runs', () => {
  it('an agent run through the protected server stores no token in its events', async () => {
    const server = await oauthServer();
    const { mcp, log, events: hostEvents } = await connect(server);
    const dir = await tempDir();
    const store = new SqliteStore({ path: join(dir, 'rein.db') });
    try {
      const { agent } = await setup(
        (_request, { index }) =>
          index === 0
            ? {
                toolCalls: [
                  { name: 'p__whoami', arguments: {} },
                  { name: 'p__admin', arguments: {} },
                ],
              }
            : { text: 'done' },
        { toolSources: [mcp], store },
      );
      server.expireTokens();
      const { events, result } = await collect(agent.run('who am I?'));
      expect(result.text).toBe('done');
      // The run went through a refresh and a step-up, and the results came back.
      expect(server.grants).toEqual(['authorization_code', 'refresh_token', 'authorization_code']);
      const stored = await store.loadEvents(result.runId);
      expect(JSON.stringify(stored)).toContain('admin done');
      noSecrets(server, JSON.stringify(events), JSON.stringify(stored), JSON.stringify(log), JSON.stringify(hostEvents));
    } finally {
      await store.close();
    }
    // Nor anywhere in the database file itself.
    noSecrets(server, readFileSync(join(dir, 'rein.db')).toString('latin1'));
  });
});
