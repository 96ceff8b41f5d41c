import { afterEach, describe, expect, it } from 'vitest';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import { startScriptedServer, type ScriptedServer } from '../../src/model/scripted/index.js';

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
    const stalled = await streamOpenAIChat(server.model(), { messages: [{ role: 'user', content: 'hi' }] }, { idleTimeoutMs: 300 }).result();
    expect(stalled.stopReason).toBe('error');
    expect(stalled.error?.kind).toBe('transient');
    expect(stalled.error?.message).toMatch(/no data from the server for 300 ms/);
    const steady = await streamOpenAIChat(server.model(), { messages: [{ role: 'user', content: 'again' }] }, { idleTimeoutMs: 300 }).result();
    expect(steady.stopReason).toBe('stop');
    expect(steady.content).toEqual([{ type: 'text', text: 'slow but steady '.repeat(4) }]);
  });
});
