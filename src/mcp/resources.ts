/**
 * Resources across servers: listing (every page, with templates), reading, and the two
 * built-in tools `list_resources` / `read_resource` that let a model do both. The tools
 * exist only while some connected server offers resources.
 */
import type { ImageContent, TextContent } from '../model/types.js';
import type { Tool } from '../tools/types.js';
import type { ServerConnection } from './connection.js';
import { resourceToParts } from './content.js';
import { messageOf } from './failures.js';
import { allPages, PageError } from './pages.js';
import type { McpResourceInfo, McpResourceTemplateInfo } from './types.js';

/** Everything `listResources` found, and which servers could not answer. */
export interface ResourceListing {
  resources: McpResourceInfo[];
  templates: McpResourceTemplateInfo[];
  /** One line per server that failed, naming it. */
  errors: string[];
}

/** A resource's contents as model parts, and the server's raw answer. */
export interface ResourceContents {
  parts: Array<TextContent | ImageContent>;
  raw: unknown;
}

/** JSON-RPC "method not found": a server with resources but no templates may answer it. */
const METHOD_NOT_FOUND = -32601;

/**
 * Lists resources and templates of the given connections (every page of both), in
 * parallel. A server that fails is named in `errors` with what failed; what it listed
 * before the failure (earlier pages, or its resources when only templates failed) is kept.
 */
export async function listResources(connections: readonly ServerConnection[], signal?: AbortSignal): Promise<ResourceListing> {
  const listing: ResourceListing = { resources: [], templates: [], errors: [] };
  const options = { mutating: false, ...(signal ? { signal } : {}) };
  const timeout = (c: ServerConnection) => ({ timeout: c.timeoutMs, ...(signal ? { signal } : {}) });
  await Promise.all(
    connections.map(async (c) => {
      const report = (what: string, error: unknown): void => {
        listing.errors.push(`${c.name}: ${what}${messageOf(error)}`);
      };
      try {
        const resources = await allPages('resources/list', async (cursor) => {
          const result = await c.request('resources/list', c.timeoutMs, options, (client) =>
            client.listResources(cursor === undefined ? undefined : { cursor }, timeout(c)),
          );
          return { items: result.resources, nextCursor: result.nextCursor };
        });
        for (const r of resources) listing.resources.push(info(c.name, r, { uri: r.uri }));
      } catch (error) {
        for (const r of partialOf<{ uri: string; name: string }>(error)) listing.resources.push(info(c.name, r, { uri: r.uri }));
        report(error instanceof PageError ? '' : 'resources/list failed: ', error);
        return;
      }
      try {
        const templates = await allPages('resources/templates/list', async (cursor) => {
          const result = await c.request('resources/templates/list', c.timeoutMs, options, (client) =>
            client.listResourceTemplates(cursor === undefined ? undefined : { cursor }, timeout(c)),
          );
          return { items: result.resourceTemplates, nextCursor: result.nextCursor };
        });
        for (const t of templates) listing.templates.push(info(c.name, t, { uriTemplate: t.uriTemplate }));
      } catch (error) {
        // Templates are optional: a server without them may answer "method not found" to the
        // first page. Anything else (a later page failing, a timeout) is reported.
        if (!(error instanceof PageError) && rpcCode(error) === METHOD_NOT_FOUND) return;
        for (const t of partialOf<{ uriTemplate: string; name: string }>(error))
          listing.templates.push(info(c.name, t, { uriTemplate: t.uriTemplate }));
        report(error instanceof PageError ? '' : 'resources/templates/list failed: ', error);
      }
    }),
  );
  return listing;
}

/** The JSON-RPC code of a server's error answer (kept as the cause of rein's error). */
function rpcCode(error: unknown): unknown {
  const cause = (error as { cause?: unknown }).cause;
  return (cause as { code?: unknown } | undefined)?.code;
}

function partialOf<T>(error: unknown): T[] {
  return error instanceof PageError ? (error.partial as T[]) : [];
}

/** Reads one resource of a connection, as parts a model can read. */
export async function readResource(connection: ServerConnection, uri: string, signal?: AbortSignal): Promise<ResourceContents> {
  const raw = await connection.request(
    `resources/read "${uri}"`,
    connection.timeoutMs,
    { mutating: false, ...(signal ? { signal } : {}) },
    (client) => client.readResource({ uri }, { timeout: connection.timeoutMs, ...(signal ? { signal } : {}) }),
  );
  const parts = raw.contents.flatMap((content) => resourceToParts(content as Record<string, unknown>, connection.name));
  return { parts: parts.length > 0 ? parts : [{ type: 'text', text: `[resource ${uri} from ${connection.name}] (empty)` }], raw };
}

/**
 * The built-in resource tools over the connections that offer resources. `servers` is
 * called at each use, so reconnects and new servers are seen.
 */
export function resourceTools(servers: () => ServerConnection[]): Tool[] {
  const names = servers().map((c) => c.name);
  const pick = (name: unknown): ServerConnection => {
    const found = servers().find((c) => c.name === name);
    if (!found)
      throw new Error(
        `no MCP server named ${JSON.stringify(name)} offers resources; use one of: ${servers()
          .map((c) => c.name)
          .join(', ')}`,
      );
    return found;
  };
  const list: Tool = {
    name: 'list_resources',
    description:
      'List the resources (files, records, documents) that connected MCP servers offer, with their URIs. Use it to find what read_resource can read; give "server" to list one server only.',
    parameters: { type: 'object', properties: { server: { type: 'string', enum: names, description: 'Only this server' } } },
    risk: 'read',
    effect: 'pure',
    async execute(args, ctx) {
      const chosen = args.server === undefined ? servers() : [pick(args.server)];
      const listing = await listResources(chosen, ctx.signal);
      return { content: formatListing(listing), details: listing };
    },
  };
  const read: Tool = {
    name: 'read_resource',
    description:
      'Read one resource of an MCP server by its URI (from list_resources, a resource link in a tool result, or a template filled in).',
    parameters: {
      type: 'object',
      properties: {
        server: { type: 'string', enum: names, description: 'The server that offers the resource' },
        uri: { type: 'string', description: 'The resource URI, exactly as listed' },
      },
      required: ['server', 'uri'],
    },
    risk: 'read',
    effect: 'pure',
    async execute(args, ctx) {
      const { parts } = await readResource(pick(args.server), String(args.uri), ctx.signal);
      return { content: parts };
    },
  };
  return [list, read];
}

/** The listing as text a model reads: one line per resource, grouped by server. */
function formatListing(listing: ResourceListing): string {
  const lines: string[] = [];
  for (const r of listing.resources) {
    lines.push(
      `${r.server}: ${r.uri} — ${r.name}${r.mimeType ? ` (${r.mimeType})` : ''}${r.description ? `: ${oneLine(r.description)}` : ''}`,
    );
  }
  if (listing.templates.length > 0) {
    lines.push('', 'Templates (fill in the {placeholders} to get a URI for read_resource):');
    for (const t of listing.templates)
      lines.push(`${t.server}: ${t.uriTemplate} — ${t.name}${t.description ? `: ${oneLine(t.description)}` : ''}`);
  }
  for (const e of listing.errors) lines.push(`(could not list ${e})`);
  return lines.length > 0 ? lines.join('\n') : 'No resources are offered.';
}

function info<T extends { uri: string } | { uriTemplate: string }>(
  server: string,
  r: { name: string; description?: string | undefined; mimeType?: string | undefined },
  id: T,
): T & { server: string; name: string; description?: string; mimeType?: string } {
  const out = { server, ...id, name: r.name } as T & { server: string; name: string; description?: string; mimeType?: string };
  if (r.description !== undefined) out.description = r.description;
  if (r.mimeType !== undefined) out.mimeType = r.mimeType;
  return out;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
}
