/**
 * The trace context of the tool call a piece of code runs for, so an MCP client's HTTP
 * request made inside it can carry the call's `traceparent` (when the agent's telemetry
 * allows it: `propagate.mcp`). Kept in rein's own AsyncLocalStorage, so it works with no
 * OpenTelemetry context manager registered, or none installed.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const store = new AsyncLocalStorage<Record<string, string>>();

/** Runs `fn` with `headers` as the trace headers of everything it starts. */
export function withTraceHeaders<T>(headers: Record<string, string>, fn: () => T): T {
  return store.run(headers, fn);
}

/** The trace headers of the tool call the current code runs for; `undefined` outside one. */
export function currentTraceHeaders(): Record<string, string> | undefined {
  return store.getStore();
}
