/**
 * Keep-alive connections for rein's HTTP client, per origin, for the whole process. A run
 * asks the same server again every turn: reusing its TCP (and TLS) connection is most of
 * the latency rein can save. A connection carries one request at a time.
 */
import { createRequire } from 'node:module';
import net from 'node:net';
import { ConnectTunnel, type Proxy as ProxyRoute } from './proxy.js';

// node:tls is loaded on the first https connection: importing rein (and a run against a
// local http server) does not pay for it.
const require = createRequire(import.meta.url);
let tlsModule: typeof import('node:tls') | undefined;
const tls = (): typeof import('node:tls') => (tlsModule ??= require('node:tls') as typeof import('node:tls'));

/** Where connections go. `key` names the origin (protocol, host, port, and the proxy if any). */
export interface Origin {
  readonly key: string;
  readonly secure: boolean;
  /** The host to connect to (an IPv6 address without brackets). */
  readonly host: string;
  readonly port: number;
  /** The proxy the connection goes through (see `http-proxy.ts`). */
  readonly proxy?: ProxyRoute | undefined;
}

/** The request a connection carries receives its socket's events. */
export interface ConnectionUser {
  onData(data: Buffer): void;
  /** The server closed its side (or the socket closed) without an error. */
  onEof(): void;
  onError(error: Error): void;
}

/** Connections left unused this long are closed: a server often drops them sooner. */
const IDLE_CONNECTION_MS = 15_000;
/** At most this many idle connections are kept per origin (as Node's `maxFreeSockets`). */
const MAX_IDLE_PER_ORIGIN = 256;

/** One socket and the request it carries (none while idle). */
export class Connection {
  user: ConnectionUser | undefined;
  /** How many requests it carried before the current one (a reused connection may be stale). */
  uses = 0;
  idleSince = 0;
  private closed = false;

  constructor(
    readonly socket: net.Socket,
    readonly origin: Origin,
    /** The TCP socket under `socket` (another one only for TLS in a proxy tunnel): what keeps the process alive. */
    private readonly handle: net.Socket = socket,
  ) {
    // Listeners are set once per connection, never per request.
    socket.on('data', (data: Buffer) => {
      if (this.user) this.user.onData(data);
      else this.destroy(); // bytes nobody asked for: the connection cannot be trusted
    });
    socket.on('end', () => this.lost(undefined));
    socket.on('close', () => this.lost(undefined));
    socket.on('error', (error: Error) => this.lost(error));
  }

  /** The socket is gone or going: no new request may use it. */
  get usable(): boolean {
    return !this.closed && !this.socket.destroyed;
  }

  /** Whether the connection keeps the process alive (while it carries a request). */
  hold(held: boolean): void {
    if (held) this.handle.ref();
    else this.handle.unref();
  }

  destroy(): void {
    this.closed = true;
    forget(this);
    this.user = undefined;
    this.socket.destroy();
  }

  /** The socket ended, closed or failed: the request it carries (if any) is told once. */
  private lost(error: Error | undefined): void {
    const user = this.user;
    this.closed = true;
    this.user = undefined;
    forget(this);
    if (user) {
      if (error) user.onError(error);
      else user.onEof();
    }
    if (!error && !this.socket.destroyed) this.socket.destroy();
  }
}

const idle = new Map<string, Connection[]>();
const tlsSessions = new Map<string, Buffer>();
let sweeper: NodeJS.Timeout | undefined;

/**
 * A connection to `origin` for `user`: the most recently used idle one, or a new one. A
 * connection with `uses > 0` may turn out to be closed by the server; the caller can then
 * ask again, with the stale connection already dropped.
 */
export function acquire(origin: Origin, user: ConnectionUser): Connection {
  const list = idle.get(origin.key);
  if (list !== undefined) {
    const now = Date.now();
    for (let conn = list.pop(); conn !== undefined; conn = list.pop()) {
      if (conn.usable && now - conn.idleSince < IDLE_CONNECTION_MS) {
        conn.user = user;
        conn.hold(true);
        return conn;
      }
      conn.destroy();
    }
  }
  const { socket, handle } = connect(origin);
  const conn = new Connection(socket, origin, handle);
  conn.user = user;
  return conn;
}

/** Puts a connection whose response is complete back for the next request. */
export function release(conn: Connection): void {
  conn.user = undefined;
  if (!conn.usable) return;
  let list = idle.get(conn.origin.key);
  if (list === undefined) {
    list = [];
    idle.set(conn.origin.key, list);
  }
  if (list.length >= MAX_IDLE_PER_ORIGIN) {
    conn.destroy();
    return;
  }
  conn.uses++;
  conn.idleSince = Date.now();
  // An idle connection never keeps the process alive.
  conn.hold(false);
  list.push(conn);
  if (sweeper === undefined) {
    sweeper = setInterval(sweep, IDLE_CONNECTION_MS);
    sweeper.unref();
  }
}

/** Closes every idle connection (tests, and programs that want a clean exit). */
export function closeIdleConnections(): void {
  for (const list of idle.values()) for (const conn of [...list]) conn.destroy();
  idle.clear();
}

/** How many idle connections are kept, per origin key (for tests and diagnostics). */
export function idleConnectionCount(): number {
  let n = 0;
  for (const list of idle.values()) n += list.length;
  return n;
}

function forget(conn: Connection): void {
  const list = idle.get(conn.origin.key);
  if (list === undefined) return;
  const at = list.indexOf(conn);
  if (at >= 0) list.splice(at, 1);
  if (list.length === 0) idle.delete(conn.origin.key);
}

function sweep(): void {
  const now = Date.now();
  for (const list of [...idle.values()]) {
    for (const conn of [...list]) if (now - conn.idleSince >= IDLE_CONNECTION_MS) conn.destroy();
  }
  if (idle.size === 0 && sweeper !== undefined) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** A new connection's socket, and the TCP socket under it. */
function connect(origin: Origin): { socket: net.Socket; handle: net.Socket } {
  const { proxy } = origin;
  // Through a proxy, the TCP connection goes to the proxy: an http request is asked of it
  // directly (in absolute form), an https one through a CONNECT tunnel.
  const tcp = (): net.Socket =>
    proxy ? net.connect({ host: proxy.host, port: proxy.port }) : net.connect({ host: origin.host, port: origin.port });
  let socket: net.Socket;
  let handle: net.Socket;
  if (origin.secure) {
    const session = tlsSessions.get(origin.key);
    const common = {
      // SNI names a host, never an IP address.
      ...(net.isIP(origin.host) === 0 ? { servername: origin.host } : {}),
      ALPNProtocols: ['http/1.1'],
      ...(session ? { session } : {}),
    };
    if (proxy) {
      handle = tcp();
      const target = net.isIPv6(origin.host) ? `[${origin.host}]:${origin.port}` : `${origin.host}:${origin.port}`;
      // `host` only names what the certificate must be for (an IP address has no SNI).
      socket = tls().connect({ ...common, host: origin.host, socket: new ConnectTunnel(handle, proxy, target) });
    } else {
      socket = tls().connect({ ...common, host: origin.host, port: origin.port });
      handle = socket;
    }
    // A later connection to the same server resumes this TLS session (a shorter handshake).
    socket.on('session', (data: Buffer) => tlsSessions.set(origin.key, data));
  } else {
    socket = tcp();
    handle = socket;
  }
  handle.setNoDelay(true);
  handle.setKeepAlive(true, 1000);
  return { socket, handle };
}
