/**
 * Turning a line typed at `rein run` / `rein chat` into the user input: `/server:prompt
 * args` runs an MCP prompt (chat), `@server:uri` attaches an MCP resource. Anything that
 * cannot be attached is said on stderr and the text still goes through. What an MCP server
 * names or describes is shown safely (terminalLine: control characters visible).
 */
import type { UserMessage } from '../model/types.js';
import type { McpHost } from '../mcp/host.js';
import type { CliIO } from './io.js';
import { terminalLine } from './terminal-text.js';

/** The input for `text`; `prompts` allows `/server:prompt` (chat only). */
export async function userInput(
  text: string,
  mcp: McpHost | undefined,
  io: CliIO,
  options: { prompts?: boolean; signal?: AbortSignal } = {},
): Promise<string | UserMessage> {
  if (!mcp) return text;
  if (options.prompts && text.startsWith('/')) {
    const prompt = await mcp.expandPromptCommand(text, options.signal);
    if (prompt) {
      io.stderr.write(
        `↳ MCP prompt ${terminalLine(`${prompt.server}:${prompt.prompt}${prompt.description ? ` — ${prompt.description}` : ''}`)}\n`,
      );
      return { role: 'user', content: prompt.content };
    }
  }
  if (!text.includes('@')) return text;
  const expanded = await mcp.expandMentions(text, options.signal);
  for (const problem of expanded.problems) io.stderr.write(`rein: ${terminalLine(problem)}\n`);
  for (const attached of expanded.attached) io.stderr.write(`↳ attached ${terminalLine(`${attached.server}:${attached.uri}`)}\n`);
  return expanded.attached.length > 0 ? { role: 'user', content: expanded.content } : text;
}
