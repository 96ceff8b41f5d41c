/**
 * The loopback redirect listener of the authorization code flow (RFC 8252 §7.3): an HTTP
 * server on 127.0.0.1 with an ephemeral port that receives `/callback?code=…&state=…`,
 * whoever's browser follows the authorization URL. One per host, started on first need,
 * closed with the host; each pending login waits for its own `state`.
 */
import { createServer, type Server } from 'node:http';

const PAGE = (title: string, text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body>`;

/** A code the listener received, or the authorization server's error. */
type Outcome = { code: string } | { error: string };

/** See the module comment. */
export class LoopbackListener {
  private server: Server | undefined;
  private starting: Promise<string> | undefined;
  private readonly waiting = new Map<string, (outcome: Outcome) => void>();
  private address = '';

  /** Starts listening (once) and resolves with the redirect URL. */
  start(): Promise<string> {
    this.starting ??= new Promise((resolve, reject) => {
      const server = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const state = url.searchParams.get('state') ?? '';
        const settle = this.waiting.get(state);
        if (url.pathname !== '/callback' || !settle) {
          res
            .writeHead(400, { 'content-type': 'text/html' })
            .end(PAGE('Unknown login', 'This is not a login rein is waiting for. Start it again with rein mcp login.'));
          return;
        }
        this.waiting.delete(state);
        const code = url.searchParams.get('code');
        const error = url.searchParams.get('error');
        if (code) {
          res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE('Logged in', 'rein has the authorization. You can close this tab.'));
          settle({ code });
        } else {
          const description = url.searchParams.get('error_description');
          res
            .writeHead(400, { 'content-type': 'text/html' })
            .end(PAGE('Login failed', `The authorization server answered ${error ?? 'no code'}.`));
          settle({ error: `${error ?? 'no code'}${description ? `: ${description}` : ''}` });
        }
      });
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        const port = typeof address === 'object' && address ? address.port : 0;
        this.address = `http://127.0.0.1:${port}/callback`;
        // A listener waiting for a login must not keep a finished program alive.
        server.unref();
        this.server = server;
        resolve(this.address);
      });
    });
    return this.starting;
  }

  /** The redirect URL once started. */
  get url(): string | undefined {
    return this.address === '' ? undefined : this.address;
  }

  /** Resolves with the code that comes back with `state`; rejects on an error answer or when `signal` aborts. */
  waitFor(state: string, signal: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.waiting.delete(state);
        reject(signal.reason instanceof Error ? signal.reason : new Error('the login was abandoned'));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(state, (outcome) => {
        signal.removeEventListener('abort', onAbort);
        if ('code' in outcome) resolve(outcome.code);
        else reject(new Error(`the authorization server refused the login (${outcome.error})`));
      });
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
