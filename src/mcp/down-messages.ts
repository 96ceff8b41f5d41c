/**
 * What a model (or a person) is told about a server it cannot use right now: why, and
 * what to do instead. Pure text, from the connection's state.
 */
import { ReinError } from '../errors.js';
import { messageOf, type FailureKind } from './failures.js';
import type { ProcessExit } from './process-transport.js';
import type { McpServerState } from './types.js';

/** Why requests cannot go through, e.g. `is reconnecting (attempt 3, last error: …)`. */
export function downReason(state: McpServerState, attempts: number, lastError: string | undefined): string {
  switch (state) {
    case 'disabled':
      return 'is disabled in its configuration ("enabled": false)';
    case 'failed':
      return `failed to start${lastError ? ` (${lastError})` : ''}`;
    case 'connecting':
      return 'is still starting';
    default:
      return `is reconnecting (attempt ${attempts + 1}${lastError ? `, last error: ${lastError}` : ''})`;
  }
}

/**
 * What the model can do: wait for the next attempt or use another tool. `sentence` makes
 * it a sentence of its own rather than the end of one.
 */
export function whatNext(state: McpServerState, retryInMs: number | undefined, sentence: boolean): string {
  if (state !== 'reconnecting') return sentence ? 'Use another tool.' : 'use another tool.';
  const when = retryInMs !== undefined ? `next attempt in ${Math.max(1, Math.ceil(retryInMs / 1000))} s` : 'attempt running';
  return sentence
    ? `rein is reconnecting (${when}); try again shortly or use another tool.`
    : `${when}; try again shortly or use another tool.`;
}

/** How a connection ended: `crashed: its process exited with code 3 (stderr: …)`. */
export function describeEnd(exit: ProcessExit | undefined, stderrTail: string): string {
  const stderr = stderrTail ? ` (stderr: ${stderrTail})` : '';
  if (!exit) return `closed the connection${stderr}`;
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return `crashed: its process ${how}${stderr}`;
}

/** The error of a request that timed out, was cancelled, or that the server refused. */
export function requestError(kind: FailureKind, server: string, label: string, timeoutMs: number, cause: unknown): ReinError {
  const who = `MCP server "${server}"`;
  switch (kind) {
    case 'timeout':
      return new ReinError(
        'timeout',
        'correctable',
        `${who} did not answer ${label} within ${timeoutMs} ms; the request was cancelled on the server. Try again later or with less work per call.`,
        { cause },
      );
    case 'aborted':
      return new ReinError('aborted', 'fatal', `${label} on ${who} was cancelled`, { cause });
    default:
      return new ReinError('mcp_error', 'correctable', `${who} refused ${label}: ${messageOf(cause)}`, { cause });
  }
}
