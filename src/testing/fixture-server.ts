/**
 * A recorded run played back over HTTP: a server on 127.0.0.1 that answers each model
 * request, in order, with the response the recording holds for it (`rein run --record`,
 * `recordTo`), over the same wire, and reports the first request that differs from the
 * recording. `rein scripted-server --fixture <file>` starts one.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { FixturePlayer, loadFixture, type Fixture, type FixtureDivergence, type FixtureRedactor } from '../model/fixture.js';
import type { ModelApi, ModelRef } from '../model/types.js';
import { readBody } from './http-io.js';

/** What {@link startFixtureServer} takes. */
export interface FixtureServerOptions {
  /** The recording, or the path of its file. */
  fixture: Fixture | string;
  port?: number;
  host?: string;
  /** Applied to each request before it is compared (the recording's bodies were redacted the same way). */
  redact?: FixtureRedactor;
  /** Told of the first request that differs from the recording, once. */
  onDivergence?: (divergence: FixtureDivergence) => void;
}

/** A running playback. */
export interface FixtureServer {
  /** Base URL with `/v1` (Chat Completions', Responses'). */
  url: string;
  /** Scheme, host and port (Anthropic's and Gemini's base URL). */
  origin: string;
  port: number;
  /** The first request that differed, once one did. */
  readonly divergence: FixtureDivergence | undefined;
  /** Requests answered so far. */
  readonly served: number;
  /** Exchanges of the recording not asked for yet. */
  readonly left: number;
  /** A model pointing at this server (the recording's model id is in its requests). */
  model(id: string, api?: ModelApi): ModelRef;
  close(): Promise<void>;
}

/**
 * Starts a playback of a recording.
 *
 * @example
 * const server = await startFixtureServer({ fixture: 'test/fixtures/refund.fixture.jsonl' });
 * const result = await new Agent({ model: server.model('gpt-4o'), tools }).run('Refund order 42');
 * expect(server.divergence).toBeUndefined();
 * await server.close();
 */
export async function startFixtureServer(options: FixtureServerOptions): Promise<FixtureServer> {
  const fixture = typeof options.fixture === 'string' ? loadFixture(options.fixture) : options.fixture;
  const player = new FixturePlayer(fixture, {
    ...(options.redact === undefined ? {} : { redact: options.redact }),
    ...(options.onDivergence === undefined ? {} : { onDivergence: options.onDivergence }),
  });
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST') {
      send(
        res,
        405,
        { 'content-type': 'application/json' },
        JSON.stringify({ error: { message: 'a fixture answers model requests (POST) only' } }),
      );
      return;
    }
    void readBody(req).then(
      (body) => {
        const answer = player.answer(req.url ?? '/', body);
        send(res, answer.status, answer.headers, answer.body);
      },
      () => res.destroy(),
    );
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: `${origin}/v1`,
    origin,
    port,
    get divergence() {
      return player.divergence;
    },
    get served() {
      return player.served;
    },
    get left() {
      return player.left;
    },
    model(id, api = 'openai-chat') {
      return { provider: 'fixture', id, api, baseUrl: api === 'openai-chat' || api === 'openai-responses' ? `${origin}/v1` : origin };
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
    },
  };
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
