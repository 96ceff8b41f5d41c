/**
 * `rein serve` as a library call: the app on a Node HTTP server, the runs a crash or a
 * stop left running continued, and a stop that leaves them to be continued next time.
 */
import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunStore } from '../store/types.js';
import { createApp } from './app.js';
import { TokenGuard } from './auth.js';
import { StreamRegistry, type StreamSettings } from './event-stream.js';
import { RunFeeds, gatedStore } from './feed.js';
import { RunService } from './runs.js';
import * as S from './schemas.js';
import type { AgentCatalog, QueueMode } from './types.js';
import { prepareValidators } from './validate.js';
import { loadViewerAssets } from './viewer-assets.js';

/** Options of {@link startServer}. */
export interface ServerOptions {
  store: RunStore;
  agents: AgentCatalog;
  token: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** rein's version, for the OpenAPI document. */
  version?: string;
  /** Where problems are told (default: nowhere). */
  warn?: (line: string) => void;
  /** Largest request body (bytes, default 1 MiB). */
  maxBodyBytes?: number;
  streams?: Partial<StreamSettings>;
  /** Queue runs for the workers instead of running them here (`rein serve --no-execute`). */
  queueMode?: QueueMode;
}

/** A running server. */
export interface RunningServer {
  /** `http://host:port`. */
  url: string;
  port: number;
  /**
   * Continues every run this server's store shows running that a server started (one
   * killed or stopped before): resolves with their ids once each has begun.
   */
  recover(): Promise<string[]>;
  /** How many event streams are open now. */
  openStreams(): number;
  /**
   * Stops: no new connections or work, every event stream ended cleanly, every run
   * stopped without being ended in its log (the next start continues it). Resolves with
   * how many runs were stopped. The store is not closed.
   */
  stop(): Promise<number>;
}

/** Starts the server (listening once this resolves); {@link RunningServer.recover} continues what it left running. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const warn = options.warn ?? (() => undefined);
  await prepareValidators([
    S.CreateRunSchema,
    S.MessageSchema,
    S.ApprovalSchema,
    S.ElicitationAnswerSchema,
    S.ResumeSchema,
    S.AbortSchema,
    S.SessionSchema,
    S.ListRunsQuerySchema,
    S.EventsQuerySchema,
  ]);
  const assets = await loadViewerAssets();
  const feeds = new RunFeeds();
  const writer = gatedStore(options.store, feeds);
  const runs = new RunService(writer, options.store, options.agents, feeds, warn, options.queueMode);
  const streams = new StreamRegistry({ maxBufferBytes: 1024 * 1024, keepAliveMs: 15_000, pollMs: 1000, ...options.streams });
  let stopping = false;
  const app = createApp({
    guard: new TokenGuard(options.token),
    runs,
    feeds,
    streams,
    agents: options.agents,
    assets,
    version: options.version ?? 'unknown',
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    stopping: () => stopping,
  });
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  // A slow or idle client must not hold a socket open forever, but a stream may last hours.
  server.requestTimeout = 60_000;
  server.headersTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    recover: () => runs.recover(),
    openStreams: () => streams.size,
    stop: async () => {
      stopping = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      streams.endAll('the server is stopping: reconnect with Last-Event-ID once it is back');
      const stopped = await runs.stop();
      // Idle keep-alive connections would hold close() open; streams were just ended.
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), 5000);
      await closed;
      clearTimeout(timer);
      return stopped;
    },
  };
}
