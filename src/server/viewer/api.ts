/**
 * The viewer's calls to the API. It signs in with a session cookie (HttpOnly: this code
 * never sees the token), which the browser sends on every same-origin request, fetches and
 * EventSource alike; URLs are relative, so the viewer works under a reverse proxy's prefix.
 */

/** An API error, as the server answers it. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Calls the API; a 401 (the session expired) reloads the page, which then asks for the token. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(path, {
    method: init.method ?? 'GET',
    credentials: 'same-origin',
    headers: init.body === undefined ? {} : { 'Content-Type': 'application/json' },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  if (response.status === 401) {
    location.reload();
    throw new ApiFailure(401, 'unauthorized', 'signed out');
  }
  if (response.status === 204) return undefined as T;
  const body = (await response.json().catch(() => ({}))) as { error?: { code: string; message: string } };
  if (!response.ok) throw new ApiFailure(response.status, body.error?.code ?? 'error', body.error?.message ?? response.statusText);
  return body as T;
}

/** A run as the list shows it. */
export interface RunSummary {
  id: string;
  status: string;
  reason?: string;
  agent: string | null;
  task: string | null;
  model: string;
  steps: number;
  tokens: number;
  cost: number | null;
  durationMs: number;
  createdAt: number;
  updatedAt: number;
  live: boolean;
  /** A sub-agent's run: the run whose tool call started it. */
  parentRunId?: string;
}

/** A sub-agent run of a run: its line and the parent's call it answers. */
export interface ChildRun extends RunSummary {
  parentToolCallId: string | null;
  depth: number;
}

export interface PendingApproval {
  toolCallId: string;
  name: string;
  arguments: Record<string, unknown>;
  argumentsHash: string;
  rule?: string;
  /** A sub-agent's call, decided on the root: the child run that waits. */
  runId?: string;
}

export interface RunDetail {
  record: RunSummary;
  totals: { steps: number; toolCalls: number; usage: { total: number; cost?: { total: number } }; durationMs: number };
  cost: number | null;
  result: { status: string; reason: string; text: string; error?: { message: string } } | null;
  pendingApprovals: PendingApproval[];
  children: ChildRun[];
  recoveryError?: string;
}
