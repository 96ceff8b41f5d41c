/**
 * Resource updates as messages to a run's model: for servers whose entry says
 * `updatesToModel`, each `notifications/resources/updated` of a subscribed resource is
 * handed to the running run as a steering message naming the server and the resource,
 * which enters before its next model call and is logged as `message_injected`. The notice
 * is queued the moment the update arrives (an update during a tool call is seen by the
 * model's very next call); the model reads the resource with the `read_resource` tool when
 * it matters to the task.
 */
import type { RunHandle } from '../loop/handle.js';
import type { McpHost } from '../mcp/host.js';

/** Steers `handle` with the updates of `mcp`'s resources marked for the model; returns what stops it. */
export function steerResourceUpdates(mcp: Pick<McpHost, 'onEvent'>, handle: Pick<RunHandle, 'steer'>): () => void {
  return mcp.onEvent((event) => {
    if (event.type !== 'mcp_resource_updated' || event.toModel !== true) return;
    handle.steer(
      `[MCP server "${event.server}" says its resource ${event.uri} was updated; ` +
        `read_resource({"server": "${event.server}", "uri": "${event.uri}"}) reads it as it is now]`,
    );
  });
}
