/**
 * Prompts across servers, and `/server:prompt args` as a chat types it: parsed, matched
 * to the prompt's declared arguments, fetched with `prompts/get`, and turned into content
 * a chat can send.
 */
import { ReinError } from '../errors.js';
import type { ImageContent, TextContent } from '../model/types.js';
import type { ServerConnection } from './connection.js';
import { contentToParts } from './content.js';
import { allPages } from './pages.js';
import type { McpPromptInfo } from './types.js';

/** A prompt fetched from its server, ready to send. */
export interface ExpandedPrompt {
  server: string;
  prompt: string;
  description?: string;
  /** The prompt's messages with their roles, for a caller that keeps them apart. */
  messages: Array<{ role: 'user' | 'assistant'; content: Array<TextContent | ImageContent> }>;
  /** Every message as one user input (assistant turns marked as such): what a chat sends. */
  content: Array<TextContent | ImageContent>;
  /** The arguments it was called with. */
  arguments: Record<string, string>;
}

/** `/server:prompt rest` split up; `undefined` when the text is not of that form. */
export interface PromptCommand {
  server: string;
  prompt: string;
  rest: string;
}

const COMMAND = /^\/([A-Za-z0-9][A-Za-z0-9_.-]*):(\S+)(?:\s+([\s\S]*))?$/;

/** Parses `/server:prompt args`; anything else (`/help`, plain text) is `undefined`. */
export function parsePromptCommand(text: string): PromptCommand | undefined {
  const match = COMMAND.exec(text.trim());
  if (!match) return undefined;
  return { server: match[1] as string, prompt: match[2] as string, rest: (match[3] ?? '').trim() };
}

/** Lists the prompts of the given connections (every page); servers that fail are skipped, reported through `onError`. */
export async function listPrompts(
  connections: readonly ServerConnection[],
  onError?: (server: string, error: unknown) => void,
): Promise<McpPromptInfo[]> {
  const lists = await Promise.all(
    connections.map((c) =>
      promptsOf(c).catch((error: unknown) => {
        onError?.(c.name, error);
        return [];
      }),
    ),
  );
  return lists.flat();
}

/** Every prompt of one server; throws what the request threw. */
async function promptsOf(c: ServerConnection): Promise<McpPromptInfo[]> {
  const listed = await allPages('prompts/list', async (cursor) => {
    const result = await c.request('prompts/list', c.timeoutMs, { mutating: false }, (client) =>
      client.listPrompts(cursor === undefined ? undefined : { cursor }, { timeout: c.timeoutMs }),
    );
    return { items: result.prompts, nextCursor: result.nextCursor };
  });
  const prompts: McpPromptInfo[] = [];
  for (const p of listed) {
    const info: McpPromptInfo = {
      server: c.name,
      name: p.name,
      arguments: (p.arguments ?? []).map((a) => ({
        name: a.name,
        required: a.required === true,
        ...(a.description ? { description: a.description } : {}),
      })),
    };
    if (p.description) info.description = p.description;
    prompts.push(info);
  }
  return prompts;
}

/**
 * Fetches `/server:prompt rest` from its server. Arguments are `name=value` pairs or, in
 * declared order, plain values (quote values with spaces: `city="New York"`); a prompt with
 * a single argument takes the whole rest as its value. Throws `not_found` for an unknown
 * prompt and `invalid_arguments` for missing or unknown arguments, with the usage line.
 */
export async function expandPrompt(connection: ServerConnection, command: PromptCommand, signal?: AbortSignal): Promise<ExpandedPrompt> {
  const prompts = await promptsOf(connection);
  const prompt = prompts.find((p) => p.name === command.prompt);
  if (!prompt) {
    const known = prompts.map((p) => `/${connection.name}:${p.name}`).join(', ') || 'none';
    throw new ReinError(
      'not_found',
      'correctable',
      `MCP server "${connection.name}" has no prompt "${command.prompt}"; its prompts: ${known}`,
    );
  }
  const args = bindArguments(prompt, command.rest);
  const result = await connection.request(
    `prompts/get "${prompt.name}"`,
    connection.timeoutMs,
    { mutating: false, ...(signal ? { signal } : {}) },
    (client) => client.getPrompt({ name: prompt.name, arguments: args }, { timeout: connection.timeoutMs, ...(signal ? { signal } : {}) }),
  );
  const messages = result.messages.map((m) => ({ role: m.role, content: contentToParts([m.content], connection.name) }));
  const content: Array<TextContent | ImageContent> = [];
  for (const m of messages) {
    if (m.role === 'assistant') content.push({ type: 'text', text: 'Assistant:' });
    content.push(...m.content);
  }
  const expanded: ExpandedPrompt = { server: connection.name, prompt: prompt.name, messages, content, arguments: args };
  const description = result.description ?? prompt.description;
  if (description) expanded.description = description;
  return expanded;
}

/** The usage line of a prompt: `/server:name city=<city> [state=<state>]`. */
export function promptUsage(prompt: McpPromptInfo): string {
  const args = prompt.arguments.map((a) => (a.required ? `${a.name}=<${a.name}>` : `[${a.name}=<${a.name}>]`));
  return [`/${prompt.server}:${prompt.name}`, ...args].join(' ');
}

function bindArguments(prompt: McpPromptInfo, rest: string): Record<string, string> {
  const declared = prompt.arguments;
  const usage = (): string => `usage: ${promptUsage(prompt)}`;
  const fail = (problem: string): never => {
    throw new ReinError('invalid_arguments', 'correctable', `/${prompt.server}:${prompt.name}: ${problem}; ${usage()}`);
  };
  const args: Record<string, string> = {};
  const only = declared.length === 1 ? declared[0] : undefined;
  if (only && rest !== '' && !rest.startsWith(`${only.name}=`)) {
    args[only.name] = unquote(rest);
  } else {
    const positional: string[] = [];
    for (const token of splitArgs(rest)) {
      const eq = /^([A-Za-z_][\w.-]*)=([\s\S]*)$/.exec(token);
      if (eq && declared.some((a) => a.name === eq[1])) args[eq[1] as string] = eq[2] as string;
      else if (eq && declared.length > 0) fail(`unknown argument "${eq[1]}"`);
      else positional.push(token);
    }
    const open = declared.filter((a) => !(a.name in args));
    if (positional.length > open.length)
      fail(`too many values (${positional.length} for ${open.length} open arguments); quote values with spaces`);
    positional.forEach((value, i) => (args[(open[i] as { name: string }).name] = value));
  }
  const missing = declared.filter((a) => a.required && !(a.name in args)).map((a) => a.name);
  if (missing.length > 0) fail(`missing ${missing.join(', ')}`);
  return args;
}

/** Splits on whitespace, keeping "double" or 'single' quoted runs together (quotes removed). */
export function splitArgs(text: string): string[] {
  const tokens: string[] = [];
  const pattern = /(?:[^\s"']+|"[^"]*"|'[^']*')+/g;
  for (const match of text.matchAll(pattern))
    tokens.push(match[0].replace(/"([^"]*)"|'([^']*)'/g, (_m, a: string | undefined, b: string | undefined) => a ?? b ?? ''));
  return tokens;
}

function unquote(text: string): string {
  const match = /^"([\s\S]*)"$|^'([\s\S]*)'$/.exec(text);
  return match ? (match[1] ?? match[2] ?? '') : text;
}
