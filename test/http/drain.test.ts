/**
 * A server that sends the whole answer, `data: [DONE]` included, and then never ends the
 * body: the answer is complete, so `rein run` must end at once, not when the idle timeout
 * (minutes) closes the connection. Through the real binary (needs `npm run build`), since
 * what is checked is that nothing keeps the process alive.
 */
import net, { type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, removeProject, type TempProject } from '../cli/project.js';
import { rein } from '../cli/spawn.js';

let dirs: TempProject;
let server: net.Server | undefined;
const sockets = new Set<net.Socket>();

beforeEach(async () => {
  dirs = await makeProject('rein-http-drain-');
});

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  await removeProject(dirs);
});

const ANSWER =
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello from a server that never ends."},"finish_reason":null}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: [DONE]\n\n';

/** A server answering every request with `response`, then holding the connection open for ever. */
async function holdingServer(response: string): Promise<string> {
  server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    let buffered = '';
    socket.on('data', (data: Buffer) => {
      buffered += data.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      const length = Number(/^content-length:\s*(\d+)/im.exec(buffered)?.[1] ?? 0);
      if (end >= 0 && buffered.length >= end + 4 + length) {
        buffered = '';
        socket.write(response);
      }
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

async function runAgainst(baseUrl: string) {
  const env = { PATH: process.env.PATH, HOME: dirs.home, NO_COLOR: '1', OPENAI_API_KEY: 'x' };
  // The default idle timeout is minutes: ending within this limit means nothing waited for it.
  return rein(['run', '--no-store', '--no-mcp', '--no-skills', '--model', 'openai/test-model', '--base-url', baseUrl, 'say hi'], {
    cwd: dirs.project,
    env,
    timeoutMs: 20_000,
  });
}

describe('rein run against a server that never ends the body after [DONE]', () => {
  it('a chunked body without its last chunk: the run ends as soon as the answer is complete', async () => {
    const baseUrl = await holdingServer(
      `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${Buffer.byteLength(ANSWER).toString(16)}\r\n${ANSWER}\r\n`,
    );
    const run = await runAgainst(baseUrl);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Hello from a server that never ends.');
  });

  it('a body delimited by the end of the connection, which the server keeps open', async () => {
    const baseUrl = await holdingServer(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n${ANSWER}`);
    const run = await runAgainst(baseUrl);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Hello from a server that never ends.');
  });
});
