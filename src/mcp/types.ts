/**
 * The public shapes of rein's MCP host: server configuration as written in `.mcp.json`,
 * what loading it reports, and what the host says about each server.
 */

/** How rein talks to a server: a child process (stdio), Streamable HTTP, or legacy HTTP+SSE. */
export type McpTransportKind = 'stdio' | 'http' | 'sse';

/** Fields every server entry may carry, whatever its transport. */
export interface McpServerCommon {
  /** Per-call timeout in ms (default 60 000); the call is cancelled on the server when it passes. */
  timeoutMs?: number;
  /** How long starting may take (spawn or HTTP handshake, `initialize`, `tools/list`), in ms (default 30 000). */
  startupTimeoutMs?: number;
  /** `false` keeps the entry but never starts it (listed as `disabled`). Default `true`. */
  enabled?: boolean;
  /**
   * Which of the server's tools are offered, by the server's own tool names; `*` and other
   * glob patterns allowed. A plain array is an allow list. Deny wins over allow.
   */
  tools?: string[] | { allow?: string[]; deny?: string[] };
  /** What the rein names of this server's tools start with; default `<server>__`. `""` for bare names. */
  toolPrefix?: string;
  /** Free text for people reading the file; ignored. */
  description?: string;
  /** The level asked of the server with `logging/setLevel` after connecting (servers that log). */
  logLevel?: McpLogLevel;
  /**
   * The roots announced to this server (folders, relative to the config file's folder), or
   * `false` to announce none (no roots capability: a server such as server-filesystem then
   * keeps the folders of its arguments). Default: the host's roots (the workspace).
   */
  roots?: string[] | false;
  /** Resource URIs to subscribe to after connecting (`resources/subscribe`); updates arrive as `mcp_resource_updated` events. */
  subscribe?: string[];
  /**
   * The updates of this server's subscribed resources also reach the model of a running
   * `rein run` / `rein chat` (or a run given to `steerResourceUpdates`): a message with the
   * resource as it now reads, entering before the run's next model call.
   */
  updatesToModel?: boolean;
}

/** A server rein starts as a child process and talks to over its stdin and stdout. */
export interface McpStdioServerConfig extends McpServerCommon {
  type?: 'stdio';
  command: string;
  args?: string[];
  /** Added to the inherited safe environment (PATH, HOME, locale, proxies…). */
  env?: Record<string, string>;
  /** Working directory; relative paths are resolved against the config file's folder. */
  cwd?: string;
}

/** A server reached over HTTP: Streamable HTTP, falling back to legacy SSE when the URL answers that way. */
export interface McpHttpServerConfig extends McpServerCommon {
  /** `http` (Streamable HTTP only), `sse` (legacy SSE only); absent: try Streamable HTTP, then SSE. */
  type?: 'http' | 'sse';
  url: string;
  headers?: Record<string, string>;
  /** OAuth for a server that answers 401 (see docs/mcp.md, "Authorization"). */
  auth?: McpAuthConfig;
}

/**
 * How rein authorizes with an OAuth-protected server. Without it a server that answers 401
 * is still authorized (discovery, dynamic registration, authorization code with PKCE);
 * with it the client is pre-registered, identified by a metadata document, or a machine.
 */
export interface McpAuthConfig {
  /** A pre-registered client id (no registration is made). */
  clientId?: string;
  /** Its secret, for a confidential client. */
  clientSecret?: string;
  /** Scopes to ask for when the server names none. */
  scope?: string;
  /** `authorization_code` (default: a person logs in) or `client_credentials` (machine to machine). */
  grant?: 'authorization_code' | 'client_credentials';
  /** PKCS#8 PEM key: client credentials authenticate with a signed JWT (`private_key_jwt`) instead of a secret. */
  privateKeyPem?: string;
  /** The JWT's algorithm (default `RS256`). */
  signingAlgorithm?: string;
  /** An HTTPS URL of a Client ID Metadata Document, used as the client id where the server supports it. */
  clientMetadataUrl?: string;
}

/** The levels of MCP logging (RFC 5424 severities), least severe first. */
export type McpLogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** What a server asked the person through `elicitation/create`. */
export interface McpElicitRequest {
  server: string;
  /** `form`: answer fields of `requestedSchema`; `url`: open `url` (nothing is sent back but the action). */
  mode: 'form' | 'url';
  message: string;
  /** For `form`: a flat object schema of primitive fields (defaults already in `defaults`). */
  requestedSchema?: { type: 'object'; properties: Record<string, Record<string, unknown>>; required?: string[] };
  /** For `form`: each field's `default` from the schema. */
  defaults?: Record<string, unknown>;
  /** For `url`: what to open, and the server's id for this elicitation. */
  url?: string;
  elicitationId?: string;
  /** Aborted when the server cancels the request or the host closes. */
  signal: AbortSignal;
}

/** The answer to an elicitation. */
export interface McpElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  /** For an accepted form: the field values (checked against the schema, defaults filled in). */
  content?: Record<string, string | number | boolean | string[]>;
}

/** A `sampling/createMessage` request of a server, as the `sample` hook receives it. */
export interface McpSamplingRequest {
  server: string;
  /** The request's params as the server sent them (`messages`, `systemPrompt`, `maxTokens`, `modelPreferences`…). */
  params: {
    messages: Array<{ role: 'user' | 'assistant'; content: unknown }>;
    systemPrompt?: string;
    maxTokens: number;
    temperature?: number;
    stopSequences?: string[];
    modelPreferences?: unknown;
    includeContext?: string;
    [key: string]: unknown;
  };
  signal: AbortSignal;
  /**
   * A person already approved this very request (a run paused for it, `rein approve`
   * answered, and the resumed call's server asked it again): the sampler answers it
   * without asking or deciding again.
   */
  approved?: true;
}

/** The answer to a sampling request (the MCP `CreateMessageResult`). */
export interface McpSamplingResult {
  role: 'assistant';
  content: { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };
  model: string;
  stopReason?: string;
}

/** A workspace root announced to servers (`roots/list`). */
export interface McpRoot {
  /** A `file://` URI. */
  uri: string;
  name?: string;
}

/**
 * What the host reports besides tools: servers' log messages, list changes, resource
 * updates, authorization, elicitations and sampling. Never carries a token.
 */
export type McpEvent =
  | { type: 'mcp_log'; server: string; level: McpLogLevel; logger?: string; data: unknown }
  | { type: 'mcp_list_changed'; server: string; list: 'tools' | 'prompts' | 'resources' }
  | {
      type: 'mcp_resource_updated';
      server: string;
      uri: string;
      /** The server's entry says `updatesToModel`: a run's model is to be told. */
      toModel?: boolean;
    }
  | {
      type: 'mcp_auth';
      server: string;
      status: 'needs_login' | 'authorized' | 'refreshed' | 'step_up' | 'failed';
      scope?: string;
      message?: string;
    }
  | {
      type: 'mcp_elicitation';
      server: string;
      mode: 'form' | 'url';
      message: string;
      /** `paused`: nobody could answer here, and the run's call that was asked waits for a person. */
      action: McpElicitResult['action'] | 'error' | 'paused';
      url?: string;
      /** Answered with what a person gave while the run was paused. */
      stored?: boolean;
    }
  | { type: 'mcp_elicitation_complete'; server: string; elicitationId: string }
  | {
      type: 'mcp_sampling';
      server: string;
      /** `allow`: answered; `deny`: refused by the policy or a person; `error`: the model failed; `paused`: a run's call waits for a person's decision. */
      decision: 'allow' | 'deny' | 'error' | 'paused';
      /** The permission rule that decided, when the sampler names one. */
      rule?: string;
      model?: string;
      usage?: { input: number; output: number; cost?: number };
      stopReason?: string;
      reason?: string;
    };

/** One entry of `mcpServers`. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** A problem found in MCP configuration, naming the file and the key. */
export interface McpDiagnostic {
  /** `error`: the entry (or file) is not used; `warning`: it is, but something was ignored. */
  severity: 'error' | 'warning';
  /** The config file; absent for servers passed in code. */
  file?: string;
  /** JSON path of the offending key, e.g. `mcpServers.github.command`; empty for the whole file. */
  key: string;
  /** The server entry concerned, when there is one. */
  server?: string;
  message: string;
}

/** What {@link loadMcpConfig} found: the usable servers (expanded) and every problem. */
export interface McpConfig {
  servers: Record<string, McpServerConfig>;
  /** Where each server of `servers` was defined (a file path, or `options`). */
  sources: Record<string, string>;
  diagnostics: McpDiagnostic[];
}

/**
 * Where a server stands:
 * - `connecting`: the first attempt is running;
 * - `connected`: its tools can be called;
 * - `reconnecting`: it crashed, disconnected or failed to start; attempts continue with backoff;
 * - `failed`: given up (a broken config entry, or reconnecting was turned off);
 * - `disabled`: `enabled: false` in its config.
 */
export type McpServerState = 'connecting' | 'connected' | 'reconnecting' | 'failed' | 'disabled';

/** One server as `status()` and `rein mcp list` show it. */
export interface McpServerStatus {
  name: string;
  /** `unknown` only for an entry too broken to tell. */
  transport: McpTransportKind | 'unknown';
  state: McpServerState;
  /** Tools offered to the model (after allow / deny). */
  toolCount: number;
  /** The last thing that went wrong, with the end of the server's stderr when it helps. */
  lastError?: string;
  /** Connection attempts since the last success. */
  attempts: number;
  /** What the server said it is in `initialize`. */
  serverInfo?: { name: string; version: string };
  /** The child process of a stdio server while it runs. */
  pid?: number;
  /** Where the entry was configured. */
  source?: string;
  /** The last lines the server wrote to stderr (stdio) or rein logged about it. */
  recentLog: string[];
  /** The server asked for OAuth and holds no usable token: `rein mcp login <name>`. */
  needsLogin?: boolean;
}

/** One line of the host's log: connection changes, reconnects, and stdio servers' stderr. */
export interface McpLogEntry {
  server: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  /** `stderr` for lines the server itself wrote; `server` for its MCP log messages (`notifications/message`). */
  kind: 'event' | 'stderr' | 'server';
  message: string;
}

/** A resource a server offers, as `listResources()` answers. */
export interface McpResourceInfo {
  server: string;
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
}

/** A resource template (`uriTemplate`), as `listResources()` answers. */
export interface McpResourceTemplateInfo {
  server: string;
  uriTemplate: string;
  name: string;
  description?: string;
  mimeType?: string;
}

/** A prompt a server offers, usable as `/server:prompt args`. */
export interface McpPromptInfo {
  server: string;
  name: string;
  description?: string;
  arguments: Array<{ name: string; description?: string; required: boolean }>;
}
