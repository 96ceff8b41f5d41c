/**
 * Progress of running calls, routed by rein itself: each call that wants progress gets a
 * token of rein's, and `notifications/progress` for it goes to that call's callback. The
 * SDK's own routing drops progress that arrives in the same breath as the result (it
 * handles notifications a tick after responses and forgets the callback with the response);
 * here the callback lives until the caller has seen the result.
 */

/** A progress report of a running call. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

let tokens = 0;

/** See the module comment. */
export class ProgressRouter {
  private readonly handlers = new Map<string, (progress: Progress) => void>();

  /** A fresh token routed to `report` until `release()` is called. */
  open(report: (progress: Progress) => void): { token: string; release: () => void } {
    const token = `rein-${++tokens}`;
    this.handlers.set(token, report);
    return { token, release: () => this.handlers.delete(token) };
  }

  /** Hands a `notifications/progress` to its call; unknown tokens are ignored. */
  deliver(params: { progressToken: string | number; progress: number; total?: number | undefined; message?: string | undefined }): void {
    const report = this.handlers.get(String(params.progressToken));
    report?.({
      progress: params.progress,
      ...(params.total !== undefined ? { total: params.total } : {}),
      ...(params.message !== undefined ? { message: params.message } : {}),
    });
  }
}
