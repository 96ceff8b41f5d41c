/**
 * The official MCP SDK, loaded on first use: importing rein (or this folder) must stay
 * fast, and a program that configures no MCP server never pays for the SDK, nor installs
 * it (`npm install @modelcontextprotocol/sdk`: an optional package; a missing one is named).
 */
import { asMissing } from '../optional.js';
import type { StdioFraming } from './process-transport.js';

/** The SDK's package: an optional one, installed by those who use MCP servers. */
const SDK_PACKAGE = '@modelcontextprotocol/sdk';

/** The parts of the SDK the host uses. */
export interface Sdk {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  StreamableHTTPError: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPError;
  SSEClientTransport: typeof import('@modelcontextprotocol/sdk/client/sse.js').SSEClientTransport;
  SseError: typeof import('@modelcontextprotocol/sdk/client/sse.js').SseError;
  McpError: typeof import('@modelcontextprotocol/sdk/types.js').McpError;
  ToolListChangedNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').ToolListChangedNotificationSchema;
  ProgressNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').ProgressNotificationSchema;
  LoggingMessageNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').LoggingMessageNotificationSchema;
  ResourceUpdatedNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').ResourceUpdatedNotificationSchema;
  ResourceListChangedNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').ResourceListChangedNotificationSchema;
  PromptListChangedNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').PromptListChangedNotificationSchema;
  ListRootsRequestSchema: typeof import('@modelcontextprotocol/sdk/types.js').ListRootsRequestSchema;
  ElicitRequestSchema: typeof import('@modelcontextprotocol/sdk/types.js').ElicitRequestSchema;
  CreateMessageRequestSchema: typeof import('@modelcontextprotocol/sdk/types.js').CreateMessageRequestSchema;
  ElicitationCompleteNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').ElicitationCompleteNotificationSchema;
  framing: StdioFraming;
}

let loading: Promise<Sdk> | undefined;

/** Loads the SDK once; later calls share the same promise. */
export function loadSdk(): Promise<Sdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/shared/stdio.js'),
  ]).then(
    ([client, http, sse, types, stdio]) => ({
      Client: client.Client,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      StreamableHTTPError: http.StreamableHTTPError,
      SSEClientTransport: sse.SSEClientTransport,
      SseError: sse.SseError,
      McpError: types.McpError,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
      ProgressNotificationSchema: types.ProgressNotificationSchema,
      LoggingMessageNotificationSchema: types.LoggingMessageNotificationSchema,
      ResourceUpdatedNotificationSchema: types.ResourceUpdatedNotificationSchema,
      ResourceListChangedNotificationSchema: types.ResourceListChangedNotificationSchema,
      PromptListChangedNotificationSchema: types.PromptListChangedNotificationSchema,
      ListRootsRequestSchema: types.ListRootsRequestSchema,
      ElicitRequestSchema: types.ElicitRequestSchema,
      CreateMessageRequestSchema: types.CreateMessageRequestSchema,
      ElicitationCompleteNotificationSchema: types.ElicitationCompleteNotificationSchema,
      framing: { ReadBuffer: stdio.ReadBuffer, serializeMessage: stdio.serializeMessage },
    }),
    (error: unknown) => {
      // Not cached: a package installed later in a long-lived process is found on the next try.
      loading = undefined;
      throw asMissing(error, [SDK_PACKAGE], 'MCP support');
    },
  );
  return loading;
}

/** The SDK's OAuth client (`auth()` and its errors), loaded when a server first asks for authorization. */
export type AuthSdk = typeof import('@modelcontextprotocol/sdk/client/auth.js');

let loadingAuth: Promise<AuthSdk> | undefined;

/** Loads the SDK's OAuth client once. */
export function loadAuthSdk(): Promise<AuthSdk> {
  loadingAuth ??= import('@modelcontextprotocol/sdk/client/auth.js');
  return loadingAuth;
}
