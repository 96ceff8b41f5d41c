import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a server that goes silent', () => {
  it('before answering: a transient timeout error, so the retry layer tries again', async () => {
    server = await startScriptedServer({ script: [{ text: 'late', delayMs: 5_000 }] });
    const stream = streamOpenAIChat(server.model(), { messages: [{ role: 'user', content: 'hi' }] }, { idleTimeoutMs: 200 });
    const message = await stream.result();
    expect(message.stopReason).toBe('error');
    expect(message.error).toMatchObject({ code: 'timeout', kind: 'transient' });
    expect(message.error?.message).toMatch(/no data from the server for 200 ms/);
  });

  it('mid-stream: a transient error naming the silence; a slow but live stream is not cut', async () => {
    server = await startScriptedServer({
      script: [
        { text: 'a stream that stops talking', fault: { type: 'slow', tokenDelayMs: 5_000 } },
        // 16 chunks 30 ms apart: longer in total than the idle timeout, never silent that long.
        { text: 'slow but steady '.repeat(4), fault: { type: 'slow', tokenDelayMs: 30 } },
      ],
      chunkSize: 4,
    });
    const stalled = await streamOpenAIChat(
      server.model(),
      { messages: [{ role: 'user', content: 'hi' }] },
      { idleTimeoutMs: 300 },
    ).result();
    expect(stalled.stopReason).toBe('error');
    expect(stalled.error?.kind).toBe('transient');
    expect(stalled.error?.message).toMatch(/no data from the server for 300 ms/);
    const steady = await streamOpenAIChat(
      server.model(),
      { messages: [{ role: 'user', content: 'again' }] },
      { idleTimeoutMs: 300 },
    ).result();
    expect(steady.stopReason).toBe('stop');
    expect(steady.content).toEqual([{ type: 'text', text: 'slow but steady '.repeat(4) }]);
  });
});

/** A server that answers 200 `text/event-stream` and then sends only `keepAlive` every 20 ms, for ever. */
async function keepAliveServer(keepAlive: string): Promise<{ url: string; close: () => Promise<void> }> {
  const timers = new Set<NodeJS.Timeout>();
  const http: Server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(keepAlive);
    const timer = setInterval(() => res.write(keepAlive), 20);
    timers.add(timer);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`,
    close: async () => {
      for (const t of timers) clearInterval(t);
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

describe('a server that sends only keep-alives', () => {
  for (const [what, keepAlive] of [
    ['SSE comments', ': keep-alive\n\n'],
    ['pings', 'event: ping\ndata: {"type": "ping"}\n\n'],
  ] as const) {
    it(`${what} do not reset the idle watchdog: a transient timeout`, async () => {
      const fake = await keepAliveServer(keepAlive);
      try {
        const model = { id: 'm', provider: 'openai', api: 'openai-chat' as const, baseUrl: fake.url, apiKey: 'k' };
        const message = await streamOpenAIChat(model, { messages: [{ role: 'user', content: 'hi' }] }, { idleTimeoutMs: 300 }).result();
        expect(message.stopReason).toBe('error');
        expect(message.error).toMatchObject({ code: 'timeout', kind: 'transient' });
        expect(message.error?.message).toContain('no data from the server for 300 ms (keep-alive comments and pings are not data)');
      } finally {
        await fake.close();
      }
    });
  }
});
