/**
 * `@server:uri` in what a user types: each mention of a configured server attaches that
 * resource to the message (`@docs:file:///guide.md`, `@everything:demo://resource/…`).
 * Text that only looks similar (an e-mail address, an unknown server) is left alone.
 */
import type { ImageContent, TextContent } from '../model/types.js';
import type { ServerConnection } from './connection.js';
import { messageOf } from './failures.js';
import { readResource } from './resources.js';

/** A mention found in text. */
export interface ResourceMention {
  server: string;
  uri: string;
}

/** The text with its mentioned resources attached. */
export interface ExpandedMentions {
  /** The text as typed. */
  text: string;
  /** The text, then each attached resource: what to send as the user message. */
  content: Array<TextContent | ImageContent>;
  /** The mentions that were read and attached, in order, without repeats. */
  attached: ResourceMention[];
  /** Mentions that could not be attached, each saying why (show them to the user). */
  problems: string[];
}

// `@` at the start or after whitespace or an opening bracket, so `me@example.com:25` is no mention.
const MENTION = /(^|[\s([{])@([A-Za-z0-9][A-Za-z0-9_.-]*):(\S+)/g;
const TRAILING = /[.,;:!?'")\]}>]+$/;

/** Finds the mentions of servers that `isServer` knows, in order, without repeats. */
export function findMentions(text: string, isServer: (name: string) => boolean): ResourceMention[] {
  const found: ResourceMention[] = [];
  const seen = new Set<string>();
  for (const match of text.matchAll(MENTION)) {
    const server = match[2] as string;
    const uri = (match[3] as string).replace(TRAILING, '');
    if (!isServer(server) || uri === '') continue;
    const key = `${server}\u0000${uri}`;
    if (seen.has(key)) continue;
    seen.add(key);
    found.push({ server, uri });
  }
  return found;
}

/**
 * Reads every mentioned resource (in parallel) and returns the message content: the text
 * first, then one block per resource. A mention that cannot be read stays in the text as
 * typed and is named in `problems`.
 */
export async function expandMentions(
  text: string,
  servers: ReadonlyMap<string, ServerConnection>,
  signal?: AbortSignal,
): Promise<ExpandedMentions> {
  const mentions = findMentions(text, (name) => servers.has(name));
  const expanded: ExpandedMentions = { text, content: [{ type: 'text', text }], attached: [], problems: [] };
  const reads = await Promise.allSettled(
    mentions.map((m) => {
      const connection = servers.get(m.server) as ServerConnection;
      if (connection.state === 'connected' && !connection.hasResources) {
        return Promise.reject(new Error(`MCP server "${m.server}" offers no resources`));
      }
      return readResource(connection, m.uri, signal);
    }),
  );
  reads.forEach((read, i) => {
    const mention = mentions[i] as ResourceMention;
    if (read.status === 'fulfilled') {
      expanded.attached.push(mention);
      expanded.content.push(...read.value.parts);
    } else {
      expanded.problems.push(`@${mention.server}:${mention.uri} was not attached: ${messageOf(read.reason)}`);
    }
  });
  return expanded;
}
