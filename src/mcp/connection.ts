/**
 * One long-lived client per server. It connects (bounded by the start-up timeout), keeps
 * the tool list current (`notifications/tools/list_changed`), notices a crash or a lost
 * link (process exit, a refused socket, two unanswered pings) and reconnects with
 * exponential backoff and jitter for as long as the host lives; an HTTP session the server
 * forgot is initialized again and the request retried once. Requests while it is down fail
 * fast with `mcp_unavailable`, saying why and when the next attempt is.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReinError } from '../errors.js';
import { settlesWithin } from '../process/timing.js';
import { reconnectDelay, type ReconnectPolicy } from './backoff.js';
import { describeEnd, downReason, requestError, whatNext } from './down-messages.js';
import { classifyFailure, messageOf, type FailureKind } from './failures.js';
import { startHeartbeat } from './heartbeat.js';
import { closeClient, openClient, type OpenedClient } from './open-client.js';
import { ProgressRouter, type Progress } from './progress.js';
import type { Sdk } from './sdk.js';
import { ServerLog } from './server-log.js';
import { ANY_RESULT, fetchServerTools, toolFilter, type PreparedSchemas, type ServerTool } from './server-tools.js';
import { rootsOf } from './roots.js';
import { isNeedsLogin } from './auth/provider.js';
import { ServerAuth, type AuthSetup } from './auth/server-auth.js';
import { ToolList } from './tool-list.js';
import type { McpLogEntry, McpLogLevel, McpServerConfig, McpServerState, McpServerStatus, McpTransportKind } from './types.js';
import { clientCapabilities, registerClientHandlers, type ClientFeatures } from './client-features.js';
import { RunCalls } from './run-calls.js';
import { openRequiredUrls, requiredUrls } from './elicitation.js';

/** Default per-request timeout of a server, in ms. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** Default time a server has to start, in ms. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;

/** What a {@link ServerConnection} is made with. */
export interface ConnectionOptions {
  name: string;
  config: McpServerConfig;
  source?: string;
  sdk: Sdk;
  env: Record<string, string | undefined>;
  clientInfo: { name: string; version: string };
  /** `false`: one attempt, then `failed` (the CLI's choice). */
  reconnect: ReconnectPolicy | false;
  /** Ping a connected server this often (0: never); two unanswered pings count as a lost link. */
  pingIntervalMs: number;
  log: (entry: McpLogEntry) => void;
  /** The tool list changed (connect, reconnect, `list_changed`). */
  onToolsChanged: () => void;
  /** State, error or attempt count changed. */
  onStatusChanged: () => void;
  /** Roots, event sink and the hooks answering servers' requests. */
  features: ClientFeatures;
  /** The `logging/setLevel` asked of servers whose entry sets none. */
  logLevel?: McpLogLevel;
  /** OAuth for HTTP servers: where tokens are kept and how a person logs in. */
  auth?: AuthSetup;
}

/** What a request needs beyond the call itself. */
interface RequestOptions {
  signal?: AbortSignal;
  /** The request may have changed something on the server, so a lost link leaves it uncertain. */
  mutating: boolean;
}

/** An error and its causes, outermost first. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && chain.length < 8; e = (e as { cause?: unknown } | null)?.cause) chain.push(e);
  return chain;
}

/** The host's features as one server sees them: its entry's own roots, or none. */
function featuresFor(config: McpServerConfig, features: ClientFeatures): ClientFeatures {
  if (config.roots === undefined) return features;
  if (config.roots === false) return { ...features, roots: undefined };
  const roots = rootsOf(config.roots, process.cwd());
  return { ...features, roots: () => roots };
}

/** A live client for one server; see the module comment. */
export class ServerConnection {
  readonly name: string;
  state: McpServerState;
  kind: McpTransportKind;
  lastError: string | undefined;
  attempts = 0;
  serverInfo: { name: string; version: string } | undefined;
  /** Whether the server offers resources (decides whether the resource tools exist). */
  hasResources = false;
  hasPrompts = false;
  /** What the server said about using it (`instructions` of `initialize`). */
  instructions: string | undefined;

  private readonly log: ServerLog;
  private current: OpenedClient | undefined;
  private generation = 0;
  private attempt: { promise: Promise<boolean>; controller: AbortController } | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private nextRetryAt: number | undefined;
  private stopHeartbeat: () => void = () => undefined;
  private readonly closing = new Set<Promise<unknown>>();
  private closed = false;
  private readonly waiters = new Set<() => void>();
  private readonly toolList = new ToolList();
  private readonly schemas: PreparedSchemas = new Map();
  private allowed: (name: string) => boolean = () => true;
  private readonly progress = new ProgressRouter();
  /** Runs' tool calls in flight here: what the server's elicitations and sampling requests are bound to. */
  private readonly runCalls = new RunCalls();
  /** Resources subscribed to; subscribed again after every reconnect. */
  private readonly subscriptions = new Set<string>();
  private capabilities: Record<string, unknown> = {};
  private readonly features: ClientFeatures;
  private readonly auth: ServerAuth;
  /** The server asked for OAuth and no usable token is stored. */
  needsLogin = false;
  /** Lengthens the running attempt's start-up bound while a person logs in. */
  private extendStartup: ((ms: number) => void) | undefined;

  constructor(private readonly options: ConnectionOptions) {
    const config = options.config;
    this.name = options.name;
    this.log = new ServerLog(options.name, options.log);
    this.state = config.enabled === false ? 'disabled' : 'connecting';
    this.kind = 'command' in config ? 'stdio' : config.type === 'sse' ? 'sse' : 'http';
    for (const uri of config.subscribe ?? []) this.subscriptions.add(uri);
    this.features = featuresFor(config, options.features);
    this.auth = new ServerAuth(options.name, config, options.auth, {
      emit: (event) => this.features.emit(event),
      note: (level, message) => this.log.note(level, message),
      loginStarted: (ms) => this.extendStartup?.(ms),
    });
  }

  /** The server's entry, as configured. */
  get config(): McpServerConfig {
    return this.options.config;
  }

  /** The server's tools (after allow / deny), kept while it is down. */
  get tools(): readonly ServerTool[] {
    return this.toolList.tools;
  }

  /** Per-request timeout (the entry's `timeoutMs`, default 60 s). */
  get timeoutMs(): number {
    return this.options.config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Makes the first attempt; resolves when it has succeeded or failed (never rejects). */
  async start(): Promise<void> {
    if (this.state === 'disabled' || this.closed) return;
    this.allowed = toolFilter(this.options.config);
    await this.connect();
  }

  /**
   * Resolves when the server is connected. Rejects with `mcp_unavailable` when the host
   * closes, when the server is disabled or has failed for good, or when `signal` aborts.
   */
  async whenConnected(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.state === 'connected') return;
      if (this.closed) throw this.unavailable('the MCP host was closed');
      if (signal?.aborted || this.state === 'disabled' || this.state === 'failed')
        throw this.unavailable(downReason(this.state, this.attempts, this.lastError));
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /**
   * Calls a tool; throws a {@link ReinError} (`mcp_unavailable`, `mcp_error`, `timeout`,
   * `aborted`) on failure. When the server announced a new tool list during the call, the
   * call returns only once the list is refreshed (at most 5 s more), so the next turn of an
   * agent already sees it.
   */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      timeoutMs?: number;
      onProgress?: (progress: Progress) => void;
      /** The run's call this is (see `run-calls.ts`): the server's requests meanwhile are bound to it. */
      call?: { runId: string; toolCallId: string };
    } = {},
  ): Promise<unknown> {
    if (options.call) {
      // Its own controller: a question only a person can answer ends the call (the run pauses).
      const abort = new AbortController();
      const outer = options.signal;
      const forward = (): void => abort.abort(outer?.reason);
      if (outer?.aborted) forward();
      else outer?.addEventListener('abort', forward, { once: true });
      const leave = this.runCalls.enter({ ...options.call, abort });
      const { call: _bound, ...rest } = options;
      try {
        return await this.callTool(tool, args, { ...rest, signal: abort.signal });
      } finally {
        leave();
        outer?.removeEventListener('abort', forward);
      }
    }
    const timeout = options.timeoutMs ?? this.timeoutMs;
    const route = options.onProgress ? this.progress.open(options.onProgress) : undefined;
    const params = { name: tool, arguments: args, ...(route ? { _meta: { progressToken: route.token } } : {}) };
    const send = (): Promise<unknown> =>
      this.request(`tools/call "${tool}"`, timeout, { mutating: true, ...(options.signal ? { signal: options.signal } : {}) }, (client) =>
        // Through `request`, not `callTool`: the content mapper takes any content type, where
        // the SDK's schema would reject a whole result for one part it does not know.
        client.request({ method: 'tools/call', params }, ANY_RESULT, { timeout, ...(options.signal ? { signal: options.signal } : {}) }),
      );
    try {
      let result: unknown;
      try {
        result = await send();
      } catch (error) {
        // -32042: the server needs the person to open URLs first (URL-mode elicitation
        // through an error). Asked through the elicit hook, then the call is sent once more.
        const urls = requiredUrls(error);
        if (!urls) throw error;
        const elicit = this.features.elicit;
        const list = urls.map((u) => u.url).join(', ');
        if (!elicit)
          throw new ReinError(
            'mcp_error',
            'correctable',
            `MCP server "${this.name}" needs a person to open ${list} before "${tool}" can run; nobody can be asked here`,
            { cause: error },
          );
        const opened = await openRequiredUrls(this.name, urls, elicit, this.features.emit, options.signal ?? new AbortController().signal);
        if (!opened)
          throw new ReinError(
            'mcp_error',
            'correctable',
            `"${tool}" of MCP server "${this.name}" needs ${list} opened, which was declined`,
            { cause: error },
          );
        result = await send();
      }
      await settlesWithin(this.toolList.pending, 5000);
      return result;
    } finally {
      route?.release();
    }
  }

  /**
   * Runs any request on the live client (`resources/list`, `prompts/get`…), with the same
   * failure handling as tool calls.
   */
  request<T>(label: string, timeoutMs: number, options: RequestOptions, run: (client: Client) => Promise<T>): Promise<T> {
    return this.requestOnce(label, timeoutMs, options, run, true);
  }

  private async requestOnce<T>(
    label: string,
    timeoutMs: number,
    options: RequestOptions,
    run: (client: Client) => Promise<T>,
    mayRetry: boolean,
  ): Promise<T> {
    const opened = await this.ready();
    const generation = this.generation;
    const hadSession = opened.transport.sessionId !== undefined;
    try {
      return await run(opened.client);
    } catch (error) {
      const context = {
        hadSession,
        stillOpen: opened.client.transport !== undefined,
        ...(options.signal ? { signal: options.signal } : {}),
      };
      // A step-up (or an expired session) started a login during the request: finish it, retry once.
      const oauth = this.auth.current;
      if (mayRetry && oauth && error instanceof oauth.sdk.UnauthorizedError && oauth.provider.awaitingCode) {
        const bound = AbortSignal.timeout(this.auth.loginTimeoutMs);
        await oauth.provider.finishLogin(opened.fetchFn ?? fetch, options.signal ? AbortSignal.any([options.signal, bound]) : bound);
        return this.requestOnce(label, timeoutMs, options, run, false);
      }
      const kind = classifyFailure(error, this.options.sdk, context);
      if (kind === 'session' && mayRetry) {
        this.log.note('info', `the server no longer knows our HTTP session (${messageOf(error)}); initializing a new one`);
        await this.reinitialize(generation);
        return this.requestOnce(label, timeoutMs, options, run, false);
      }
      throw this.failure(kind, error, label, timeoutMs, options.mutating, generation);
    }
  }

  /** The server as `status()` shows it. */
  status(): McpServerStatus {
    const status: McpServerStatus = {
      name: this.name,
      transport: this.kind,
      state: this.state,
      toolCount: this.tools.length,
      attempts: this.attempts,
      recentLog: this.log.recentLines(),
    };
    if (this.lastError !== undefined) status.lastError = this.lastError;
    if (this.needsLogin) status.needsLogin = true;
    if (this.serverInfo) status.serverInfo = this.serverInfo;
    const pid = this.current?.process?.pid;
    if (pid !== undefined) status.pid = pid;
    if (this.options.source !== undefined) status.source = this.options.source;
    return status;
  }

  /** Stops retrying and closes the client (killing a stdio server's process group); resolves when all is closed. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.stopHeartbeat();
    this.attempt?.controller.abort(new Error('the MCP host is closing'));
    await this.attempt?.promise;
    const current = this.current;
    this.current = undefined;
    if (current) this.track(closeClient(current, true));
    await Promise.all([...this.closing]);
    for (const waiter of [...this.waiters]) waiter();
  }

  private connect(): Promise<boolean> {
    if (this.attempt) return this.attempt.promise;
    if (this.closed) return Promise.resolve(false);
    const generation = ++this.generation;
    const controller = new AbortController();
    const startup = this.options.config.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
    let timer = setTimeout(() => controller.abort(new Error(`did not finish starting within ${startup} ms`)), startup);
    this.extendStartup = (ms) => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(new Error(`the login was not finished within ${ms} ms`)), ms);
    };
    this.attempts++;
    this.nextRetryAt = undefined;
    const promise = this.open(generation, controller.signal, startup).then(
      () => true,
      (error: unknown) => {
        if (generation === this.generation && !this.closed)
          this.attemptFailed(controller.signal.aborted ? controller.signal.reason : error);
        return false;
      },
    );
    const settled = promise.finally(() => {
      clearTimeout(timer);
      this.extendStartup = undefined;
      if (this.attempt?.promise === settled) this.attempt = undefined;
    });
    this.attempt = { promise: settled, controller };
    return settled;
  }

  /** Forgets the stored tokens and registration of this server (`rein mcp logout`). */
  logout(): boolean {
    return this.auth.logout();
  }

  private async open(generation: number, signal: AbortSignal, timeoutMs: number): Promise<void> {
    const oauth = await this.auth.forConnect();
    const opened = await openClient({
      ...(oauth ? { auth: oauth } : {}),
      config: this.options.config,
      sdk: this.options.sdk,
      env: this.options.env,
      clientInfo: this.options.clientInfo,
      preferred: this.kind,
      signal,
      timeoutMs,
      onStderr: (line) => this.log.stderrLine(line),
      capabilities: clientCapabilities(this.features),
      prepare: (client) => {
        client.setNotificationHandler(this.options.sdk.ToolListChangedNotificationSchema, () => void this.refreshTools(generation));
        client.setNotificationHandler(this.options.sdk.ProgressNotificationSchema, (notification) =>
          this.progress.deliver(notification.params),
        );
        registerClientHandlers(client, this.options.sdk, this.features, {
          name: this.name,
          log: this.log,
          listChanged: (list) => {
            this.log.note('info', `${list === 'prompts' ? 'prompt' : 'resource'} list changed`);
            this.features.emit({ type: 'mcp_list_changed', server: this.name, list });
          },
          runCalls: this.runCalls,
          updatesToModel: this.options.config.updatesToModel === true,
        });
      },
    });
    if (this.closed || generation !== this.generation) {
      await closeClient(opened, false);
      throw new Error('superseded');
    }
    this.current = opened;
    this.kind = opened.kind;
    opened.client.onclose = () => this.lost(generation, describeEnd(opened.process?.exit, this.log.stderrTail()));
    opened.client.onerror = (error) => this.onClientError(generation, error);
    this.instructions = opened.client.getInstructions();
    const version = opened.client.getServerVersion();
    if (version) this.serverInfo = { name: version.name, version: version.version };
    const capabilities = opened.client.getServerCapabilities() ?? {};
    this.capabilities = capabilities;
    this.hasResources = capabilities.resources !== undefined;
    this.hasPrompts = capabilities.prompts !== undefined;
    const tools = capabilities.tools === undefined ? [] : await this.listTools(opened.client, signal, timeoutMs);
    if (this.closed || generation !== this.generation) throw new Error('superseded');
    await this.afterConnect(opened.client, timeoutMs);
    if (this.closed || generation !== this.generation) throw new Error('superseded');
    this.needsLogin = false;
    this.state = 'connected';
    this.attempts = 0;
    this.log.note(
      'info',
      `connected over ${opened.kind}${this.serverInfo ? ` to ${this.serverInfo.name} ${this.serverInfo.version}` : ''}, ${tools.length} tools`,
    );
    if (this.toolList.set(tools)) this.options.onToolsChanged();
    this.changed();
    this.stopHeartbeat = startHeartbeat({
      everyMs: this.options.pingIntervalMs,
      timeoutMs: Math.min(10_000, this.options.pingIntervalMs, this.timeoutMs),
      ping: (timeout) => opened.client.ping({ timeout }),
      isLost: (error) =>
        classifyFailure(error, this.options.sdk, { hadSession: false, stillOpen: opened.client.transport !== undefined }) === 'lost',
      onLost: (reason) => this.lost(generation, reason),
    });
  }

  /**
   * What a fresh session needs besides its tools: the log level of the entry (or the host)
   * and the subscriptions, asked again on every connect since a new session knows neither.
   * A server refusing one is noted in its log, never a failed connect.
   */
  private async afterConnect(client: Client, timeout: number): Promise<void> {
    const level = this.options.config.logLevel ?? this.options.logLevel;
    if (level !== undefined) {
      if (this.capabilities.logging === undefined)
        this.log.noteOnce('info', `logLevel "${level}" not sent: the server declares no logging capability`);
      else
        await client
          .setLoggingLevel(level, { timeout })
          .catch((error: unknown) => this.log.note('warn', `logging/setLevel ${level} failed: ${messageOf(error)}`));
    }
    for (const uri of this.subscriptions)
      await this.subscribeOn(client, uri, timeout).catch((error: unknown) => this.log.note('warn', messageOf(error)));
  }

  private async subscribeOn(client: Client, uri: string, timeout: number): Promise<void> {
    const resources = this.capabilities.resources as { subscribe?: boolean } | undefined;
    if (resources?.subscribe !== true)
      throw new ReinError(
        'mcp_error',
        'correctable',
        `MCP server "${this.name}" does not offer resource subscriptions (resources.subscribe), so ${uri} is not watched`,
      );
    try {
      await client.subscribeResource({ uri }, { timeout });
    } catch (error) {
      throw new ReinError(
        'mcp_error',
        'correctable',
        `MCP server "${this.name}" refused resources/subscribe for ${uri}: ${messageOf(error)}`,
        { cause: error },
      );
    }
  }

  /** Subscribes to a resource's updates (`mcp_resource_updated` events), now and after every reconnect. */
  async subscribe(uri: string): Promise<void> {
    this.subscriptions.add(uri);
    // Reconnecting: the next session subscribes. Failed or disabled: say so.
    if (this.state === 'reconnecting') return;
    let opened: OpenedClient;
    try {
      opened = await this.ready();
    } catch (error) {
      this.subscriptions.delete(uri);
      throw error;
    }
    try {
      await this.subscribeOn(opened.client, uri, this.timeoutMs);
    } catch (error) {
      this.subscriptions.delete(uri);
      throw error;
    }
  }

  /** Ends a subscription. */
  async unsubscribe(uri: string): Promise<void> {
    if (!this.subscriptions.delete(uri)) return;
    await this.request(`resources/unsubscribe ${uri}`, this.timeoutMs, { mutating: false }, (client) =>
      client.unsubscribeResource({ uri }, { timeout: this.timeoutMs }),
    );
  }

  /** The resources subscribed to. */
  get subscribed(): string[] {
    return [...this.subscriptions];
  }

  /** The server's capabilities from `initialize` (empty until connected). */
  get serverCapabilities(): Record<string, unknown> {
    return this.capabilities;
  }

  /** Tells a connected server the roots changed (`notifications/roots/list_changed`). */
  async rootsChanged(): Promise<void> {
    // An entry with roots of its own (or none) is not concerned by the host's.
    if (this.options.config.roots !== undefined) return;
    const client = this.state === 'connected' ? this.current?.client : undefined;
    if (client)
      await client
        .sendRootsListChanged()
        .catch((error: unknown) => this.log.note('warn', `roots/list_changed not sent: ${messageOf(error)}`));
  }

  /** Sets the server's log level now and for later sessions. */
  async setLogLevel(level: McpLogLevel): Promise<void> {
    this.options.config.logLevel = level;
    await this.request('logging/setLevel', this.timeoutMs, { mutating: false }, (client) =>
      client.setLoggingLevel(level, { timeout: this.timeoutMs }),
    );
  }

  private listTools(client: Client, signal: AbortSignal | undefined, timeout: number): Promise<ServerTool[]> {
    return fetchServerTools(
      client,
      this.allowed,
      { ...(signal ? { signal } : {}), timeout },
      (message) => this.log.noteOnce('warn', message),
      this.schemas,
    );
  }

  /** `list_changed`: list again (coalesced), unless the connection moved on meanwhile. */
  private refreshTools(generation: number): Promise<void> {
    const stale = (): boolean => generation !== this.generation || this.closed;
    return this.toolList.refresh(
      async () => {
        const client = this.current?.client;
        if (!client || stale()) return undefined;
        const tools = await this.listTools(client, undefined, this.timeoutMs);
        return stale() ? undefined : tools;
      },
      () => {
        this.log.note('info', `tool list changed: ${this.tools.length} tools`);
        this.features.emit({ type: 'mcp_list_changed', server: this.name, list: 'tools' });
        this.options.onToolsChanged();
        this.changed();
      },
      (error) => this.log.note('warn', `refreshing the tool list failed: ${messageOf(error)}`),
    );
  }

  private attemptFailed(error: unknown): void {
    const tail = this.log.stderrTail();
    this.lastError = `${messageOf(error)}${tail ? ` (stderr: ${tail})` : ''}`;
    const current = this.current;
    this.current = undefined;
    if (current) this.track(closeClient(current, false));
    // Trying again cannot help until a person logs in.
    if (causes(error).some(isNeedsLogin)) {
      this.needsLogin = true;
      this.state = 'failed';
      this.log.note('warn', this.lastError);
    } else if (this.options.reconnect === false) {
      this.state = 'failed';
      this.log.note('error', `could not connect: ${this.lastError}`);
    } else {
      this.state = 'reconnecting';
      this.scheduleRetry(this.options.reconnect);
      this.log.note('warn', `could not connect (attempt ${this.attempts}): ${this.lastError}; next attempt in ${this.retryInMs()} ms`);
    }
    this.changed();
  }

  /** The link broke while connected: keep the tools, end the old client, reconnect. */
  private lost(generation: number, reason: string): void {
    if (this.closed || generation !== this.generation || this.state !== 'connected') return;
    this.stopHeartbeat();
    this.lastError = reason;
    const current = this.current;
    this.current = undefined;
    if (current) this.track(closeClient(current, false));
    this.attempts = 0;
    if (this.options.reconnect === false) {
      this.state = 'failed';
      this.log.note('error', `connection lost: ${reason}`);
    } else {
      this.state = 'reconnecting';
      this.scheduleRetry(this.options.reconnect);
      this.log.note('warn', `connection lost: ${reason}; reconnecting in ${this.retryInMs()} ms`);
    }
    this.changed();
  }

  /** A new session after the server forgot ours; concurrent requests share one attempt. */
  private async reinitialize(generation: number): Promise<void> {
    if (generation === this.generation && !this.attempt) {
      this.stopHeartbeat();
      const old = this.current;
      this.current = undefined;
      this.state = 'connecting';
      const attempt = this.connect();
      if (old) this.track(closeClient(old, false));
      this.changed();
      await attempt;
    } else {
      await this.attempt?.promise;
    }
  }

  private scheduleRetry(policy: ReconnectPolicy): void {
    const delay = reconnectDelay(this.attempts, policy);
    this.nextRetryAt = Date.now() + delay;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    // A host waiting to reconnect must not keep a finished program alive.
    this.retryTimer.unref();
  }

  private async ready(): Promise<OpenedClient> {
    if (this.state === 'connecting' && this.attempt) await this.attempt.promise;
    if (this.closed) throw this.unavailable('the MCP host was closed');
    if (this.state === 'connected' && this.current) return this.current;
    throw this.unavailable(downReason(this.state, this.attempts, this.lastError));
  }

  private failure(kind: FailureKind, error: unknown, label: string, timeoutMs: number, mutating: boolean, generation: number): ReinError {
    switch (kind) {
      case 'lost': {
        if (this.closed) return this.unavailable('was closed: the MCP host is shutting down', error, true);
        // Usually the close was seen first (the SDK reports it before failing the requests).
        if (generation === this.generation && this.state === 'connected') {
          const exit = this.current?.process?.exit;
          this.lost(generation, exit ? describeEnd(exit, this.log.stderrTail()) : `lost the connection (${messageOf(error)})`);
        }
        const reason = this.lastError ?? 'lost the connection';
        const outcome = mutating ? ' The call may or may not have taken effect.' : '';
        return this.unavailable(
          `${reason} during ${label}.${outcome} ${whatNext(this.closed ? 'failed' : this.state, this.retryInMs(), true)}`,
          error,
          true,
        );
      }
      default:
        return requestError(kind, this.name, label, timeoutMs, error);
    }
  }

  private unavailable(reason: string, cause?: unknown, complete = false): ReinError {
    const next = whatNext(this.closed ? 'failed' : this.state, this.retryInMs(), false);
    const text = complete ? `MCP server "${this.name}" ${reason}` : `MCP server "${this.name}" ${reason}; ${next}`;
    return new ReinError('mcp_unavailable', 'transient', text, cause === undefined ? {} : { cause });
  }

  private retryInMs(): number | undefined {
    return this.nextRetryAt === undefined ? undefined : Math.max(0, this.nextRetryAt - Date.now());
  }

  private changed(): void {
    for (const waiter of [...this.waiters]) waiter();
    this.options.onStatusChanged();
  }

  private onClientError(generation: number, error: Error): void {
    // A broken legacy SSE stream is the connection itself; elsewhere errors surface per request.
    if (error instanceof this.options.sdk.SseError && this.state === 'connected') {
      this.lost(generation, `the SSE stream broke: ${messageOf(error)}`);
      return;
    }
    this.log.note('debug', `transport: ${messageOf(error)}`);
  }

  private track(promise: Promise<unknown>): void {
    const tracked = promise.catch(() => undefined).finally(() => this.closing.delete(tracked));
    this.closing.add(tracked);
  }
}
