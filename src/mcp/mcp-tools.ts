/**
 * A server's tools as rein {@link Tool}s: named `<server>__<tool>` (valid and unique),
 * validated against the server's input schema by the dispatcher, with risk and effect
 * read from the tool's annotations, the server's timeout, cancellation through
 * `ctx.signal` and progress through `ctx.progress`.
 */
import { callWaits } from '../tools/call-side-channel.js';
import type { Tool, ToolEffect, ToolRisk } from '../tools/types.js';
import type { ServerConnection } from './connection.js';
import { toToolOutput } from './content.js';
import type { ToolNamer } from './naming.js';
import type { ServerTool } from './server-tools.js';

/** A rein tool bridged from a server, and where it came from. */
export interface BridgedTool {
  tool: Tool;
  server: string;
  /** The server's own name of the tool. */
  mcpName: string;
}

/**
 * Risk from MCP annotations: `readOnlyHint` → `read`; anything else → `write`. The MCP
 * spec makes an unannotated tool potentially destructive (`destructiveHint` defaults to
 * true), so rein does not guess it harmless; `execute` is kept for rein's own shell tools.
 */
function riskOf(tool: ServerTool): ToolRisk {
  return tool.annotations?.readOnlyHint === true ? 'read' : 'write';
}

/** Effect from MCP annotations: read-only → `pure`, `idempotentHint` → `idempotent`, else `unsafe`. */
function effectOf(tool: ServerTool): ToolEffect {
  if (tool.annotations?.readOnlyHint === true) return 'pure';
  if (tool.annotations?.idempotentHint === true) return 'idempotent';
  return 'unsafe';
}

/** Builds the rein tools of one connection, taking names from `namer`. */
export function bridgeTools(
  connection: ServerConnection,
  prefix: string,
  namer: ToolNamer,
  customName?: (server: string, tool: string) => string,
): BridgedTool[] {
  const server = connection.name;
  return connection.tools.map((serverTool) => {
    const name = namer.name(customName ? customName(server, serverTool.name) : `${prefix}${serverTool.name}`);
    const tool: Tool = {
      name,
      description: describe(server, serverTool),
      parameters: serverTool.parameters,
      timeoutMs: connection.timeoutMs,
      risk: riskOf(serverTool),
      effect: effectOf(serverTool),
      async execute(args, ctx) {
        let result: unknown;
        try {
          result = await connection.callTool(serverTool.name, args, {
            signal: ctx.signal,
            onProgress: (p) => ctx.progress(p),
            call: { runId: ctx.runId, toolCallId: ctx.toolCallId },
          });
        } catch (error) {
          // Ended because the server asked a person something: the run pauses, and the loop
          // reads the question, not this output.
          if (callWaits(ctx.runId, ctx.toolCallId)) return { content: 'waiting for a person to answer the server', isError: true };
          throw error;
        }
        return toToolOutput(result, server, serverTool.name);
      },
    };
    return { tool, server, mcpName: serverTool.name };
  });
}

function describe(server: string, tool: ServerTool): string {
  const text = tool.description?.trim() || tool.title?.trim() || tool.annotations?.title?.trim();
  return text || `Tool "${tool.name}" of the MCP server "${server}".`;
}
