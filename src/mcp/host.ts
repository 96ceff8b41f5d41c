/**
 * The MCP host: one {@link ServerConnection} per configured server, all started in
 * parallel, and their tools offered to agents as one {@link ToolSource} (id `mcp`). The
 * tool array changes only when a server's tool list (or the set of servers with
 * resources) does; a server that goes down keeps its tools, which answer
 * `mcp_unavailable` until it is back.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { ReinError } from '../errors.js';
import type { ImageContent, TextContent } from '../model/types.js';
import type { Tool, ToolSource } from '../tools/types.js';
import { loadMcpConfig } from './config.js';
import type { ReconnectPolicy } from './backoff.js';
import { ServerConnection } from './connection.js';
import type { AuthSetup } from './auth/server-auth.js';
import { LoopbackListener } from './auth/loopback.js';
import { reinHome } from './auth/token-store.js';
import { toToolOutput, type McpCallDetails } from './content.js';
import { messageOf } from './failures.js';
import { expandMentions, type ExpandedMentions } from './mentions.js';
import { bridgeTools, type BridgedTool } from './mcp-tools.js';
import { ToolNamer } from './naming.js';
import { expandPrompt, listPrompts, parsePromptCommand, type ExpandedPrompt } from './prompts.js';
import { listResources, readResource, resourceTools, type ResourceContents, type ResourceListing } from './resources.js';
import { loadSdk } from './sdk.js';
import type {
  McpDiagnostic,
  McpElicitRequest,
  McpElicitResult,
  McpEvent,
  McpLogEntry,
  McpLogLevel,
  McpPromptInfo,
  McpRoot,
  McpSamplingRequest,
  McpSamplingResult,
  McpServerConfig,
  McpServerStatus,
} from './types.js';
import type { ClientFeatures } from './client-features.js';
import { completeArgument, type CompletionRef, type Completions } from './completion.js';
import { rootsOf } from './roots.js';
import type { SamplingUsage } from './sampling.js';

/** Options of {@link startMcp}. */
export interface McpHostOptions {
  /** Servers given in code, checked like file entries (and winning over them). */
  servers?: Record<string, McpServerConfig>;
  /**
   * Config files to read, later ones winning; one listed here that does not exist is an
   * error diagnostic. Default: `~/.rein/mcp.json` then the nearest `.mcp.json` from `cwd`
   * up to the repository root, each only if it exists — unless `servers` is given, in
   * which case no file is read unless listed here. `false`: none.
   */
  configFiles?: string[] | false;
  /**
   * The working directory (default `process.cwd()`): `.mcp.json` is searched from here up
   * to the repository root; relative paths of servers given in code mean this folder.
   */
  cwd?: string;
  /** Home folder holding `.rein/mcp.json` (default `os.homedir()`). */
  home?: string;
  /** Where `${VAR}` and stdio servers' inherited variables come from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Start only these servers (the others are not even listed). */
  only?: string[];
  /** Connection events and stdio servers' stderr; nothing is written to the terminal. */
  log?: (entry: McpLogEntry) => void;
  /** The rein name of a server's tool (made valid and unique afterwards); default `<server>__<tool>` or the entry's `toolPrefix`. */
  toolName?: (server: string, tool: string) => string;
  /** Delays between reconnection attempts (default 500 ms doubling to 30 s, with jitter); `false`: one attempt only. */
  reconnect?: Partial<ReconnectPolicy> | false;
  /** Ping connected servers this often, in ms (default 30 000; 0 turns it off). */
  pingIntervalMs?: number;
  /** Wait for every server's first attempt before resolving (default `true`); each is bounded by its start-up timeout. */
  wait?: boolean;
  /** How rein introduces itself in `initialize`. */
  clientInfo?: { name: string; version: string };
  /**
   * The roots announced to servers (`roots/list`): folders (or `file://` URIs). Default: the
   * workspace, `cwd`. Change them later with `host.setRoots()`.
   */
  roots?: string[];
  /** The `logging/setLevel` asked of every server that logs, unless its entry sets `logLevel`. */
  logLevel?: McpLogLevel;
  /** Receives the host's events (servers' log messages, list changes, resource updates, auth, elicitations, sampling). */
  onEvent?: (event: McpEvent) => void;
  /**
   * Answers servers' `elicitation/create` (form and URL mode). Without it rein declares no
   * elicitation capability, so servers do not ask.
   */
  elicit?: (request: McpElicitRequest) => Promise<McpElicitResult>;
  /**
   * With no `elicit` hook: an elicitation asked while a run's tool call is in flight on the
   * server pauses the run durably (with a store), like a call waiting for approval; it is
   * answered from any process by `agent.answerElicitation` or `rein approve --accept`, and
   * the resume makes the call again with the answer. Elicitation is declared then too.
   */
  pauseElicitations?: boolean;
  /**
   * Answers servers' `sampling/createMessage` (see `modelSampler`). Without it rein declares
   * no sampling capability. Throw a `permission_denied` ReinError to refuse.
   */
  sample?: (request: McpSamplingRequest) => Promise<McpSamplingResult & SamplingUsage>;
  /**
   * Opens an authorization URL for a person (the CLI opens a browser or prints it); the
   * redirect comes back to rein's loopback listener whoever follows it. Without it a server
   * that needs a login is reported as such (`needsLogin` in `status()`) and never waits.
   */
  authorize?: (url: URL) => Promise<void>;
  /** How long a login started through `authorize` may take, in ms (default 300 000). */
  loginTimeoutMs?: number;
  /** rein's user folder, where tokens are kept under `mcp-auth/` (default `$REIN_HOME`, else `~/.rein`). */
  reinHome?: string;
}

/** A rein tool of the host, described for listings (`rein mcp tools`). */
export interface McpToolInfo {
  server: string;
  /** The name the model sees. */
  name: string;
  /** The server's own name. */
  mcpName: string;
  description: string;
  parameters: Tool['parameters'];
  risk: Tool['risk'];
  effect: Tool['effect'];
}

/** A tool call's result as the host maps it (what the model would see), with the raw answer. */
export type McpCallResult = {
  content: Array<TextContent | ImageContent>;
  isError: boolean;
  details: McpCallDetails;
  raw: unknown;
};

const DEFAULT_RECONNECT: ReconnectPolicy = { initialDelayMs: 500, maxDelayMs: 30_000 };
const RESOURCE_TOOLS = ['list_resources', 'read_resource'];

/**
 * Loads MCP configuration and starts every enabled server in parallel. With `wait` (the
 * default) it resolves once each server has connected or failed its first attempt, so a
 * slow server delays start-up by at most its own `startupTimeoutMs`. Never throws for a
 * broken entry: see `host.diagnostics` and `host.status()`.
 *
 * @example
 * const mcp = await startMcp({ cwd: process.cwd() });   // nearest .mcp.json + ~/.rein/mcp.json
 * for (const d of mcp.diagnostics) console.warn(`${d.file ?? ''} ${d.key}: ${d.message}`);
 * const agent = new Agent({ model: 'openai/gpt-4o', toolSources: [mcp] });
 * try {
 *   console.log((await agent.run('What is in notes.md?')).text);
 * } finally {
 *   await mcp.close();   // ends every server (and its child processes)
 * }
 */
export async function startMcp(options: McpHostOptions = {}): Promise<McpHost> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  // Files named by the caller must exist; the default ones are read only when they do.
  const files = options.configFiles === false || (options.configFiles === undefined && options.servers) ? [] : options.configFiles;
  const config = await loadMcpConfig({
    cwd,
    env,
    home: options.home ?? homedir(),
    ...(files ? { files } : {}),
    ...(options.servers ? { servers: options.servers } : {}),
  });
  const only = options.only ? new Set(options.only) : undefined;
  const names = Object.keys(config.servers).filter((name) => !only || only.has(name));
  const sdk = names.length > 0 ? await loadSdk() : undefined;
  const host = new McpHost(config.diagnostics, options, rootsOf(options.roots ?? [cwd], cwd));
  const features = host.features();
  const auth: AuthSetup = {
    folder: options.reinHome ?? reinHome(env, options.home ?? homedir()),
    listener: () => host.loopback(),
    loginTimeoutMs: options.loginTimeoutMs ?? 300_000,
    ...(options.authorize ? { authorize: options.authorize } : {}),
  };
  for (const name of names) {
    const server = config.servers[name] as McpServerConfig;
    const source = config.sources[name];
    host.add(
      new ServerConnection({
        name,
        config: server,
        ...(source !== undefined ? { source } : {}),
        sdk: sdk as NonNullable<typeof sdk>,
        env,
        clientInfo: options.clientInfo ?? { name: 'rein', version: '0.1.0' },
        reconnect: options.reconnect === false ? false : { ...DEFAULT_RECONNECT, ...options.reconnect },
        pingIntervalMs: options.pingIntervalMs ?? 30_000,
        log: options.log ?? (() => undefined),
        features,
        auth,
        ...(options.logLevel !== undefined ? { logLevel: options.logLevel } : {}),
        onToolsChanged: () => host.rebuild(),
        onStatusChanged: () => host.statusChanged(name),
      }),
    );
  }
  for (const d of config.diagnostics) {
    if (d.severity === 'error' && d.server !== undefined && !(d.server in config.servers) && (!only || only.has(d.server)))
      host.addBroken(d);
  }
  const startup = host.start();
  if (options.wait !== false) await startup;
  return host;
}

/** The running host; see {@link startMcp}. Implements {@link ToolSource} (id `mcp`). */
export class McpHost implements ToolSource {
  readonly id = 'mcp';
  private readonly connections = new Map<string, ServerConnection>();
  private readonly broken = new Map<string, McpServerStatus>();
  private toolList: readonly Tool[] = Object.freeze([]);
  private bridged = new Map<string, BridgedTool>();
  private resourceKey = '';
  private readonly changeListeners = new Set<() => void>();
  private readonly statusListeners = new Set<(status: McpServerStatus) => void>();
  private readonly eventListeners = new Set<(event: McpEvent) => void>();
  private started: Promise<void> = Promise.resolve();
  private closing: Promise<void> | undefined;
  private listener: LoopbackListener | undefined;

  /** @internal Made by {@link startMcp}. */
  constructor(
    /** Problems in the configuration, each naming its file and key. */
    readonly diagnostics: readonly McpDiagnostic[],
    private readonly options: McpHostOptions,
    private rootList: readonly McpRoot[] = [],
  ) {
    if (options.onEvent) this.eventListeners.add(options.onEvent);
  }

  /** @internal What every connection shares: roots, hooks, the event sink. */
  features(): ClientFeatures {
    const features: ClientFeatures = { roots: () => this.rootList, emit: (event) => this.emit(event) };
    if (this.options.elicit) features.elicit = this.options.elicit;
    if (this.options.pauseElicitations) features.pauseElicitations = true;
    if (this.options.sample) features.sample = this.options.sample;
    return features;
  }

  /** Calls `listener` with every host event (log messages, list changes, resource updates…); returns an unsubscribe. */
  onEvent(listener: (event: McpEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** The roots announced to servers. */
  roots(): McpRoot[] {
    return this.rootList.map((r) => ({ ...r }));
  }

  /**
   * Replaces the roots (folders or `file://` URIs) and tells every connected server
   * (`notifications/roots/list_changed`); servers list them again when they need them.
   */
  async setRoots(roots: string[]): Promise<void> {
    this.rootList = rootsOf(roots, resolve(this.options.cwd ?? process.cwd()));
    await Promise.all([...this.connections.values()].map((c) => c.rootsChanged()));
  }

  /**
   * Subscribes to a resource (`resources/subscribe`): each `notifications/resources/updated`
   * becomes an `mcp_resource_updated` event. Kept across reconnects. Throws when the server
   * offers no subscriptions or refuses.
   */
  subscribeResource(server: string, uri: string): Promise<void> {
    return this.connection(server).subscribe(uri);
  }

  /** Ends a subscription. */
  unsubscribeResource(server: string, uri: string): Promise<void> {
    return this.connection(server).unsubscribe(uri);
  }

  /** Sets a server's log level (`logging/setLevel`), kept for its later sessions. */
  setLogLevel(server: string, level: McpLogLevel): Promise<void> {
    return this.connection(server).setLogLevel(level);
  }

  /**
   * Completion of a prompt's or resource template's argument (`completion/complete`).
   *
   * @example
   * const { values } = await mcp.complete('everything', { type: 'ref/prompt', name: 'completable-prompt' }, { name: 'department', value: 'En' });
   */
  complete(
    server: string,
    ref: CompletionRef,
    argument: { name: string; value: string },
    context?: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Completions> {
    return completeArgument(this.connection(server), ref, argument, context, signal);
  }

  /**
   * Completions for a `/server:prompt args` line being typed: server names, prompt names, or
   * the value of the argument at the end of the line (asked of the server). Each candidate is
   * the whole line as it would read completed.
   */
  async completePromptCommand(line: string, signal?: AbortSignal): Promise<string[]> {
    const { completeCommandLine } = await import('./completion.js');
    return completeCommandLine(line, [...this.connections.values()], signal);
  }

  private emit(event: McpEvent): void {
    for (const listener of [...this.eventListeners]) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the server's message is not lost for the others.
      }
    }
  }

  /** The tools offered now (the same array until something changes). */
  tools(): readonly Tool[] {
    return this.toolList;
  }

  /** Calls `listener` whenever `tools()` changes; returns an unsubscribe. */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Calls `listener` with a server's status whenever its state, error or tools change. */
  onStatus(listener: (status: McpServerStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Every configured server (broken entries as `failed`), in configuration order. */
  status(): McpServerStatus[] {
    return [...[...this.connections.values()].map((c) => c.status()), ...this.broken.values()];
  }

  /**
   * What connected servers said about using them (the `instructions` of `initialize`), to
   * add to a system prompt; servers without instructions are left out.
   */
  instructions(): Array<{ server: string; text: string }> {
    return [...this.connections.values()].flatMap((c) => (c.instructions ? [{ server: c.name, text: c.instructions }] : []));
  }

  /** Resolves when every server's first attempt has settled. */
  ready(): Promise<void> {
    return this.started;
  }

  /** Resolves when `server` is connected; rejects (`mcp_unavailable`) if it is disabled, failed for good, or `signal` aborts. */
  whenConnected(server: string, signal?: AbortSignal): Promise<void> {
    return this.connection(server).whenConnected(signal);
  }

  /** The host's tools with where they come from, optionally of one server. */
  toolInfo(server?: string): McpToolInfo[] {
    if (server !== undefined) this.connection(server);
    return [...this.bridged.values()]
      .filter((b) => server === undefined || b.server === server)
      .map((b) => ({
        server: b.server,
        name: b.tool.name,
        mcpName: b.mcpName,
        description: b.tool.description,
        parameters: b.tool.parameters,
        risk: b.tool.risk,
        effect: b.tool.effect,
      }));
  }

  /**
   * Calls a tool directly (no model, no validation: what the server says is what you get),
   * by its server name or its rein name. Throws a {@link ReinError} when the server is
   * unknown or down, refuses the call, or does not answer within `timeoutMs`.
   */
  async callTool(
    server: string,
    tool: string,
    args: Record<string, unknown> = {},
    options: {
      signal?: AbortSignal;
      timeoutMs?: number;
      onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
    } = {},
  ): Promise<McpCallResult> {
    const connection = this.connection(server);
    const bridged = this.bridged.get(tool);
    const name = connection.tools.some((t) => t.name === tool) ? tool : bridged?.server === server ? bridged.mcpName : tool;
    if (connection.state === 'connected' && !connection.tools.some((t) => t.name === name)) {
      const known = connection.tools.map((t) => t.name).join(', ') || 'none';
      throw new ReinError(
        'not_found',
        'correctable',
        `MCP server "${server}" has no tool "${tool}" (or it is filtered out by "tools"); its tools: ${known}`,
      );
    }
    const raw = await connection.callTool(name, args, options);
    const output = toToolOutput(raw, server, name);
    return {
      content: output.content as McpCallResult['content'],
      isError: output.isError === true,
      details: output.details as McpCallDetails,
      raw,
    };
  }

  /** Resources and templates of every server that offers them (or of `server`). */
  listResources(server?: string, signal?: AbortSignal): Promise<ResourceListing> {
    const chosen = server === undefined ? this.resourceServers() : [this.connection(server)];
    return listResources(chosen, signal);
  }

  /** Reads one resource, as parts a model can read. */
  readResource(server: string, uri: string, signal?: AbortSignal): Promise<ResourceContents> {
    return readResource(this.connection(server), uri, signal);
  }

  /** Prompts of every connected server that offers them (or of `server`), usable as `/server:prompt`. */
  listPrompts(server?: string): Promise<McpPromptInfo[]> {
    const chosen =
      server === undefined
        ? [...this.connections.values()].filter((c) => c.hasPrompts && c.state === 'connected')
        : [this.connection(server)];
    return listPrompts(chosen, (name, error) =>
      this.options.log?.({ server: name, level: 'warn', kind: 'event', message: `listing prompts failed: ${messageOf(error)}` }),
    );
  }

  /**
   * Attaches the resources of `@server:uri` mentions in user input; see {@link expandMentions}.
   *
   * @example
   * const { content, problems } = await mcp.expandMentions('Summarize @docs:file:///guide.md');
   * // content: [{ type: 'text', text: 'Summarize @docs:…' }, { type: 'text', text: '[resource file:///guide.md …]\n…' }]
   */
  expandMentions(text: string, signal?: AbortSignal): Promise<ExpandedMentions> {
    return expandMentions(text, this.connections, signal);
  }

  /**
   * Turns `/server:prompt args` into the prompt's content; `undefined` when `text` is not
   * such a command for a configured server (so `/help` and plain text pass through). Throws
   * `not_found` / `invalid_arguments` / `mcp_unavailable` with a message for the user.
   *
   * @example
   * const prompt = await mcp.expandPromptCommand('/everything:args-prompt city=Paris');
   * if (prompt) agent.run(prompt.content);
   */
  async expandPromptCommand(text: string, signal?: AbortSignal): Promise<ExpandedPrompt | undefined> {
    const command = parsePromptCommand(text);
    if (!command || !this.connections.has(command.server)) return undefined;
    return expandPrompt(this.connection(command.server), command, signal);
  }

  /** Closes every server (killing stdio servers' process trees) and stops reconnecting. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= Promise.all([...this.connections.values()].map((c) => c.close())).then(() => this.listener?.close());
    return this.closing;
  }

  /**
   * Forgets a server's stored OAuth tokens and registration (`rein mcp logout`); `true` when
   * there was something to forget. The running connection keeps its session.
   */
  logout(server: string): boolean {
    return this.connection(server).logout();
  }

  /** @internal The redirect listener of logins, made on first need. */
  loopback(): LoopbackListener {
    this.listener ??= new LoopbackListener();
    return this.listener;
  }

  /** @internal */
  add(connection: ServerConnection): void {
    this.connections.set(connection.name, connection);
  }

  /** @internal A broken config entry, shown as a `failed` server. */
  addBroken(diagnostic: McpDiagnostic): void {
    const name = diagnostic.server as string;
    if (this.broken.has(name)) return;
    const where = diagnostic.file ? `${diagnostic.file}: ` : '';
    const status: McpServerStatus = {
      name,
      transport: 'unknown',
      state: 'failed',
      toolCount: 0,
      attempts: 0,
      recentLog: [],
      lastError: `${where}${diagnostic.key} ${diagnostic.message}`,
    };
    if (diagnostic.file !== undefined) status.source = diagnostic.file;
    this.broken.set(name, status);
  }

  /** @internal */
  start(): Promise<void> {
    this.started = Promise.all([...this.connections.values()].map((c) => c.start())).then(() => undefined);
    return this.started;
  }

  /** @internal Rebuilds the tool array from every connection's current list. */
  rebuild(): void {
    const resourceServers = this.resourceServers();
    this.resourceKey = resourceServers.map((c) => c.name).join('\n');
    const namer = new ToolNamer(resourceServers.length > 0 ? RESOURCE_TOOLS : []);
    const bridged = new Map<string, BridgedTool>();
    const list: Tool[] = [];
    for (const connection of this.connections.values()) {
      const prefix = connection.config.toolPrefix ?? `${connection.name}__`;
      for (const b of bridgeTools(connection, prefix, namer, this.options.toolName)) {
        bridged.set(b.tool.name, b);
        list.push(b.tool);
      }
    }
    if (resourceServers.length > 0) list.push(...resourceTools(() => this.resourceServers()));
    this.bridged = bridged;
    this.toolList = Object.freeze(list);
    for (const listener of [...this.changeListeners]) listener();
  }

  /** @internal */
  statusChanged(name: string): void {
    if (
      this.resourceServers()
        .map((c) => c.name)
        .join('\n') !== this.resourceKey
    )
      this.rebuild();
    const connection = this.connections.get(name);
    if (!connection) return;
    const status = connection.status();
    for (const listener of [...this.statusListeners]) listener(status);
  }

  private resourceServers(): ServerConnection[] {
    return [...this.connections.values()].filter((c) => c.hasResources);
  }

  private connection(server: string): ServerConnection {
    const connection = this.connections.get(server);
    if (connection) return connection;
    const broken = this.broken.get(server);
    if (broken)
      throw new ReinError(
        'mcp_unavailable',
        'fatal',
        `MCP server "${server}" is not started: its configuration is broken (${broken.lastError ?? 'see diagnostics'})`,
      );
    const known = [...this.connections.keys()].join(', ') || 'none';
    throw new ReinError('not_found', 'correctable', `no MCP server named "${server}"; configured: ${known}`);
  }
}
