/**
 * The tool calls of rein runs in flight on one server, so that what the server asks while
 * one runs (an elicitation, a sampling request) is bound to that call: its run's stored
 * answers are used, its pause is marked, what it spent is counted in its run. The protocol
 * names no link from a server's request to the tool call it serves over stdio, so a request
 * is bound when exactly one run's call is in flight on the server; with several (parallel
 * calls to one server) it is bound to none.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';

/** A run's tool call waiting on the server. */
export interface RunCall {
  runId: string;
  toolCallId: string;
  /** Ends the call's request at once (its run pauses for an answer instead). */
  abort: AbortController;
}

/** The run calls in flight on one server. */
export class RunCalls {
  private readonly calls = new Set<RunCall>();

  /** Registers a call; returns what removes it. */
  enter(call: RunCall): () => void {
    this.calls.add(call);
    return () => this.calls.delete(call);
  }

  /** The one call a server's request belongs to, or `undefined` when none or several are in flight. */
  bound(): RunCall | undefined {
    if (this.calls.size !== 1) return undefined;
    return this.calls.values().next().value;
  }
}

/**
 * What identifies an elicitation when the server asks it again on a retried call: the
 * server, the mode, the message, the form's schema or the URL (not the server's
 * elicitation id, new on every ask), as 32 hex digits of a SHA-256.
 */
export function elicitationHash(question: {
  server: string;
  mode: string;
  message: string;
  requestedSchema?: unknown;
  url?: string;
}): string {
  const { server, mode, message, requestedSchema, url } = question;
  return createHash('sha256')
    .update(canonicalJson({ server, mode, message, requestedSchema: requestedSchema ?? null, url: url ?? null }))
    .digest('hex')
    .slice(0, 32);
}

/**
 * What identifies a sampling request when the server sends it again on a retried call: the
 * server and the request's params (messages, system prompt, token limit…, not `_meta`), as
 * 32 hex digits of a SHA-256.
 */
export function samplingHash(server: string, params: Record<string, unknown>): string {
  const { _meta, ...rest } = params;
  return createHash('sha256')
    .update(canonicalJson({ server, mode: 'sampling', params: rest }))
    .digest('hex')
    .slice(0, 32);
}
