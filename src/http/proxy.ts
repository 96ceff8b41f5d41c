/**
 * Proxies from the environment, as curl and most HTTP clients read them: `HTTPS_PROXY` for
 * https URLs, `HTTP_PROXY` for http ones (`ALL_PROXY` for both when those are unset; each
 * also in lower case, which wins), and `NO_PROXY` for the hosts to reach directly. Loopback
 * hosts (`localhost`, 127.0.0.0/8, `::1`) are always reached directly, as Go's clients do:
 * a local model server must not go through a company proxy.
 *
 * An http URL is asked of the proxy in absolute form (`POST http://host/path`); an https
 * URL goes through a CONNECT tunnel, with TLS end to end inside it. Only http:// proxies
 * are supported; credentials in the proxy URL are sent as Basic `Proxy-Authorization`.
 */
import net from 'node:net';
import { Duplex } from 'node:stream';

/** A proxy to reach an origin through. */
export interface Proxy {
  readonly host: string;
  readonly port: number;
  /** The `Proxy-Authorization` header value, when the proxy URL has credentials. */
  readonly authorization: string | undefined;
  /** Names the proxy in connection-pool keys and messages (`http://host:port`, no credentials). */
  readonly key: string;
}

type Env = Record<string, string | undefined>;

/**
 * The proxy for a request to `host:port` over `protocol` (`http:` or `https:`), or
 * undefined to connect directly. Throws a `config` error naming the variable when its
 * proxy URL is unusable.
 *
 * @example
 * proxyFor('https:', 'api.openai.com', 443, { HTTPS_PROXY: 'http://proxy.corp:3128' });
 * // { host: 'proxy.corp', port: 3128, authorization: undefined, key: 'http://proxy.corp:3128' }
 */
export function proxyFor(protocol: string, host: string, port: number, env: Env = process.env): Proxy | undefined {
  const secure = protocol === 'https:';
  const chosen = secure ? pick(env, 'https_proxy', 'HTTPS_PROXY') : pick(env, 'http_proxy', 'HTTP_PROXY');
  const [name, value] = chosen ?? pick(env, 'all_proxy', 'ALL_PROXY') ?? [];
  if (name === undefined || value === undefined) return undefined;
  if (isLoopback(host) || bypassed(host, port, pick(env, 'no_proxy', 'NO_PROXY')?.[1] ?? '')) return undefined;
  // ALL_PROXY often names a SOCKS proxy for other programs: one rein cannot use is passed
  // over (requests go direct) rather than failing every request.
  if (chosen === undefined && !/^(?:http:\/\/|[^:/]+(?::\d+)?$)/i.test(value)) return undefined;
  return parseProxy(name, value);
}

/** The first of `names` set to a non-empty value in `env`, with its name. */
function pick(env: Env, ...names: string[]): [string, string] | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return [name, value];
  }
  return undefined;
}

const parsed = new Map<string, Proxy>();

function parseProxy(name: string, value: string): Proxy {
  const cached = parsed.get(value);
  if (cached) return cached;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    // The value may hold a password: it is not repeated.
    throw proxyError(`${name} is not a URL: set it like http://proxy.example.com:3128 (or http://user:password@proxy.example.com:3128)`);
  }
  if (url.protocol !== 'http:') {
    throw proxyError(
      `${name} is a ${url.protocol}// proxy; rein supports http:// proxies (https requests still go through them in a CONNECT tunnel)`,
    );
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === '' ? 80 : Number(url.port);
  let authorization: string | undefined;
  if (url.username !== '' || url.password !== '') {
    try {
      authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    } catch {
      throw proxyError(`${name} has a user or password that is not validly %-encoded: encode reserved characters (@ as %40, : as %3A)`);
    }
  }
  const proxy: Proxy = { host, port, authorization, key: `http://${url.host}` };
  parsed.set(value, proxy);
  return proxy;
}

function proxyError(message: string): Error {
  // An ERR_ code: the model layer reports it as a configuration problem, not retried.
  return Object.assign(new Error(message), { code: 'ERR_PROXY_CONFIG' });
}

function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || (net.isIPv4(h) && h.startsWith('127.'));
}

/**
 * Whether `NO_PROXY` names `host` (and `port`): `*` names every host; `example.com` and
 * `.example.com` name the domain and its subdomains; `host:port` names one port only; an
 * IP address matches exactly, and a CIDR range (`10.0.0.0/8`, `fd00::/8`) every address in it.
 */
export function bypassed(host: string, port: number, noProxy: string): boolean {
  const h = host.toLowerCase();
  const ipVersion = net.isIP(h);
  for (const raw of noProxy.split(/[\s,]+/)) {
    let entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    const cidr = /^\[?([0-9a-f:.]+)\]?\/(\d{1,3})$/.exec(entry);
    if (cidr) {
      if (ipVersion !== 0 && inRange(h, ipVersion, cidr[1] as string, Number(cidr[2]))) return true;
      continue;
    }
    let entryPort: number | undefined;
    const portMatch = /^(.*[^:]):(\d+)$/.exec(entry);
    if (portMatch && !net.isIPv6(entry)) {
      entry = portMatch[1] as string;
      entryPort = Number(portMatch[2]);
    }
    if (entry.startsWith('[') && entry.endsWith(']')) entry = entry.slice(1, -1);
    if (entryPort !== undefined && entryPort !== port) continue;
    // An IP address is one host: no suffix matching ("0.0.1" must not match 10.0.0.1).
    if (ipVersion !== 0 || net.isIP(entry) !== 0) {
      if (h === entry) return true;
      continue;
    }
    if (entry.startsWith('*.')) entry = entry.slice(1);
    if (entry.startsWith('.') ? h.endsWith(entry) || h === entry.slice(1) : h === entry || h.endsWith(`.${entry}`)) return true;
  }
  return false;
}

function inRange(address: string, version: number, network: string, prefix: number): boolean {
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (net.isIP(network) !== version || prefix > (version === 4 ? 32 : 128)) return false;
  const list = new net.BlockList();
  list.addSubnet(network, prefix, family);
  return list.check(address, family);
}

/**
 * A CONNECT tunnel through `proxy` to `host:port`, as a stream: bytes written before the
 * proxy answered wait for it, then everything passes through. The TLS socket of an https
 * request runs over it. `socket` is the TCP connection to the proxy (for ref/unref).
 */
export class ConnectTunnel extends Duplex {
  private established = false;
  private head: Buffer = Buffer.alloc(0);
  private waiting: Array<{ chunk: Buffer; callback: (error?: Error | null) => void }> = [];

  constructor(
    readonly socket: net.Socket,
    private readonly proxy: Proxy,
    private readonly target: string,
  ) {
    super();
    socket.write(
      `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : ''}\r\n`,
    );
    socket.on('data', (data: Buffer) => this.received(data));
    socket.on('end', () => (this.established ? this.push(null) : this.destroy(this.refused('closed the connection'))));
    socket.on('error', (error: Error) => this.destroy(error));
    socket.on('close', () => {
      if (!this.destroyed && !this.established) this.destroy(this.refused('closed the connection'));
    });
  }

  private received(data: Buffer): void {
    if (this.established) {
      if (!this.push(data)) this.socket.pause();
      return;
    }
    this.head = this.head.length === 0 ? data : Buffer.concat([this.head, data]);
    const end = this.head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (this.head.length > 16 * 1024) this.destroy(this.refused('sent an answer head longer than 16 KiB'));
      return;
    }
    const statusLine = this.head.toString('latin1', 0, this.head.indexOf('\r\n'));
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
    if (status < 200 || status >= 300) {
      this.destroy(this.refused(`answered "${statusLine.slice(0, 120)}"`, status));
      return;
    }
    this.established = true;
    const rest = this.head.subarray(end + 4);
    this.head = Buffer.alloc(0);
    for (const { chunk, callback } of this.waiting) this.socket.write(chunk, callback);
    this.waiting = [];
    if (rest.length > 0) this.push(rest);
  }

  private refused(what: string, status?: number): Error {
    const hint = status === 407 ? ': it wants credentials (put them in the proxy URL, http://user:password@host:port)' : '';
    // A 4xx is the proxy's policy or configuration (not retried); anything else, a 502 from
    // an unreachable server or a dropped connection, may pass (retried as a network error).
    const code = status === 407 ? 'ERR_PROXY_AUTH' : status !== undefined && status >= 400 && status < 500 ? 'ERR_PROXY_REFUSED' : 'EPROXY';
    return Object.assign(new Error(`the proxy ${this.proxy.key} ${what} to CONNECT ${this.target}${hint}`), { code });
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.established) this.socket.write(chunk, callback);
    else this.waiting.push({ chunk, callback });
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    for (const { callback: waiting } of this.waiting) waiting(error ?? new Error('the tunnel closed'));
    this.waiting = [];
    this.socket.destroy();
    callback(error);
  }
}
