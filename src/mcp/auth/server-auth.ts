/**
 * The OAuth side of one server's connection: the provider made on first connect and kept
 * across reconnects (its pending login and step-up count belong to the server, not to one
 * session), the redirect listener started before a flow that may need it, and logout.
 */
import { loadAuthSdk, type AuthSdk } from '../sdk.js';
import type { McpEvent, McpServerConfig } from '../types.js';
import type { LoopbackListener } from './loopback.js';
import { ReinOAuthProvider } from './provider.js';
import { authFile, TokenStore } from './token-store.js';

/** What the host lends connections for OAuth. */
export interface AuthSetup {
  /** `$REIN_HOME` (default `~/.rein`): tokens go to its `mcp-auth/` folder. */
  folder: string;
  /** Opens an authorization URL for a person; absent: servers needing a login are reported as such. */
  authorize?: (url: URL) => Promise<void>;
  /** The host's redirect listener (shared by its servers). */
  listener: () => LoopbackListener;
  /** How long a login in the browser may take, in ms. */
  loginTimeoutMs: number;
}

/** The provider and the SDK module it runs with. */
export interface OAuthSide {
  provider: ReinOAuthProvider;
  sdk: AuthSdk;
}

/** See the module comment. */
export class ServerAuth {
  private side: OAuthSide | undefined;

  constructor(
    private readonly name: string,
    private readonly config: McpServerConfig,
    private readonly setup: AuthSetup | undefined,
    private readonly hooks: {
      emit: (event: McpEvent) => void;
      note: (level: 'info' | 'warn', message: string) => void;
      /** A person started logging in: the attempt may take the login's time. */
      loginStarted: (timeoutMs: number) => void;
    },
  ) {}

  /** The provider once made (for finishing a login started during a request). */
  get current(): OAuthSide | undefined {
    return this.side;
  }

  /** The login timeout, for a login started during a request. */
  get loginTimeoutMs(): number {
    return this.setup?.loginTimeoutMs ?? 300_000;
  }

  /** The provider for a connect; `undefined` for a stdio server or a host without OAuth. */
  async forConnect(): Promise<OAuthSide | undefined> {
    const { config, setup } = this;
    if ('command' in config || !setup) return undefined;
    const interactive = setup.authorize !== undefined && config.auth?.grant !== 'client_credentials';
    if (!this.side) {
      const sdk = await loadAuthSdk();
      const authorize = setup.authorize;
      const provider = new ReinOAuthProvider({
        server: this.name,
        serverUrl: new URL(config.url),
        config: config.auth,
        store: new TokenStore(authFile(setup.folder, this.name, config.url)),
        authorize:
          interactive && authorize
            ? async (url) => {
                this.hooks.loginStarted(setup.loginTimeoutMs);
                await authorize(url);
              }
            : undefined,
        listener: interactive ? setup.listener() : undefined,
        emit: this.hooks.emit,
        note: this.hooks.note,
        auth: sdk,
      });
      this.side = { provider, sdk };
    }
    // The redirect URL must be known before the flow starts (registration names it).
    if (interactive) await setup.listener().start();
    return this.side;
  }

  /** Forgets the stored tokens and registration (`rein mcp logout`); `true` when there were some. */
  logout(): boolean {
    const { config, setup } = this;
    if ('command' in config || !setup) return false;
    return new TokenStore(authFile(setup.folder, this.name, config.url)).clear();
  }
}
