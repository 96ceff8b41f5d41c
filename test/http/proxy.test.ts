/**
 * Proxies from the environment: which requests go through one (`proxyFor`, `NO_PROXY`),
 * an http request asked of the proxy in absolute form, and an https request in a CONNECT
 * tunnel with TLS verified end to end, on real local servers.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { httpPost } from '../../src/http/client.js';
import { closeIdleConnections } from '../../src/http/pool.js';
import { bypassed, proxyFor } from '../../src/http/proxy.js';
import { setEnv as setEnvFor } from '../env.js';

const MODEL_TEST_CERT = new URL('./tls/model-test-cert.pem', import.meta.url);
const MODEL_TEST_KEY = new URL('./tls/model-test-key.pem', import.meta.url);

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  closeIdleConnections();
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** Sets environment variables for one test. */
function setEnv(values: Record<string, string>): void {
  cleanups.push(setEnvFor(values));
}

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** A proxy that answers every CONNECT by tunnelling to the local server on `serverPort`, whatever host it names. */
async function tunnellingProxy(
  serverPort: number,
  seen: Array<{ target: string | undefined; auth: string | undefined }> = [],
): Promise<number> {
  const proxy = createServer();
  proxy.on('connect', (req: IncomingMessage, socket: net.Socket, head: Buffer) => {
    seen.push({ target: req.url, auth: req.headers['proxy-authorization'] });
    const upstream = net.connect(serverPort, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  return listen(proxy);
}

/** Runs an ES module script in a child process with `env` (NODE_EXTRA_CA_CERTS is read only at startup), reaped after the test. */
async function runChild(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill();
      await once(child, 'close');
    }
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

const HTTP_MODULE = new URL('../../dist/http/client.js', import.meta.url).href;

describe('proxyFor', () => {
  const PROXY = { host: 'proxy.corp', port: 3128, authorization: undefined, key: 'http://proxy.corp:3128' };

  it('takes HTTPS_PROXY for https, HTTP_PROXY for http, ALL_PROXY for both, lower case first', () => {
    expect(proxyFor('https:', 'api.openai.com', 443, { HTTPS_PROXY: 'http://proxy.corp:3128' })).toEqual(PROXY);
    expect(proxyFor('http:', 'api.openai.com', 80, { HTTPS_PROXY: 'http://proxy.corp:3128' })).toBeUndefined();
    expect(proxyFor('http:', 'gpu.lan', 8000, { HTTP_PROXY: 'proxy.corp:3128' })).toEqual(PROXY);
    expect(proxyFor('https:', 'x.example', 443, { ALL_PROXY: 'http://proxy.corp:3128' })).toEqual(PROXY);
    expect(proxyFor('https:', 'x.example', 443, { https_proxy: 'http://proxy.corp:3128', HTTPS_PROXY: 'http://other:1' })).toEqual(PROXY);
    expect(proxyFor('https:', 'x.example', 443, {})).toBeUndefined();
  });

  it('sends credentials as Basic Proxy-Authorization, never in the key', () => {
    const proxy = proxyFor('https:', 'x.example', 443, { HTTPS_PROXY: 'http://me:p%40ss@proxy.corp:3128' });
    expect(proxy?.authorization).toBe(`Basic ${Buffer.from('me:p@ss').toString('base64')}`);
    expect(proxy?.key).toBe('http://proxy.corp:3128');
  });

  it('never proxies loopback hosts, and follows NO_PROXY', () => {
    const env = { HTTPS_PROXY: 'http://proxy.corp:3128', HTTP_PROXY: 'http://proxy.corp:3128', NO_PROXY: 'internal.corp, .lan,gpu:8000' };
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '::1', 'app.localhost'])
      expect(proxyFor('http:', host, 80, env), host).toBeUndefined();
    expect(proxyFor('https:', 'internal.corp', 443, env)).toBeUndefined();
    expect(proxyFor('https:', 'api.internal.corp', 443, env)).toBeUndefined();
    expect(proxyFor('http:', 'box.lan', 80, env)).toBeUndefined();
    expect(proxyFor('http:', 'gpu', 8000, env)).toBeUndefined();
    expect(proxyFor('http:', 'gpu', 9000, env)).toEqual(PROXY);
    expect(proxyFor('https:', 'notinternal.corp', 443, env)).toEqual(PROXY);
    expect(proxyFor('https:', 'api.openai.com', 443, { ...env, no_proxy: '*' })).toBeUndefined();
  });

  it('bypassed() reads entries with ports, wildcards, IPv6 and CIDR ranges; an IP matches only exactly', () => {
    expect(bypassed('a.example.com', 443, '*.example.com')).toBe(true);
    expect(bypassed('example.com', 443, '.example.com')).toBe(true);
    expect(bypassed('10.0.0.5', 80, '10.0.0.5')).toBe(true);
    expect(bypassed('10.0.0.6', 80, '10.0.0.5')).toBe(false);
    expect(bypassed('10.0.0.1', 80, '0.0.1')).toBe(false);
    expect(bypassed('fd00::1', 80, '[fd00::1]')).toBe(true);
    expect(bypassed('host', 80, 'host:8080')).toBe(false);
    expect(bypassed('10.20.30.40', 8000, '192.168.0.0/16,10.0.0.0/8')).toBe(true);
    expect(bypassed('11.0.0.1', 8000, '10.0.0.0/8')).toBe(false);
    expect(bypassed('fd00::9', 443, 'fd00::/8')).toBe(true);
    expect(bypassed('gpu.lan', 443, '10.0.0.0/8')).toBe(false);
  });

  it('ALL_PROXY naming a proxy rein cannot use (SOCKS) is passed over: requests go direct', () => {
    expect(proxyFor('https:', 'api.openai.com', 443, { ALL_PROXY: 'socks5://127.0.0.1:1080' })).toBeUndefined();
    expect(() => proxyFor('https:', 'api.openai.com', 443, { HTTPS_PROXY: 'socks5://127.0.0.1:1080' })).toThrow(/http:\/\/ proxies/);
  });

  it('an unusable proxy URL is a configuration error naming the variable, never repeating a password', () => {
    expect(() => proxyFor('https:', 'x.example', 443, { HTTPS_PROXY: 'http://me:hunter2@' })).toThrow(/^HTTPS_PROXY is not a URL/);
    expect(() => proxyFor('https:', 'x.example', 443, { HTTPS_PROXY: 'http://me:hunter2@' })).not.toThrow(/hunter2/);
    expect(() => proxyFor('https:', 'x.example', 443, { HTTPS_PROXY: 'http://me:bad%zz@proxy.corp:3128' })).toThrow(
      expect.objectContaining({ code: 'ERR_PROXY_CONFIG', message: expect.stringContaining('%-encoded') }),
    );
    expect(() => proxyFor('https:', 'x.example', 443, { HTTPS_PROXY: 'https://proxy.corp:443' })).toThrow(
      expect.objectContaining({ code: 'ERR_PROXY_CONFIG', message: expect.stringContaining('https:// proxy') }),
    );
  });
});

describe('httpPost through a proxy', () => {
  it('asks an http URL of the proxy in absolute form, with its credentials, over one kept-alive connection', async () => {
    const seen: Array<{ url: string | undefined; host: string | undefined; auth: string | undefined }> = [];
    let connections = 0;
    const proxy = createServer((req: IncomingMessage, res) => {
      seen.push({ url: req.url, host: req.headers.host, auth: req.headers['proxy-authorization'] });
      req.resume();
      req.on('end', () => res.end('answered by the proxy'));
    });
    proxy.on('connection', () => connections++);
    const port = await listen(proxy);
    setEnv({ HTTP_PROXY: `http://me:secret@127.0.0.1:${port}` });
    for (let i = 0; i < 2; i++) {
      const res = await httpPost(new URL('http://model.test:8000/v1/chat/completions?x=1'), { 'content-type': 'application/json' }, '{}');
      expect(await res.text()).toBe('answered by the proxy');
    }
    const auth = `Basic ${Buffer.from('me:secret').toString('base64')}`;
    expect(seen).toEqual([
      { url: 'http://model.test:8000/v1/chat/completions?x=1', host: 'model.test:8000', auth },
      { url: 'http://model.test:8000/v1/chat/completions?x=1', host: 'model.test:8000', auth },
    ]);
    expect(connections).toBe(1);
  });

  it('reaches a loopback server directly even with a proxy set', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end(`direct ${req.url}`));
    });
    const port = await listen(server);
    setEnv({ HTTP_PROXY: 'http://127.0.0.1:9' });
    const res = await httpPost(new URL(`http://127.0.0.1:${port}/v1/x`), {}, '{}');
    expect(await res.text()).toBe('direct /v1/x');
  });

  it('a proxy that refuses CONNECT with 407 is an error that says it wants credentials', async () => {
    const proxy = createServer();
    proxy.on('connect', (_req: IncomingMessage, socket: net.Socket) => {
      socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corp"\r\n\r\n');
    });
    const port = await listen(proxy);
    setEnv({ HTTPS_PROXY: `http://127.0.0.1:${port}` });
    await expect(httpPost(new URL('https://model.test/v1/chat'), {}, '{}')).rejects.toMatchObject({
      code: 'ERR_PROXY_AUTH',
      message: expect.stringContaining('wants credentials'),
    });
  });

  it('a proxy that refuses CONNECT by policy (403) is an error not retried; a 502 is a network error', async () => {
    let answer = '403 Forbidden';
    const proxy = createServer();
    proxy.on('connect', (_req: IncomingMessage, socket: net.Socket) => socket.end(`HTTP/1.1 ${answer}\r\n\r\n`));
    const port = await listen(proxy);
    setEnv({ HTTPS_PROXY: `http://127.0.0.1:${port}` });
    await expect(httpPost(new URL('https://model.test/v1/chat'), {}, '{}')).rejects.toMatchObject({
      code: 'ERR_PROXY_REFUSED',
      message: expect.stringContaining('403 Forbidden'),
    });
    answer = '502 Bad Gateway';
    await expect(httpPost(new URL('https://model.test:8443/v1/chat'), {}, '{}')).rejects.toMatchObject({ code: 'EPROXY' });
  });

  it('tunnels an https URL with CONNECT, verifies the server end to end, reuses the tunnel, and lets the process exit', async () => {
    const tls = { cert: readFileSync(MODEL_TEST_CERT), key: readFileSync(MODEL_TEST_KEY) };
    let secureConnections = 0;
    const server = createHttpsServer(tls, (req, res) => {
      req.resume();
      req.on('end', () => res.end(`over TLS to ${req.headers.host}`));
    });
    server.on('secureConnection', () => secureConnections++);
    const serverPort = await listen(server);
    const connects: Array<{ target: string | undefined; auth: string | undefined }> = [];
    const proxyPort = await tunnellingProxy(serverPort, connects);
    const script = `
      const { httpPost } = await import(${JSON.stringify(HTTP_MODULE)});
      const out = [];
      for (let i = 0; i < 2; i++) {
        const res = await httpPost(new URL('https://model.test:${serverPort}/v1/chat'), { 'content-type': 'application/json' }, '{}');
        out.push(res.status + ' ' + (await res.text()));
      }
      process.stdout.write(JSON.stringify(out));
    `;
    const started = Date.now();
    const { code, stdout, stderr } = await runChild(script, {
      NODE_EXTRA_CA_CERTS: fileURLToPath(MODEL_TEST_CERT),
      HTTPS_PROXY: `http://user:pw@127.0.0.1:${proxyPort}`,
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([`200 over TLS to model.test:${serverPort}`, `200 over TLS to model.test:${serverPort}`]);
    expect(connects).toEqual([{ target: `model.test:${serverPort}`, auth: `Basic ${Buffer.from('user:pw').toString('base64')}` }]);
    expect(secureConnections).toBe(1);
    // An idle tunnel never holds the process: it ended at once, not when idle connections close (15 s).
    expect(Date.now() - started).toBeLessThan(12_000);
  });

  it('through a tunnel, the certificate of an IP-address URL is checked against that address', async () => {
    // The local certificate is for localhost and 127.0.0.1: through the proxy, a URL naming
    // another address must not be accepted with it.
    const server = createHttpsServer(
      { cert: readFileSync(new URL('./tls/cert.pem', import.meta.url)), key: readFileSync(new URL('./tls/key.pem', import.meta.url)) },
      (req, res) => {
        req.resume();
        req.on('end', () => res.end('should not be reached'));
      },
    );
    const serverPort = await listen(server);
    const proxyPort = await tunnellingProxy(serverPort);
    const script = `
      const { httpPost } = await import(${JSON.stringify(HTTP_MODULE)});
      const codes = [];
      for (const url of ['https://10.9.9.9:${serverPort}/v1', 'https://[fd00::9]:${serverPort}/v1']) {
        try { await httpPost(new URL(url), {}, '{}'); codes.push('accepted'); } catch (error) { codes.push(error.code); }
      }
      process.stdout.write(JSON.stringify(codes));
    `;
    const { code, stdout } = await runChild(script, {
      NODE_EXTRA_CA_CERTS: fileURLToPath(new URL('./tls/cert.pem', import.meta.url)),
      HTTPS_PROXY: `http://127.0.0.1:${proxyPort}`,
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(['ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_TLS_CERT_ALTNAME_INVALID']);
  });
});
