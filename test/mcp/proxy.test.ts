/**
 * Remote MCP servers behind a proxy from the environment: the real server-everything over
 * Streamable HTTP, addressed by a name only the proxy can reach (`mcp.test`), through a
 * local forwarding proxy set in HTTP_PROXY; and with NO_PROXY naming it, tried directly.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startMcp, type McpHost, type McpHostOptions } from '../../src/mcp/host.js';
import { closeIdleConnections } from '../../src/http/pool.js';
import { EVERYTHING, freePort, startHttpServer, textOf } from './helpers.js';
import { setEnv as setEnvFor } from '../env.js';

// Runs before the helpers' afterEach (hooks run in reverse): the host and the proxy are
// closed here, then the helpers stop the server's process.
let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
  closeIdleConnections();
});

/** Sets environment variables for one test. */
function setEnv(values: Record<string, string>): void {
  cleanups.push(setEnvFor(values));
}

/** What the proxy was asked: the request line's method and target, the Host, and the JSON-RPC methods of a POST. */
interface Asked {
  method: string | undefined;
  url: string | undefined;
  host: string | undefined;
  rpc: string[];
}

/**
 * An http proxy that answers absolute-form requests (`POST http://mcp.test:PORT/mcp`) by
 * forwarding them to the local server on `serverPort`, whatever host they name, streaming
 * the answer back (an event stream stays open as long as both sides do).
 */
async function forwardingProxy(serverPort: number, asked: Asked[]): Promise<number> {
  // No kept-alive connections to the server: nothing outlives the test.
  const agent = new http.Agent({ keepAlive: false });
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      asked.push({ method: req.method, url: req.url, host: req.headers.host, rpc: rpcMethods(body) });
      forward(req, res, body, serverPort, agent);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        agent.destroy();
        proxy.close(() => resolve());
      }),
  );
  return (proxy.address() as AddressInfo).port;
}

/** The JSON-RPC methods in a request body (one message or a batch). */
function rpcMethods(body: Buffer): string[] {
  if (body.length === 0) return [];
  const parsed = JSON.parse(body.toString('utf8')) as { method?: string } | Array<{ method?: string }>;
  return [parsed].flat().flatMap((message) => (message.method ? [message.method] : []));
}

/** Hop-by-hop headers a proxy does not pass on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'upgrade']);

function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, serverPort: number, agent: http.Agent): void {
  if (!req.url?.startsWith('http://')) {
    res.writeHead(400).end('a proxy is asked in absolute form');
    return;
  }
  const target = new URL(req.url);
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
  const upstream = http.request(
    { host: '127.0.0.1', port: serverPort, method: req.method, path: target.pathname + target.search, headers, agent },
    (answer) => {
      const back = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
      res.writeHead(answer.statusCode ?? 502, back);
      // Each piece goes on as it arrives: an event stream must not wait for the end.
      answer.on('data', (chunk: Buffer) => res.write(chunk));
      answer.on('end', () => res.end());
      answer.on('error', () => res.destroy());
    },
  );
  upstream.on('error', () => res.destroy());
  // The client went away (a cancelled event stream): so does the request to the server.
  res.on('close', () => upstream.destroy());
  upstream.end(body);
}

/** Starts a host with the given servers, closed after the test (before the proxy). */
async function host(servers: McpHostOptions['servers']): Promise<McpHost> {
  const mcp = await startMcp({ servers, configFiles: false, reconnect: false });
  cleanups.push(() => mcp.close());
  return mcp;
}

describe('a remote MCP server behind HTTP_PROXY', () => {
  it('is reached through the proxy: initialize, tools/list and tools/call all go to it', async () => {
    const port = await freePort();
    await startHttpServer([EVERYTHING, 'streamableHttp'], /listening on port/, port);
    const asked: Asked[] = [];
    const proxyPort = await forwardingProxy(port, asked);
    setEnv({ HTTP_PROXY: `http://127.0.0.1:${proxyPort}`, NO_PROXY: 'localhost' });

    // `mcp.test` resolves nowhere: only the proxy knows where it is.
    const mcp = await host({ remote: { url: `http://mcp.test:${port}/mcp` } });
    expect(mcp.status()[0]).toMatchObject({ transport: 'http', state: 'connected', serverInfo: { name: 'mcp-servers/everything' } });
    expect(mcp.tools().map((t) => t.name)).toContain('remote__echo');
    const result = await mcp.callTool('remote', 'echo', { message: 'through the proxy' });
    expect(textOf(result.content)).toBe('Echo: through the proxy');

    const rpc = asked.flatMap((a) => a.rpc);
    expect(rpc).toEqual(expect.arrayContaining(['initialize', 'notifications/initialized', 'tools/list', 'tools/call']));
    expect(rpc.indexOf('initialize')).toBe(0);
    // The server's event stream (GET) goes through the proxy too.
    expect(asked.map((a) => a.method)).toContain('GET');
    for (const request of asked) expect(request).toMatchObject({ url: `http://mcp.test:${port}/mcp`, host: `mcp.test:${port}` });

    // Closing ends the session with a DELETE, through the proxy as well.
    await mcp.close();
    expect(asked.map((a) => a.method)).toContain('DELETE');
  });

  it('a legacy HTTP+SSE server is reached through the proxy too (its event stream and its posts)', async () => {
    const port = await freePort();
    await startHttpServer([EVERYTHING, 'sse'], /running on port/, port);
    const asked: Asked[] = [];
    const proxyPort = await forwardingProxy(port, asked);
    setEnv({ HTTP_PROXY: `http://127.0.0.1:${proxyPort}` });

    const mcp = await host({ legacy: { url: `http://mcp.test:${port}/sse`, type: 'sse' } });
    expect(mcp.status()[0]).toMatchObject({ transport: 'sse', state: 'connected' });
    const result = await mcp.callTool('legacy', 'get-sum', { a: 1, b: 2 });
    expect(textOf(result.content)).toContain('3');
    expect(asked[0]).toMatchObject({ method: 'GET', url: `http://mcp.test:${port}/sse` });
    expect(asked.flatMap((a) => a.rpc)).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
  });

  it('with NO_PROXY naming the server, it is tried directly, and fails at once on a name that does not resolve', async () => {
    const port = await freePort();
    const asked: Asked[] = [];
    const proxyPort = await forwardingProxy(port, asked);
    setEnv({ HTTP_PROXY: `http://127.0.0.1:${proxyPort}`, NO_PROXY: 'mcp.test' });

    const started = Date.now();
    const mcp = await host({ remote: { url: `http://mcp.test:${port}/mcp`, startupTimeoutMs: 10_000 } });
    const status = mcp.status()[0];
    expect(status).toMatchObject({ state: 'failed' });
    expect(status?.lastError).toMatch(/getaddrinfo (ENOTFOUND|EAI_AGAIN) mcp\.test/);
    // Failed on the name, not at the start-up timeout.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(asked).toEqual([]);
  });
});
