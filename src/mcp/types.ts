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
}

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
}

/** One line of the host's log: connection changes, reconnects, and stdio servers' stderr. */
export interface McpLogEntry {
  server: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  /** `stderr` for lines the server itself wrote. */
  kind: 'event' | 'stderr';
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
