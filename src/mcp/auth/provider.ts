/**
 * rein's `OAuthClientProvider` for one server: the SDK's `auth()` runs the protocol
 * (protected-resource and authorization-server discovery, registration, PKCE S256, the
 * resource indicator, refresh); this class answers its questions from the entry's `auth`
 * config and the server's {@link TokenStore}, opens the authorization URL through the
 * host's `authorize` hook and waits for the code at the {@link LoopbackListener}. Without
 * a hook (no terminal) a login is never started: the server is reported as needing one.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReinError } from '../../errors.js';
import type { AuthSdk } from '../sdk.js';
import type { McpAuthConfig, McpEvent } from '../types.js';
import type { LoopbackListener } from './loopback.js';
import type { StoredAuth, TokenStore } from './token-store.js';

/** Step-ups on `403 insufficient_scope` allowed per connection before giving up. */
export const MAX_STEP_UPS = 2;
/** Tokens this close to expiry (at most half their lifetime) are refreshed before a request rather than after its 401. */
const REFRESH_MARGIN_MS = 60_000;
/** Where the redirect would go when no listener runs (never followed: no login starts then). */
const PLACEHOLDER_REDIRECT = 'http://127.0.0.1/callback';

/** What a provider is made with. */
export interface ProviderOptions {
  server: string;
  serverUrl: URL;
  config: McpAuthConfig | undefined;
  store: TokenStore;
  /** Opens the authorization URL for a person; absent: nobody can log in now. */
  authorize: ((url: URL) => Promise<void>) | undefined;
  /** The host's redirect listener, when `authorize` is given. */
  listener: LoopbackListener | undefined;
  emit: (event: McpEvent) => void;
  note: (level: 'info' | 'warn', message: string) => void;
  auth: AuthSdk;
}

/** The `auth` error that says a person must log in first; `details.needsLogin` marks it. */
export function needsLogin(server: string, why: string): ReinError {
  return new ReinError('auth', 'fatal', `MCP server "${server}" needs a login (${why}): run \`rein mcp login ${server}\``, {
    details: { needsLogin: true },
  });
}

/** True for the error of {@link needsLogin}. */
export function isNeedsLogin(error: unknown): boolean {
  return error instanceof ReinError && error.code === 'auth' && error.details?.needsLogin === true;
}

/** See the module comment. */
export class ReinOAuthProvider implements OAuthClientProvider {
  readonly clientMetadataUrl: string | undefined;
  addClientAuthentication?: OAuthClientProvider['addClientAuthentication'];
  private verifier = '';
  private currentState = '';
  private pending: { promise: Promise<string>; abort: AbortController } | undefined;
  /** A scope the server asked for with `403 insufficient_scope`, and how often. */
  private wantedScope: string | undefined;
  private stepUps = 0;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly options: ProviderOptions) {
    const config = options.config ?? {};
    this.clientMetadataUrl = config.clientMetadataUrl;
    if (config.privateKeyPem !== undefined && config.clientId !== undefined) {
      // private_key_jwt (RFC 7523): the SDK signs the assertion with jose.
      const sign = loadPrivateKeyJwt({
        clientId: config.clientId,
        privateKeyPem: config.privateKeyPem,
        alg: config.signingAlgorithm ?? 'RS256',
      });
      this.addClientAuthentication = (headers, params, url, metadata) => sign.then((add) => add(headers, params, url, metadata));
    }
  }

  private get machine(): boolean {
    return this.options.config?.grant === 'client_credentials';
  }

  get redirectUrl(): string | undefined {
    if (this.machine) return undefined;
    return this.options.listener?.url ?? PLACEHOLDER_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    const config = this.options.config ?? {};
    const metadata: OAuthClientMetadata = {
      client_name: 'rein',
      redirect_uris: this.machine ? [] : [String(this.redirectUrl)],
      grant_types: this.machine ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
      response_types: this.machine ? [] : ['code'],
      token_endpoint_auth_method:
        config.privateKeyPem !== undefined ? 'private_key_jwt' : config.clientSecret !== undefined ? 'client_secret_basic' : 'none',
    };
    if (config.scope !== undefined) metadata.scope = config.scope;
    return metadata;
  }

  state(): string {
    this.currentState = randomBytes(16).toString('base64url');
    return this.currentState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const config = this.options.config ?? {};
    if (config.clientId !== undefined) {
      return { client_id: config.clientId, ...(config.clientSecret !== undefined ? { client_secret: config.clientSecret } : {}) };
    }
    const stored = this.read().clientInformation as (OAuthClientInformationMixed & { redirect_uris?: string[] }) | undefined;
    // Nobody can log in now: registering a client that no one will use would only leave
    // one more registration at the server on every run.
    if (!stored && !this.machine && !this.options.authorize) {
      this.options.emit({ type: 'mcp_auth', server: this.options.server, status: 'needs_login' });
      throw needsLogin(this.options.server, 'it asks for OAuth and no token is stored');
    }
    // A registration made for another redirect port (an earlier process) cannot take this
    // one's redirect at servers that match exactly: register again.
    const redirect = this.options.listener?.url;
    if (
      stored?.redirect_uris &&
      redirect !== undefined &&
      !stored.redirect_uris.includes(redirect) &&
      stored.client_id !== this.clientMetadataUrl
    )
      return undefined;
    return stored;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    if (this.options.config?.clientId !== undefined) return;
    this.options.store.update((s) => (s.clientInformation = { ...information } as StoredAuth['clientInformation']));
  }

  tokens(): OAuthTokens | undefined {
    const tokens = this.read().tokens;
    if (!tokens) return undefined;
    const { obtained_at: _obtained, ...rest } = tokens;
    // Step-up: a refresh cannot widen the scope, so without the scope asked for the
    // refresh token is withheld and `auth()` starts a new authorization with that scope.
    if (this.wantedScope !== undefined && !covers(tokens.scope, this.wantedScope)) {
      const { refresh_token: _refresh, ...withoutRefresh } = rest;
      return withoutRefresh as OAuthTokens;
    }
    return rest as OAuthTokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    const refreshed = this.read().tokens !== undefined;
    // Some servers send no new refresh token with a refreshed access token: keep the old one.
    const old = this.read().tokens?.refresh_token;
    this.options.store.update(
      (s) =>
        (s.tokens = {
          ...tokens,
          ...(tokens.refresh_token === undefined && old !== undefined ? { refresh_token: old } : {}),
          obtained_at: Date.now(),
        }),
    );
    const status = this.wantedScope !== undefined ? 'step_up' : refreshed ? 'refreshed' : 'authorized';
    if (this.wantedScope !== undefined && covers(tokens.scope, this.wantedScope)) this.wantedScope = undefined;
    this.options.emit({
      type: 'mcp_auth',
      server: this.options.server,
      status,
      ...(tokens.scope !== undefined ? { scope: tokens.scope } : {}),
    });
    this.options.note(
      'info',
      `${status === 'authorized' ? 'authorized' : status === 'refreshed' ? 'token refreshed' : 'scope stepped up'}${tokens.scope ? ` (scope ${tokens.scope})` : ''}`,
    );
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    const { authorize, listener, server } = this.options;
    if (!authorize || !listener?.url) {
      this.options.emit({ type: 'mcp_auth', server, status: 'needs_login' });
      throw needsLogin(
        server,
        this.read().tokens ? 'its token expired and cannot be refreshed' : 'it asks for OAuth and no token is stored',
      );
    }
    const abort = new AbortController();
    // Listen before handing the URL over: the redirect may come back at once.
    const promise = listener.waitFor(this.currentState, abort.signal);
    promise.catch(() => undefined);
    this.pending = { promise, abort };
    this.options.note('info', 'waiting for the login in the browser');
    await authorize(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === '') throw new Error('no PKCE code verifier: the login was not started by this process');
    return this.verifier;
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.machine) return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    const wanted = scope ?? this.options.config?.scope;
    if (wanted) params.set('scope', wanted);
    return params;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'verifier') {
      this.verifier = '';
      return;
    }
    this.options.store.update((s) => {
      if (scope === 'all' || scope === 'tokens') delete s.tokens;
      if (scope === 'all' || scope === 'client') delete s.clientInformation;
      if (scope === 'all' || scope === 'discovery') delete s.discovery;
    });
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.options.store.update((s) => (s.discovery = { ...state } as Record<string, unknown>));
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.read().discovery as OAuthDiscoveryState | undefined;
  }

  /** A login was started (`redirectToAuthorization`) and its code has not come back yet. */
  get awaitingCode(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Waits for the code of the login in progress and exchanges it for tokens (`auth()` with
   * the code). Aborted by `signal` (start-up timeout, host closing).
   */
  async finishLogin(fetchFn: FetchLike, signal: AbortSignal): Promise<void> {
    const pending = this.pending;
    if (!pending) throw new Error('no login in progress');
    const onAbort = (): void => pending.abort.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const code = await pending.promise;
      const result = await this.options.auth.auth(this, { serverUrl: this.options.serverUrl, authorizationCode: code, fetchFn });
      if (result !== 'AUTHORIZED')
        throw new ReinError('auth', 'fatal', `MCP server "${this.options.server}": the authorization code was not accepted`);
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.pending = undefined;
      this.verifier = '';
    }
  }

  /**
   * Refreshes tokens that expire within a minute, before the request that would be refused
   * with them. Failures are left to the 401 path.
   */
  async refreshIfExpiring(fetchFn: FetchLike): Promise<void> {
    if (this.refreshing) return this.refreshing;
    const tokens = this.read().tokens;
    if (!tokens?.refresh_token || tokens.expires_in === undefined || tokens.obtained_at === undefined) return;
    const lifetime = tokens.expires_in * 1000;
    if (tokens.obtained_at + lifetime - Math.min(REFRESH_MARGIN_MS, lifetime / 2) > Date.now()) return;
    return this.refresh(fetchFn);
  }

  /**
   * A request with `sentToken` was answered 401: the token to retry it with — the one
   * another request already got, or a fresh one from a refresh shared by every request that
   * was refused meanwhile. `undefined` when there is nothing to refresh with (the SDK then
   * authorizes from the start).
   */
  async tokenAfter401(sentToken: string, fetchFn: FetchLike): Promise<string | undefined> {
    if (this.wantedScope !== undefined) return undefined;
    if (this.refreshing) await this.refreshing;
    const current = this.read().tokens;
    if (current && current.access_token !== sentToken) return current.access_token;
    if (!current?.refresh_token) return undefined;
    await this.refresh(fetchFn);
    const refreshed = this.read().tokens?.access_token;
    return refreshed !== undefined && refreshed !== sentToken ? refreshed : undefined;
  }

  /** One refresh at a time: servers that rotate refresh tokens refuse the second use of one. */
  private refresh(fetchFn: FetchLike): Promise<void> {
    if (this.refreshing) return this.refreshing;
    this.refreshing = this.options.auth
      .auth(this, { serverUrl: this.options.serverUrl, fetchFn })
      .then(
        () => undefined,
        (error: unknown) =>
          this.options.note('warn', `refreshing the token failed: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /**
   * The server answered `403 insufficient_scope` asking for `scope`: the next authorization
   * asks for it (the SDK then authorizes again). Throws after {@link MAX_STEP_UPS}.
   */
  stepUp(scope: string | undefined): void {
    this.stepUps++;
    if (this.stepUps > MAX_STEP_UPS) {
      throw new ReinError(
        'auth',
        'fatal',
        `MCP server "${this.options.server}" still answers 403 insufficient_scope after ${MAX_STEP_UPS} step-ups${scope ? ` (asking for ${scope})` : ''}; the account may not be allowed that scope`,
      );
    }
    const granted = this.read().tokens?.scope;
    this.wantedScope = scope === undefined ? granted : union(granted, scope);
    this.options.note('info', `the server asks for more scope${scope ? ` (${scope})` : ''}: authorizing again`);
  }

  /** A request went through: a later 403 starts a new count. */
  succeeded(): void {
    this.stepUps = 0;
  }

  private read(): StoredAuth {
    return this.options.store.read();
  }
}

/** Whether the granted scopes include every wanted one. */
function covers(granted: string | undefined, wanted: string): boolean {
  const have = new Set((granted ?? '').split(/\s+/).filter(Boolean));
  return wanted
    .split(/\s+/)
    .filter(Boolean)
    .every((s) => have.has(s));
}

function union(a: string | undefined, b: string): string {
  return [...new Set([...(a ?? '').split(/\s+/), ...b.split(/\s+/)].filter(Boolean))].join(' ');
}

function loadPrivateKeyJwt(options: {
  clientId: string;
  privateKeyPem: string;
  alg: string;
}): Promise<NonNullable<OAuthClientProvider['addClientAuthentication']>> {
  return import('@modelcontextprotocol/sdk/client/auth-extensions.js').then((ext) =>
    ext.createPrivateKeyJwtAuth({
      issuer: options.clientId,
      subject: options.clientId,
      privateKey: options.privateKeyPem,
      alg: options.alg,
    }),
  );
}
