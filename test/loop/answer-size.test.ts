// An answer without end: a server streaming 64 KiB text deltas for ever. The stream is cut
// at the answer size limit and the run stops as answer_too_long, its text so far kept in
// the result and the log (which folds to that result).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { expectLogFoldsTo } from './log-folds.js';

const LIMIT = 2 * 1024 * 1024;
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** Chat Completions deltas of 64 KiB each, written as fast as the client reads, never finished. */
async function endlessAnswer(): Promise<string> {
  const delta = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'a'.repeat(65_536) } }] })}\n\n`;
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const pump = (): void => {
      while (!res.destroyed && res.write(delta));
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

describe('an answer past the size limit', () => {
  it('stops the run as answer_too_long (status stopped) with the text so far, not retried', async () => {
    const baseUrl = await endlessAnswer();
    const store = new MemoryRunStore();
    // A smaller limit than the default 32 MiB keeps the test quick on a busy machine; the path is the same.
    const agent = new Agent({
      model: { provider: 'openai', id: 'm', api: 'openai-chat', baseUrl, apiKey: 'k' },
      store,
      modelOptions: { maxAnswerChars: LIMIT },
    });
    const result = await agent.run('write for ever');
    expect(result).toMatchObject({ status: 'stopped', reason: 'answer_too_long', error: { code: 'answer_too_long' } });
    expect(result.text.length).toBeGreaterThan(LIMIT / 2);
    expect(result.text.length).toBeLessThanOrEqual(LIMIT);
    expect(result.error?.message).toContain('longer than 2,097,152 characters');
    expect(/^a+$/.test(result.text)).toBe(true);
    const events = await store.loadEvents(result.runId);
    expect(events.filter((e) => e.type === 'model_request')).toHaveLength(1);
    expectLogFoldsTo(events, result);
  });
});
