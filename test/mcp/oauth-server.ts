/**
 * An OAuth-protected MCP server for the tests, over real HTTP on 127.0.0.1: a resource
 * server (the official SDK's MCP server behind bearer tokens, answering 401 / 403 with
 * `WWW-Authenticate`) and an authorization server of our own (metadata at the location the
 * test picks, dynamic registration, Client ID Metadata Documents, pre-registered clients,
 * authorization code with PKCE S256 checked, refresh, client credentials with a secret or
 * a private-key JWT, resource indicators checked). Everything it issued is recorded.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { importSPKI, jwtVerify } from 'jose';

export interface OAuthServerOptions {
  /** Where the protected resource metadata is found: named in `WWW-Authenticate`, at the path-aware or the root well-known URL, or nowhere (legacy servers). */
  prm?: 'header' | 'path' | 'root' | 'none';
  /** The authorization server metadata document: RFC 8414 or OpenID discovery; `issuerPath` gives the issuer a path (`/tenant`). */
  asMetadata?: 'oauth' | 'openid';
  issuerPath?: string;
  /** Whether dynamic registration and metadata-document client ids are offered. */
  dynamic?: boolean;
  cimd?: boolean;
  /** Pre-registered clients: id → secret ('' for a public client) or a PEM public key for private_key_jwt. */
  clients?: Record<string, { secret?: string; publicKeyPem?: string; grants?: string[] }>;
  /** The `resource` the metadata names (default: the MCP URL). */
  resource?: string;
  /** Lifetime of access tokens, in seconds. */
  tokenTtl?: number;
  /** Scope every token gets when none is asked for. */
  defaultScope?: string;
}

interface IssuedToken {
  token: string;
  clientId: string;
  scope: string;
  resource: string | undefined;
  expiresAt: number;
}

/** The running server and what it saw. */
export interface OAuthTestServer {
  /** The MCP endpoint. */
  url: string;
  origin: string;
  issuer: string;
  /** Every path requested, in order (`GET /.well-known/...`, `POST /token`). */
  requests: string[];
  /** Every access and refresh token issued. */
  secrets: string[];
  registrations: Array<Record<string, unknown>>;
  /** Token requests by grant type, and PKCE verifications that passed. */
  grants: string[];
  pkceVerified: number;
  /** `resource` values of authorization and token requests. */
  resources: Array<string | undefined>;
  /** Scopes asked for at /authorize. */
  authorizeScopes: string[];
  /** Makes every access token issued so far expire now. */
  expireTokens(): void;
  close(): Promise<void>;
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (data += chunk));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

function makeMcp(scopeOf: () => string): McpServer {
  const mcp = new McpServer({ name: 'protected', version: '1.0.0' });
  mcp.registerTool('whoami', { description: 'the scope of the token' }, () => ({
    content: [{ type: 'text', text: `scope: ${scopeOf()}` }],
  }));
  mcp.registerTool('admin', { description: 'needs the admin scope' }, () => ({ content: [{ type: 'text', text: 'admin done' }] }));
  return mcp;
}

/** Starts the server on an ephemeral port. */
export async function startOAuthServer(options: OAuthServerOptions = {}): Promise<OAuthTestServer> {
  const prm = options.prm ?? 'path';
  const clients = new Map(Object.entries(options.clients ?? {}));
  const codes = new Map<
    string,
    { clientId: string; challenge: string; redirectUri: string; scope: string; resource: string | undefined }
  >();
  const tokens = new Map<string, IssuedToken>();
  const refreshTokens = new Map<string, IssuedToken>();
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; scope: { current: string } }>();
  const state: Omit<OAuthTestServer, 'close' | 'expireTokens'> = {
    url: '',
    origin: '',
    issuer: '',
    requests: [],
    secrets: [],
    registrations: [],
    grants: [],
    pkceVerified: 0,
    resources: [],
    authorizeScopes: [],
  };
  const issuerPath = options.issuerPath ?? '';
  const ttl = options.tokenTtl ?? 3600;

  const issue = (clientId: string, scope: string, resource: string | undefined): Record<string, unknown> => {
    const access = `at-${randomBytes(12).toString('hex')}`;
    const refresh = `rt-${randomBytes(12).toString('hex')}`;
    const token: IssuedToken = { token: access, clientId, scope, resource, expiresAt: Date.now() + ttl * 1000 };
    tokens.set(access, token);
    refreshTokens.set(refresh, token);
    state.secrets.push(access, refresh);
    return { access_token: access, token_type: 'Bearer', expires_in: ttl, refresh_token: refresh, scope };
  };

  const authenticateClient = async (req: IncomingMessage, form: URLSearchParams, tokenUrl: string): Promise<string | undefined> => {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    let id = form.get('client_id') ?? undefined;
    let secret = form.get('client_secret') ?? undefined;
    if (basic)
      [id, secret] = Buffer.from(basic[1] as string, 'base64')
        .toString()
        .split(':')
        .map(decodeURIComponent);
    const assertion = form.get('client_assertion');
    if (assertion) {
      const claims = JSON.parse(Buffer.from(assertion.split('.')[1] as string, 'base64url').toString()) as { iss: string };
      const client = clients.get(claims.iss);
      if (!client?.publicKeyPem) return undefined;
      await jwtVerify(assertion, await importSPKI(client.publicKeyPem, 'RS256'), {
        issuer: claims.iss,
        subject: claims.iss,
        audience: [state.issuer, tokenUrl],
      });
      return claims.iss;
    }
    if (id === undefined) return undefined;
    if (options.cimd && id.startsWith('https://')) return id;
    const client = clients.get(id);
    if (!client) return undefined;
    if (client.secret && client.secret !== secret) return undefined;
    return id;
  };

  const metadata = () => ({
    issuer: state.issuer,
    authorization_endpoint: `${state.origin}/authorize`,
    token_endpoint: `${state.origin}/token`,
    ...(options.dynamic !== false ? { registration_endpoint: `${state.origin}/register` } : {}),
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    ...(options.cimd ? { client_id_metadata_document_supported: true } : {}),
    ...(options.asMetadata === 'openid'
      ? { jwks_uri: `${state.origin}/jwks`, subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] }
      : {}),
  });

  const http: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', state.origin);
    state.requests.push(`${req.method} ${url.pathname}`);
    const resource = options.resource ?? state.url;
    const prmDoc = { resource, authorization_servers: [state.issuer], scopes_supported: [options.defaultScope ?? 'mcp'] };
    // Protected resource metadata (RFC 9728).
    if (req.method === 'GET' && url.pathname === '/meta/prm' && prm === 'header') return json(res, 200, prmDoc);
    if (req.method === 'GET' && url.pathname === '/.well-known/oauth-protected-resource/mcp' && prm === 'path')
      return json(res, 200, prmDoc);
    if (req.method === 'GET' && url.pathname === '/.well-known/oauth-protected-resource' && prm === 'root') return json(res, 200, prmDoc);
    // Authorization server metadata (RFC 8414 / OpenID discovery) at the issuer's locations.
    const kind = options.asMetadata ?? 'oauth';
    const asPaths =
      kind === 'oauth'
        ? [`/.well-known/oauth-authorization-server${issuerPath}`]
        : issuerPath === ''
          ? ['/.well-known/openid-configuration']
          : [`/.well-known/openid-configuration${issuerPath}`, `${issuerPath}/.well-known/openid-configuration`];
    // A legacy server (no PRM) has its authorization server at its own origin.
    if (req.method === 'GET' && asPaths.includes(url.pathname)) return json(res, 200, metadata());
    if (req.method === 'POST' && url.pathname === '/register' && options.dynamic !== false) {
      const meta = JSON.parse(await body(req)) as Record<string, unknown>;
      state.registrations.push(meta);
      const id = `dyn-${randomUUID()}`;
      const secret = meta.token_endpoint_auth_method === 'none' ? undefined : `sec-${randomBytes(8).toString('hex')}`;
      clients.set(id, { ...(secret ? { secret } : {}) });
      return json(res, 201, {
        ...meta,
        client_id: id,
        ...(secret ? { client_secret: secret } : {}),
        client_id_issued_at: Math.floor(Date.now() / 1000),
      });
    }
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const p = url.searchParams;
      const clientId = p.get('client_id') ?? '';
      const redirectUri = p.get('redirect_uri') ?? '';
      const known = clients.has(clientId) || (options.cimd === true && clientId.startsWith('https://'));
      if (!known || !/^http:\/\/127\.0\.0\.1:\d+\/callback$/.test(redirectUri))
        return json(res, 400, { error: 'invalid_request', error_description: 'unknown client or redirect' });
      const back = new URL(redirectUri);
      back.searchParams.set('state', p.get('state') ?? '');
      if (p.get('code_challenge_method') !== 'S256' || !p.get('code_challenge')) {
        back.searchParams.set('error', 'invalid_request');
      } else if (prm !== 'none' && p.get('resource') !== resource) {
        back.searchParams.set('error', 'invalid_target');
      } else {
        const code = `code-${randomBytes(8).toString('hex')}`;
        const scope = p.get('scope') ?? options.defaultScope ?? 'mcp';
        state.authorizeScopes.push(scope);
        state.resources.push(p.get('resource') ?? undefined);
        codes.set(code, {
          clientId,
          challenge: p.get('code_challenge') as string,
          redirectUri,
          scope,
          resource: p.get('resource') ?? undefined,
        });
        back.searchParams.set('code', code);
      }
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const form = new URLSearchParams(await body(req));
      const grant = form.get('grant_type') ?? '';
      state.grants.push(grant);
      const clientId = await authenticateClient(req, form, `${state.origin}/token`).catch(() => undefined);
      if (!clientId) return json(res, 401, { error: 'invalid_client' });
      if (grant === 'authorization_code') {
        const code = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (!code || code.clientId !== clientId || code.redirectUri !== form.get('redirect_uri'))
          return json(res, 400, { error: 'invalid_grant' });
        if (s256(form.get('code_verifier') ?? '') !== code.challenge)
          return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
        state.pkceVerified++;
        state.resources.push(form.get('resource') ?? undefined);
        return json(res, 200, issue(clientId, code.scope, form.get('resource') ?? undefined));
      }
      if (grant === 'refresh_token') {
        const old = refreshTokens.get(form.get('refresh_token') ?? '');
        if (!old || old.clientId !== clientId) return json(res, 400, { error: 'invalid_grant' });
        refreshTokens.delete(form.get('refresh_token') ?? '');
        return json(res, 200, issue(clientId, old.scope, form.get('resource') ?? old.resource));
      }
      if (grant === 'client_credentials') {
        state.resources.push(form.get('resource') ?? undefined);
        return json(res, 200, issue(clientId, form.get('scope') ?? options.defaultScope ?? 'mcp', form.get('resource') ?? undefined));
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (url.pathname !== '/mcp') return json(res, 404, { error: 'not found' });

    // The resource server: a valid token for this resource, else 401 with the challenge.
    const challenge = `Bearer${prm === 'header' ? ` resource_metadata="${state.origin}/meta/prm"` : ''}`;
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ? tokens.get(bearer) : undefined;
    // Without resource metadata (a legacy server) clients send no resource indicator.
    if (!token || token.expiresAt <= Date.now() || (prm !== 'none' && token.resource !== state.url)) {
      return json(res, 401, { error: 'invalid_token' }, { 'www-authenticate': `${challenge}${token ? ', error="invalid_token"' : ''}` });
    }
    const text = req.method === 'POST' ? await body(req) : '';
    const message = text ? (JSON.parse(text) as { method?: string; params?: { name?: string } }) : undefined;
    if (message?.method === 'tools/call' && message.params?.name === 'admin' && !token.scope.split(' ').includes('admin')) {
      return json(
        res,
        403,
        { error: 'insufficient_scope' },
        {
          'www-authenticate': `Bearer error="insufficient_scope", scope="mcp admin"${prm === 'header' ? `, resource_metadata="${state.origin}/meta/prm"` : ''}`,
        },
      );
    }
    const id = req.headers['mcp-session-id'];
    let session = typeof id === 'string' ? sessions.get(id) : undefined;
    if (session) session.scope.current = token.scope;
    if (!session) {
      if (typeof id === 'string') return json(res, 404, { error: 'unknown session' });
      const scope = { current: token.scope };
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, { transport, scope }),
      });
      await makeMcp(() => scope.current).connect(transport);
      session = { transport, scope };
    }
    await session.transport.handleRequest(req, res, message);
  });

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  state.origin = `http://127.0.0.1:${port}`;
  state.url = `${state.origin}/mcp`;
  state.issuer = `${state.origin}${issuerPath}`;
  return Object.assign(state, {
    expireTokens: () => {
      for (const token of tokens.values()) token.expiresAt = 0;
    },
    close: async () => {
      for (const s of sessions.values()) await s.transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  });
}

/** The `authorize` hook of the tests: a "browser" that follows the authorization URL and its redirect over HTTP. */
export async function followInBrowser(url: URL): Promise<void> {
  const answer = await fetch(url, { redirect: 'manual' });
  const location = answer.headers.get('location');
  if (!location) throw new Error(`the authorization endpoint answered ${answer.status}: ${await answer.text()}`);
  await (await fetch(location)).text();
}
