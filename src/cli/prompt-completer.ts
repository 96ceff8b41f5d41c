/**
 * Tab completion of `rein chat`'s line: `/server:prompt args` lines are completed through
 * the MCP host (server names, prompt names, then argument values from the server's
 * `completion/complete`). Any other line, and a command nothing completes (a server that
 * fails or is slow), stays as typed.
 */
import type { McpHost } from '../mcp/host.js';

/** How long a completion may take before the line is left as typed. */
const COMPLETION_TIMEOUT_MS = 2000;

/** A readline completer (the callback form): the completed lines, each replacing the whole line typed. */
export function promptCompleter(
  mcp: Pick<McpHost, 'completePromptCommand'>,
): (line: string, callback: (error: null, result: [string[], string]) => void) => void {
  return (line, callback) => {
    if (!line.startsWith('/')) {
      callback(null, [[], line]);
      return;
    }
    const signal = AbortSignal.timeout(COMPLETION_TIMEOUT_MS);
    mcp.completePromptCommand(line, signal).then(
      (lines) => callback(null, [lines, line]),
      () => callback(null, [[], line]),
    );
  };
}
