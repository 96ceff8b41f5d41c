/**
 * What went wrong with a request to a server, sorted by what the host does next:
 * - `lost`: the connection is gone (process exited, socket refused) → reconnect;
 * - `session`: an HTTP session the server no longer knows → initialize again, retry once;
 * - `timeout`, `aborted`: the request was cancelled on the server;
 * - `protocol`: the server answered with a JSON-RPC error → the model may fix its call.
 */
import type { Sdk } from './sdk.js';

/** The kind of a request failure; see the module comment. */
export type FailureKind = 'lost' | 'session' | 'timeout' | 'aborted' | 'protocol';

// JSON-RPC codes the SDK uses for its own failures (see the SDK's `ErrorCode`).
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;

/**
 * Sorts a request's error. `hadSession` says whether the request carried an HTTP session
 * id; `stillOpen` whether the client still has its transport (the SDK drops it when the
 * connection closes, which tells a real close apart from a server's own -32000 error).
 */
export function classifyFailure(
  error: unknown,
  sdk: Sdk,
  context: { hadSession: boolean; stillOpen: boolean; signal?: AbortSignal },
): FailureKind {
  if (context.signal?.aborted) return 'aborted';
  if (error instanceof sdk.StreamableHTTPError) {
    const status = error.code ?? 0;
    // The spec answers an unknown session with 404; many servers (the reference Express
    // examples among them) answer 400 "No valid session ID".
    if (context.hadSession && (status === 404 || (status === 400 && /session/i.test(error.message)))) return 'session';
    if (status >= 500 || status === -1) return 'lost';
    return 'protocol';
  }
  if (error instanceof sdk.McpError) {
    if (error.code === REQUEST_TIMEOUT) return 'timeout';
    if (error.code === CONNECTION_CLOSED && !context.stillOpen) return 'lost';
    return 'protocol';
  }
  if (error instanceof Error) {
    if (error.name === 'AbortError') return 'aborted';
    if (!context.stillOpen) return 'lost';
    // fetch failed, ECONNREFUSED, ECONNRESET, EPIPE, "Not connected": the link is gone.
    const code = (error as NodeJS.ErrnoException).code ?? (error.cause as NodeJS.ErrnoException | undefined)?.code;
    if (error instanceof TypeError || /^E[A-Z]+$/.test(code ?? '') || /not connected/i.test(error.message)) return 'lost';
  }
  return 'protocol';
}

/** The message of anything thrown, without the SDK's "MCP error -32603:" noise doubled. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error && error.message === 'fetch failed' ? ` (${error.cause.message})` : '';
    // An SDK server's error already reads "MCP error -32602: …" and the SDK client adds its own.
    // OAuth errors of the SDK carry the server's error code (`invalid_client`) apart from the text.
    const oauth = (error as { errorCode?: unknown }).errorCode;
    if (typeof oauth === 'string') return `the authorization server answered ${oauth}${error.message ? `: ${error.message}` : ''}`;
    const message = (error.message || error.name).replace(/^(MCP error -?\d+: )(?:MCP error -?\d+: )+/, '$1');
    return `${message}${cause}`;
  }
  return typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
}
