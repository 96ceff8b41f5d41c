/**
 * A server's tool list as the host keeps it: every page of `tools/list`, filtered by the
 * entry's allow / deny lists, with input schemas normalized and compiled once: listing
 * again (a reconnect, `list_changed`) compiles only the schemas that changed.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { isRecord } from '../util/json.js';
import type { JsonSchema } from '../model/types.js';
import { loadPicomatch } from '../workspace/patterns.js';
import { allPages } from './pages.js';
import { prepareInputSchema, type PreparedSchema } from './schema.js';
import type { McpServerConfig } from './types.js';

/** One tool of a server, ready to become a rein tool. */
export interface ServerTool {
  /** The server's own name for it (what `tools/call` takes). */
  name: string;
  title?: string;
  description?: string;
  /** The normalized, compiled input schema. */
  parameters: JsonSchema;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean; title?: string };
}

/**
 * The prepared schemas of a server's last listing, by tool name and the schema as the
 * server sent it. An unchanged tool keeps its schema object, and with it the validator
 * compiled for it.
 */
export type PreparedSchemas = Map<string, PreparedSchema>;

/**
 * Accepts any result: the SDK's own `tools/list` schema rejects the whole list when one
 * tool's `inputSchema` lacks `type: "object"` (common in older servers), and its
 * `tools/call` schema rejects content types it does not know. rein checks what it uses
 * itself ({@link readTools}, the content mapper) and keeps the rest of the list.
 */
export const ANY_RESULT = { safeParse: (data: unknown) => ({ success: true as const, data }) } as unknown as Parameters<
  Client['request']
>[1];

interface ListedTool {
  name: string;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  annotations?: unknown;
  execution?: { taskSupport?: unknown };
}

/** Builds the allow / deny test of an entry's `tools` field (globs: picomatch, loaded here on first use). */
export function toolFilter(config: McpServerConfig): (name: string) => boolean {
  const tools = config.tools;
  if (tools === undefined) return () => true;
  const glob = loadPicomatch();
  const allowList = Array.isArray(tools) ? tools : tools.allow;
  const denyList = Array.isArray(tools) ? undefined : tools.deny;
  const allow = allowList ? glob(allowList) : () => true;
  const deny = denyList && denyList.length > 0 ? glob(denyList) : () => false;
  return (name) => allow(name) && !deny(name);
}

/**
 * Lists every tool of a connected server. Tools the filter refuses are left out, and so
 * are tools that can only run as MCP tasks (rein calls tools directly); `note` hears why.
 * `schemas` holds what the previous listing prepared and is left holding this one's.
 */
export async function fetchServerTools(
  client: Client,
  allowed: (name: string) => boolean,
  request: { signal?: AbortSignal; timeout: number },
  note: (message: string) => void,
  schemas: PreparedSchemas,
): Promise<ServerTool[]> {
  const tools: ServerTool[] = [];
  const kept: PreparedSchemas = new Map();
  const listed = await allPages('tools/list', async (cursor) => {
    const params = cursor === undefined ? {} : { cursor };
    const result = (await client.request({ method: 'tools/list', params }, ANY_RESULT, request)) as {
      tools?: unknown;
      nextCursor?: unknown;
    };
    return { items: readTools(result.tools, note), nextCursor: typeof result.nextCursor === 'string' ? result.nextCursor : undefined };
  });
  const seen = new Set<string>();
  for (const tool of listed) {
    // A name repeated across pages is the same mistake as one repeated within a page.
    if (seen.has(tool.name)) {
      note(`tools/list has "${tool.name}" twice: the first one is used`);
      continue;
    }
    seen.add(tool.name);
    if (!allowed(tool.name)) continue;
    if (tool.execution?.taskSupport === 'required') {
      note(`tool "${tool.name}" runs only as an MCP task, which rein does not use: left out`);
      continue;
    }
    const key = `${tool.name}\n${JSON.stringify(tool.inputSchema ?? null)}`;
    const prepared = schemas.get(key) ?? (await prepareInputSchema(tool.inputSchema));
    kept.set(key, prepared);
    if (prepared.warning) note(`tool "${tool.name}": ${prepared.warning}`);
    const entry: ServerTool = { name: tool.name, parameters: prepared.schema };
    if (typeof tool.title === 'string') entry.title = tool.title;
    if (typeof tool.description === 'string') entry.description = tool.description;
    if (isRecord(tool.annotations)) entry.annotations = tool.annotations as NonNullable<ServerTool['annotations']>;
    tools.push(entry);
  }
  // Only what this list uses stays: a server that renames tools must not grow the cache.
  schemas.clear();
  for (const [key, prepared] of kept) schemas.set(key, prepared);
  return tools;
}

/** The well-formed entries of a `tools/list` answer; the others are named through `note`. */
function readTools(list: unknown, note: (message: string) => void): ListedTool[] {
  if (!Array.isArray(list)) {
    note('tools/list answered without a "tools" array');
    return [];
  }
  const tools: ListedTool[] = [];
  const seen = new Set<string>();
  for (const item of list) {
    if (!isRecord(item) || typeof item.name !== 'string' || item.name === '') {
      note(`tools/list has an entry without a name: ${JSON.stringify(item).slice(0, 120)}`);
    } else if (seen.has(item.name)) {
      note(`tools/list has "${item.name}" twice: the first one is used`);
    } else {
      seen.add(item.name);
      tools.push(item as unknown as ListedTool);
    }
  }
  return tools;
}

/** A cheap identity of a tool list: equal lists keep the host's tool array (and its caches). */
export function toolsSignature(tools: readonly ServerTool[]): string {
  return JSON.stringify(tools.map((t) => [t.name, t.title, t.description, t.parameters, t.annotations]));
}
