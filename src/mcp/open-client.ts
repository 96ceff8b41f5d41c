/**
 * Opening one connected SDK client for a server entry: spawn a stdio server, or reach a
 * URL over Streamable HTTP, falling back to legacy HTTP+SSE when the URL answers like an
 * old server (a 4xx to the Streamable HTTP `POST`, as the MCP spec's compatibility
 * section prescribes). Bounded by the caller's signal, and leaves nothing open on failure.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { proxiedFetch } from '../http/fetch.js';
import { proxyFor } from '../http/proxy.js';
import { settlesWithin } from '../process/timing.js';
import { currentTraceHeaders } from '../trace/propagation.js';
import { ProcessTransport } from './process-transport.js';
import type { AuthSdk, Sdk } from './sdk.js';
import type { ReinOAuthProvider } from './auth/provider.js';
import type { McpServerConfig, McpTransportKind } from './types.js';

/** A client that finished `initialize`, and what it runs on. */
export interface OpenedClient {
  client: Client;
  transport: Transport;
  kind: McpTransportKind;
  /** The child process of a stdio server. */
  process?: ProcessTransport;
  /** The `fetch` an HTTP transport uses (for finishing a login on the same path). */
  fetchFn?: FetchLike;
}

/** What {@link openClient} needs. */
export interface OpenClientOptions {
  config: McpServerConfig;
  sdk: Sdk;
  /** The environment stdio servers inherit their safe variables from. */
  env: Record<string, string | undefined>;
  clientInfo: { name: string; version: string };
  /** For a URL without `type`: the transport that worked last time, tried first. */
  preferred?: McpTransportKind;
  /** Aborts the attempt (start-up timeout, host closing). */
  signal: AbortSignal;
  /** Timeout of the `initialize` request, in ms. */
  timeoutMs: number;
  /** OAuth for an HTTP server (every HTTP server gets one: any may answer 401). */
  auth?: { provider: ReinOAuthProvider; sdk: AuthSdk };
  /** Lines a stdio server writes to stderr. */
  onStderr: (line: string) => void;
  /** What rein declares in `initialize`. */
  capabilities: ClientCapabilities;
  /** Called on each new client before it connects, to register notification handlers. */
  prepare: (client: Client) => void;
}

/**
 * Variables a stdio server inherits: what a process needs to run (PATH, HOME, locale,
 * temp dir, proxies and CA certificates), not the caller's secrets. Add more with `env`.
 */
const INHERITED_ENV = [
  'HOME',
  'LOGNAME',
  'USER',
  'PATH',
  'SHELL',
  'TERM',
  'TMPDIR',
  'TEMP',
  'TMP',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_RUNTIME_DIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'COMSPEC',
  'PATHEXT',
  'APPDATA',
  'LOCALAPPDATA',
  'USERPROFILE',
  'PROGRAMFILES',
  'WINDIR',
];

/** The environment of a stdio server: the inherited safe variables, then its `env`. */
function stdioEnvironment(inherited: Record<string, string | undefined>, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = inherited[key];
    // Exported shell functions look like `() { …`: never hand those on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return { ...env, ...extra };
}

/** Connects a fresh client; throws (with everything closed) when the server cannot be reached. */
export async function openClient(options: OpenClientOptions): Promise<OpenedClient> {
  const { config, sdk } = options;
  if ('command' in config) {
    const child = new ProcessTransport({
      command: config.command,
      args: config.args ?? [],
      env: stdioEnvironment(options.env, config.env),
      ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
      framing: sdk.framing,
      onStderr: options.onStderr,
    });
    const client = await connect(options, child);
    return { client, transport: child, kind: 'stdio', process: child };
  }
  const url = new URL(config.url);
  const requestInit: RequestInit = config.headers ? { headers: config.headers } : {};
  const base = withTraceHeaders(fetchFor(url).fetch);
  const auth = options.auth;
  const fetchFn = auth ? withAuthorization(base, url, auth.provider) : base;
  const authProvider = auth ? { authProvider: auth.provider } : {};
  const streamable = (): Transport => new sdk.StreamableHTTPClientTransport(url, { requestInit, fetch: fetchFn, ...authProvider });
  const sse = (): Transport => new sdk.SSEClientTransport(url, { requestInit, fetch: fetchFn, ...authProvider });
  // A server that asked for a login: wait for the person's code, exchange it, connect again.
  const withLogin = async (make: () => Transport, kind: McpTransportKind): Promise<OpenedClient> => {
    try {
      const transport = make();
      return { client: await connect(options, transport), transport, kind, fetchFn };
    } catch (error) {
      if (!auth || !(error instanceof auth.sdk.UnauthorizedError) || !auth.provider.awaitingCode) throw error;
      await auth.provider.finishLogin(fetchFn, options.signal);
      const transport = make();
      return { client: await connect(options, transport), transport, kind, fetchFn };
    }
  };
  if (config.type === 'sse' || (config.type === undefined && options.preferred === 'sse')) return withLogin(sse, 'sse');
  try {
    return await withLogin(streamable, 'http');
  } catch (error) {
    if (config.type === 'http' || !answersLikeLegacySse(error, sdk) || options.signal.aborted) throw error;
  }
  return withLogin(sse, 'sse');
}

/**
 * `fetch` for a server with OAuth: tokens about to expire are refreshed before the request
 * to the MCP endpoint, and a `403 insufficient_scope` answer is counted as a step-up (the
 * SDK then authorizes again with the scope asked for; the provider bounds how often).
 * Requests elsewhere (discovery, the authorization server) pass untouched.
 */
function withAuthorization(base: FetchLike, server: URL, provider: ReinOAuthProvider): FetchLike {
  const endpoint = `${server.origin}${server.pathname}`;
  return async (input, init) => {
    const target = new URL(String(input instanceof Request ? input.url : input));
    if (`${target.origin}${target.pathname}` !== endpoint) return base(input, init);
    let sent = init;
    const headers = new Headers(init?.headers);
    let token: string | undefined;
    if (headers.has('authorization')) {
      await provider.refreshIfExpiring(base);
      token = provider.tokens()?.access_token;
      if (token !== undefined) headers.set('authorization', `Bearer ${token}`);
      sent = { ...init, headers };
    }
    let response = await base(input, sent);
    // Refused with a token: retry once with a refreshed one (shared by concurrent requests);
    // if there is none, the SDK sees the 401 and authorizes from the start.
    if (response.status === 401 && token !== undefined && typeof init?.body !== 'object') {
      const fresh = await provider.tokenAfter401(token, base);
      if (fresh !== undefined) {
        await response.body?.cancel();
        headers.set('authorization', `Bearer ${fresh}`);
        response = await base(input, { ...init, headers });
      }
    }
    if (response.status === 403) {
      const challenge = response.headers.get('www-authenticate') ?? '';
      if (/error="?insufficient_scope/.test(challenge)) provider.stepUp(/scope="([^"]*)"/.exec(challenge)?.[1]);
    } else if (response.ok) {
      provider.succeeded();
    }
    return response;
  };
}

/**
 * `fetch` that adds the trace headers of the tool call it runs for, when the agent's
 * telemetry propagates trace context to MCP servers (see `trace/propagation.ts`); the
 * request is otherwise untouched.
 */
function withTraceHeaders(base: FetchLike | undefined): FetchLike {
  return (input, init) => {
    const send = base ?? fetch;
    const trace = currentTraceHeaders();
    if (trace === undefined) return send(input, init);
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(trace)) headers.set(name, value);
    return send(input, { ...init, headers });
  };
}

/**
 * The transports' `fetch` option for a server URL: rein's client when a proxy from the
 * environment applies to it (Node 20's global `fetch` reads no proxy variables), none
 * otherwise, so a server reached directly goes on using the global `fetch`. Throws the
 * proxy variable's configuration error when it is unusable.
 */
function fetchFor(url: URL): { fetch?: FetchLike } {
  // The same decision rein's client makes per request, from the same process environment.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return proxyFor(url.protocol, host, port) ? { fetch: proxiedFetch } : {};
}

async function connect(options: OpenClientOptions, transport: Transport): Promise<Client> {
  const client = new options.sdk.Client(options.clientInfo, { capabilities: options.capabilities });
  options.prepare(client);
  try {
    await untilAborted(client.connect(transport, { signal: options.signal, timeout: options.timeoutMs }), options.signal);
    return client;
  } catch (error) {
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
    throw error;
  }
}

/** A Streamable HTTP `POST` answered with a 4xx other than an auth refusal: an old HTTP+SSE server. */
function answersLikeLegacySse(error: unknown, sdk: Sdk): boolean {
  if (!(error instanceof sdk.StreamableHTTPError)) return false;
  const status = error.code ?? 0;
  return status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429;
}

/** `promise`, or a rejection as soon as `signal` aborts (some SDK steps take no signal). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Closes a client and its transport (for stdio: ends the server's process group). With
 * `politely`, a Streamable HTTP session is ended first with `DELETE` (bounded to 1 s).
 */
export async function closeClient(opened: OpenedClient, politely: boolean): Promise<void> {
  // Closing fires the client's onclose synchronously; whoever closes already knows.
  opened.client.onclose = undefined;
  opened.client.onerror = undefined;
  const transport = opened.transport as { terminateSession?: () => Promise<void>; sessionId?: string };
  if (politely && typeof transport.terminateSession === 'function' && transport.sessionId !== undefined) {
    await settlesWithin(transport.terminateSession(), 1000);
  }
  await opened.client.close().catch(() => undefined);
}
