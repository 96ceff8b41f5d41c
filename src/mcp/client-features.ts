/**
 * The client side of MCP beyond tools: what rein declares in `initialize` and the
 * requests and notifications it answers — `roots/list`, `elicitation/create`,
 * `sampling/createMessage`, servers' log messages, list changes of prompts and resources,
 * and resource updates. Each server's client gets these handlers before it connects.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { elicitationHandler } from './elicitation.js';
import type { RunCalls } from './run-calls.js';
import { samplingHandler } from './sampling.js';
import type { Sdk } from './sdk.js';
import type { ServerLog } from './server-log.js';
import type {
  McpElicitRequest,
  McpElicitResult,
  McpEvent,
  McpLogEntry,
  McpLogLevel,
  McpRoot,
  McpSamplingRequest,
  McpSamplingResult,
} from './types.js';

/** What the host lends every connection: roots, hooks for people and models, the event sink. */
export interface ClientFeatures {
  /** The roots announced now; absent: no roots capability. */
  roots: (() => readonly McpRoot[]) | undefined;
  emit: (event: McpEvent) => void;
  /** Answers elicitations; without it rein declares no elicitation capability. */
  elicit?: (request: McpElicitRequest) => Promise<McpElicitResult>;
  /**
   * With no `elicit` hook: a question asked during a run's tool call pauses the run (the
   * call waits, durably, for `agent.answerElicitation` / `rein approve`). Elicitation is
   * declared then too.
   */
  pauseElicitations?: boolean;
  /** Answers sampling requests; without it rein declares no sampling capability. */
  sample?: (request: McpSamplingRequest) => Promise<McpSamplingResult>;
}

/** The capabilities rein declares: roots (unless the entry says `roots: false`), elicitation (form and URL) and sampling when hooked. */
export function clientCapabilities(features: ClientFeatures): ClientCapabilities {
  const capabilities: ClientCapabilities = features.roots ? { roots: { listChanged: true } } : {};
  // `applyDefaults`: the SDK fills schema defaults into an accepted form as well, a second net under rein's own.
  if (features.elicit || features.pauseElicitations) capabilities.elicitation = { form: { applyDefaults: true }, url: {} };
  if (features.sample) capabilities.sampling = {};
  return capabilities;
}

/** What the connection tells its handlers about itself. */
export interface ServerSide {
  name: string;
  log: ServerLog;
  /** The prompt or resource list changed on the server. */
  listChanged: (list: 'prompts' | 'resources') => void;
  /** Runs' tool calls in flight on the server (what its requests are bound to). */
  runCalls: RunCalls;
  /** The entry's `updatesToModel`: resource updates are marked for a run's model. */
  updatesToModel?: boolean;
}

/** Registers rein's request and notification handlers on a client that is about to connect. */
export function registerClientHandlers(client: Client, sdk: Sdk, features: ClientFeatures, server: ServerSide): void {
  const roots = features.roots;
  if (roots) client.setRequestHandler(sdk.ListRootsRequestSchema, () => ({ roots: roots().map((r) => ({ ...r })) }));
  client.setNotificationHandler(sdk.LoggingMessageNotificationSchema, (notification) => {
    const { level, logger, data } = notification.params;
    server.log.serverMessage(rankOf(level), `${logger ? `${logger}: ` : ''}${typeof data === 'string' ? data : JSON.stringify(data)}`);
    features.emit({ type: 'mcp_log', server: server.name, level, ...(logger !== undefined ? { logger } : {}), data });
  });
  client.setNotificationHandler(sdk.ResourceUpdatedNotificationSchema, (notification) => {
    features.emit({
      type: 'mcp_resource_updated',
      server: server.name,
      uri: notification.params.uri,
      ...(server.updatesToModel ? { toModel: true } : {}),
    });
  });
  client.setNotificationHandler(sdk.ResourceListChangedNotificationSchema, () => server.listChanged('resources'));
  client.setNotificationHandler(sdk.PromptListChangedNotificationSchema, () => server.listChanged('prompts'));
  if (features.elicit || features.pauseElicitations) {
    client.setRequestHandler(
      sdk.ElicitRequestSchema,
      elicitationHandler({
        server: server.name,
        ...(features.elicit ? { elicit: features.elicit } : {}),
        pause: features.pauseElicitations === true,
        bound: () => server.runCalls.bound(),
        emit: features.emit,
        sdk,
      }),
    );
    // The server saw the person finish a URL-mode elicitation out of band.
    client.setNotificationHandler(sdk.ElicitationCompleteNotificationSchema, (notification) => {
      features.emit({ type: 'mcp_elicitation_complete', server: server.name, elicitationId: notification.params.elicitationId });
    });
  }
  if (features.sample)
    client.setRequestHandler(
      sdk.CreateMessageRequestSchema,
      samplingHandler(server.name, features.sample, features.emit, sdk, () => server.runCalls.bound()),
    );
}

/** rein's log level for an MCP (syslog) level. */
function rankOf(level: McpLogLevel): McpLogEntry['level'] {
  switch (level) {
    case 'debug':
      return 'debug';
    case 'info':
    case 'notice':
      return 'info';
    case 'warning':
      return 'warn';
    default:
      return 'error';
  }
}
