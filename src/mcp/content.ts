/**
 * MCP content → rein tool content. Text and images pass through; everything a model cannot
 * take as a part (audio, binary resources, links) becomes a text line that says what it
 * was and how to get at it, so nothing vanishes silently.
 */
import { isRecord } from '../util/json.js';
import type { ImageContent, TextContent } from '../model/types.js';
import type { ToolOutput } from '../tools/types.js';

type Part = TextContent | ImageContent;

/** What rein keeps of a call in the result's `details` (for programs; the model does not see it). */
export interface McpCallDetails {
  server: string;
  tool: string;
  /** The tool's `structuredContent`, when it returned one. */
  structuredContent?: unknown;
  /** Parts that could not be shown to the model (audio, binary resources), without their data. */
  omitted?: Array<{ type: string; mimeType?: string; uri?: string; bytes: number }>;
}

/**
 * Maps a `tools/call` result: content parts as {@link contentToParts}, `structuredContent`
 * into `details` (and shown as JSON when the tool sent no text), `isError` kept.
 *
 * @example
 * toToolOutput({ content: [{ type: 'text', text: 'hi' }] }, 'everything', 'echo');
 * // { content: [{ type: 'text', text: 'hi' }], isError: false, details: { server: 'everything', tool: 'echo' } }
 */
export function toToolOutput(result: unknown, server: string, tool: string): Exclude<ToolOutput, string> {
  const r = isRecord(result) ? result : {};
  const details: McpCallDetails = { server, tool };
  const omitted: NonNullable<McpCallDetails['omitted']> = [];
  const parts = contentToParts(Array.isArray(r.content) ? r.content : [], server, omitted);
  if (r.structuredContent !== undefined) {
    details.structuredContent = r.structuredContent;
    if (!parts.some((p) => p.type === 'text')) parts.unshift({ type: 'text', text: JSON.stringify(r.structuredContent, null, 2) });
  }
  if (omitted.length > 0) details.omitted = omitted;
  const isError = r.isError === true;
  if (parts.length === 0) {
    parts.push({
      type: 'text',
      text: isError ? `tool "${tool}" of MCP server "${server}" reported an error without a message` : '(no output)',
    });
  }
  return { content: parts, isError, details };
}

/**
 * Maps MCP content blocks (of a tool result or a prompt) to parts a model can read:
 * - `text` → text; `image` → image;
 * - `audio` → a text note (mime type and size): no provider takes audio in tool results;
 * - `resource` (embedded): text → text headed by its URI; an image blob → image; another
 *   blob → a text note with mime type and size;
 * - `resource_link` → a line naming the URI and how to read it with `read_resource`;
 * - anything else → its JSON, so a newer content type still reaches the model.
 * `omitted` collects what was described instead of shown.
 */
export function contentToParts(blocks: readonly unknown[], server: string, omitted: NonNullable<McpCallDetails['omitted']> = []): Part[] {
  const parts: Part[] = [];
  for (const block of blocks) {
    if (!isRecord(block)) continue;
    switch (block.type) {
      case 'text':
        if (typeof block.text === 'string') parts.push({ type: 'text', text: block.text });
        break;
      case 'image':
        if (typeof block.data === 'string' && typeof block.mimeType === 'string') {
          parts.push({ type: 'image', data: block.data, mimeType: block.mimeType });
        }
        break;
      case 'audio': {
        const mimeType = typeof block.mimeType === 'string' ? block.mimeType : 'audio';
        const bytes = base64Bytes(block.data);
        omitted.push({ type: 'audio', mimeType, bytes });
        parts.push({
          type: 'text',
          text: `[audio ${mimeType}, ${formatBytes(bytes)}: not shown, models here take no audio in tool results]`,
        });
        break;
      }
      case 'resource':
        if (isRecord(block.resource)) parts.push(...resourceToParts(block.resource, server, omitted));
        break;
      case 'resource_link':
        parts.push({ type: 'text', text: describeLink(block, server) });
        break;
      default:
        parts.push({ type: 'text', text: JSON.stringify(block) });
    }
  }
  return parts;
}

/**
 * Maps one resource's contents (`resources/read`, an embedded resource): text with a
 * header naming the URI, image blobs as images, other blobs as a note.
 */
export function resourceToParts(
  resource: Record<string, unknown>,
  server: string,
  omitted: NonNullable<McpCallDetails['omitted']> = [],
): Part[] {
  const uri = typeof resource.uri === 'string' ? resource.uri : '(no uri)';
  const mimeType = typeof resource.mimeType === 'string' ? resource.mimeType : undefined;
  const label = `[resource ${uri}${mimeType ? ` (${mimeType})` : ''} from ${server}]`;
  if (typeof resource.text === 'string') return [{ type: 'text', text: `${label}\n${resource.text}` }];
  if (typeof resource.blob === 'string') {
    if (mimeType?.startsWith('image/'))
      return [
        { type: 'text', text: label },
        { type: 'image', data: resource.blob, mimeType },
      ];
    const bytes = base64Bytes(resource.blob);
    omitted.push({ type: 'resource', ...(mimeType ? { mimeType } : {}), uri, bytes });
    return [{ type: 'text', text: `${label} binary, ${formatBytes(bytes)}: not shown` }];
  }
  return [{ type: 'text', text: `${label} (empty)` }];
}

function describeLink(link: Record<string, unknown>, server: string): string {
  const uri = typeof link.uri === 'string' ? link.uri : '(no uri)';
  const name = typeof link.name === 'string' ? link.name : uri;
  const extras = [typeof link.mimeType === 'string' ? link.mimeType : '', typeof link.description === 'string' ? link.description : '']
    .filter(Boolean)
    .join('; ');
  const how = `read it with read_resource {"server":${JSON.stringify(server)},"uri":${JSON.stringify(uri)}}`;
  return `[resource link] ${name}: ${uri}${extras ? ` (${extras})` : ''}; ${how}`;
}

/** The decoded size of base64 data, without decoding it. */
export function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const clean = data.replace(/\s/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
