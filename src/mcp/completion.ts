/**
 * `completion/complete`: suggestions for a prompt's or a resource template's argument, and
 * completing a `/server:prompt args` line as a chat types it (server names, prompt names,
 * then argument values from the server).
 */
import type { ServerConnection } from './connection.js';
import { listPrompts, parsePromptCommand, splitArgs } from './prompts.js';

/** What is completed: a prompt (by name) or a resource template (by its URI template). */
export type CompletionRef = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

/** The server's suggestions. */
export interface Completions {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

/**
 * Asks a server for completions of one argument; `context` holds the arguments already
 * given. A server that declares no `completions` capability gives none.
 */
export async function completeArgument(
  connection: ServerConnection,
  ref: CompletionRef,
  argument: { name: string; value: string },
  context?: Record<string, string>,
  signal?: AbortSignal,
): Promise<Completions> {
  if (connection.state === 'connected' && connection.serverCapabilities.completions === undefined) return { values: [] };
  const params = { ref, argument, ...(context && Object.keys(context).length > 0 ? { context: { arguments: context } } : {}) };
  const result = await connection.request(
    `completion/complete ${argument.name}`,
    connection.timeoutMs,
    { mutating: false, ...(signal ? { signal } : {}) },
    (client) => client.complete(params, { timeout: connection.timeoutMs, ...(signal ? { signal } : {}) }),
  );
  const completions: Completions = { values: result.completion.values };
  if (result.completion.total !== undefined) completions.total = result.completion.total;
  if (result.completion.hasMore !== undefined) completions.hasMore = result.completion.hasMore;
  return completions;
}

/** Completed versions of a `/server:prompt args` line; empty when nothing fits. */
export async function completeCommandLine(line: string, connections: readonly ServerConnection[], signal?: AbortSignal): Promise<string[]> {
  if (!line.startsWith('/')) return [];
  const colon = line.indexOf(':');
  if (colon < 0) {
    const typed = line.slice(1);
    return connections.filter((c) => c.hasPrompts && c.name.startsWith(typed)).map((c) => `/${c.name}:`);
  }
  const connection = connections.find((c) => c.name === line.slice(1, colon));
  if (!connection || connection.state !== 'connected' || !connection.hasPrompts) return [];
  const prompts = await listPrompts([connection]);
  const command = parsePromptCommand(line);
  if (!command || !/\s/.test(line.slice(colon))) {
    const typed = line.slice(colon + 1);
    return prompts.filter((p) => p.name.startsWith(typed)).map((p) => `/${connection.name}:${p.name} `);
  }
  const prompt = prompts.find((p) => p.name === command.prompt);
  if (!prompt || prompt.arguments.length === 0) return [];
  // The argument being typed is the last token (empty after a space); the ones before it are context.
  const tokens = splitArgs(command.rest);
  const last = /\s$/.test(line) || tokens.length === 0 ? '' : (tokens.pop() as string);
  const given: Record<string, string> = {};
  let positional = 0;
  for (const token of tokens) {
    const eq = /^([A-Za-z_][\w.-]*)=([\s\S]*)$/.exec(token);
    if (eq && prompt.arguments.some((a) => a.name === eq[1])) given[eq[1] as string] = eq[2] as string;
    else positional++;
  }
  const named = /^([A-Za-z_][\w.-]*)=([\s\S]*)$/.exec(last);
  const open = prompt.arguments.filter((a) => !(a.name in given));
  const target = named ? prompt.arguments.find((a) => a.name === named[1]) : open[positional];
  if (!target) return [];
  const value = named ? (named[2] as string) : last;
  const { values } = await completeArgument(
    connection,
    { type: 'ref/prompt', name: prompt.name },
    { name: target.name, value },
    given,
    signal,
  );
  const head = line.slice(0, line.length - last.length);
  return values.map((v) => `${head}${named ? `${target.name}=` : ''}${/\s/.test(v) ? `"${v}"` : v}`);
}
