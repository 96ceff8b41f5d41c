import { request as httpRequest, Agent } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fault,
  startScriptedServer,
  text,
  type ChatRequest,
  type ScriptedServer,
  type ScriptedServerOptions,
  type ScriptRequest,
} from '../../src/testing/index.js';
import { assemble, post, readUntilEnd, streamChat, USER, type Wire } from './helpers.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: ScriptedServerOptions): Promise<ScriptedServer> {
  server = await startScriptedServer(options);
  return server;
}

/** Resolves to 'timeout' if `promise` takes longer than `ms` (a generous bound, not a benchmark). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('scripted server', () => {
  it('answers 500 with a clear message when a list script runs out', async () => {
    const { url } = await start({ script: [text('only one')] });
    await streamChat(url, {});
    const response = await post(url, { model: 'm', messages: USER, stream: true });
    expect(response.status).toBe(500);
    expect(((await response.json()) as Wire).error.message).toBe('scripted model: script exhausted after 1 turns');
  });

  it('gives a function script the neutral view of the request and its index', async () => {
    const seen: Array<[ScriptRequest, number]> = [];
    const { url } = await start({
      script: (req, { index }) => {
        seen.push([req, index]);
        return text(`turn ${index}: ${String(req.messages.at(-1)?.content)}`);
      },
    });
    expect(assemble((await streamChat(url, { messages: [{ role: 'user', content: 'a' }] })).frames).text).toBe('turn 0: a');
    expect(
      assemble(
        (await streamChat(url, { messages: [{ role: 'user', content: 'b' }], tools: [{ type: 'function', function: { name: 't' } }] }))
          .frames,
      ).text,
    ).toBe('turn 1: b');
    expect(seen.map(([, index]) => index)).toEqual([0, 1]);
    expect(seen[1]![0]).toMatchObject({
      api: 'openai-chat',
      model: 'm',
      toolNames: ['t'],
      stream: true,
      messages: [{ role: 'user', content: 'b' }],
    });
    // The body as sent is there too, typed for Chat Completions users.
    expect((seen[1]![0].body as ChatRequest).tools?.[0]?.function.name).toBe('t');
  });

  it('still runs a script function written for ChatRequest (role, content, model)', async () => {
    const chatScript = (request: ChatRequest) => {
      const tools = request.messages.filter((m) => m.role === 'tool').length;
      return text(`${request.model}: ${tools} results, last said ${String(request.messages.at(-1)?.content)}`);
    };
    const { url } = await start({ script: chatScript });
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'x', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
    ];
    expect(assemble((await streamChat(url, { messages })).frames).text).toBe('m: 1 results, last said done');
  });

  it('answers 500 with the message when the script function throws', async () => {
    const { url } = await start({
      script: async () => {
        throw new Error('no answer for that');
      },
    });
    const response = await post(url, { model: 'm', messages: USER });
    expect(response.status).toBe(500);
    expect(((await response.json()) as Wire).error.message).toContain('no answer for that');
  });

  it('records every request body in order', async () => {
    const { url, requests } = await start({ script: [text('1'), text('2')] });
    await post(url, { model: 'a', messages: [{ role: 'user', content: 'first' }] }).then((r) => r.text());
    await post(url, { model: 'b', messages: [{ role: 'user', content: 'second' }], stream: true }).then((r) => r.text());
    expect(requests.map((r) => [r.model, r.messages[0]?.content, r.stream])).toEqual([
      ['a', 'first', undefined],
      ['b', 'second', true],
    ]);
  });

  it('gives concurrent requests distinct turns', async () => {
    const { url } = await start({ script: Array.from({ length: 8 }, (_, i) => text(`t${i}`)) });
    const texts = await Promise.all(Array.from({ length: 8 }, async () => assemble((await streamChat(url, {})).frames).text));
    expect(texts.sort()).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7']);
  });

  it('lists its model, points model() at itself for each API, and 404s unknown URLs', async () => {
    const s = await start({ script: [], model: 'tiny' });
    expect(s.url).toBe(`http://127.0.0.1:${s.port}/v1`);
    expect(s.origin).toBe(`http://127.0.0.1:${s.port}`);
    expect(s.model()).toEqual({ provider: 'scripted', id: 'tiny', api: 'openai-chat', baseUrl: s.url });
    expect(s.model('other').id).toBe('other');
    // The base URLs rein's adapters expect (resolve.ts): /v1 for the OpenAI APIs, the origin for the others.
    expect(s.model('r', 'openai-responses')).toEqual({ provider: 'scripted', id: 'r', api: 'openai-responses', baseUrl: s.url });
    expect(s.model('a', 'anthropic-messages')).toEqual({ provider: 'scripted', id: 'a', api: 'anthropic-messages', baseUrl: s.origin });
    expect(s.model(undefined, 'gemini')).toEqual({ provider: 'scripted', id: 'tiny', api: 'gemini', baseUrl: s.origin });
    const gemini = await fetch(`${s.origin}/v1beta/models/x:countTokens`, { method: 'POST', body: '{}' });
    expect(gemini.status).toBe(404);
    expect(((await gemini.json()) as Wire).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    const models = (await (await fetch(`${s.url}/models`)).json()) as Wire;
    expect(models).toMatchObject({ object: 'list', data: [{ id: 'tiny', object: 'model' }] });
    const missing = await fetch(`${s.url}/completions`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Wire).error.message).toBe('Invalid URL (POST /v1/completions)');
  });

  it('close() resolves promptly with an idle keep-alive connection open', async () => {
    const s = await start({ script: [text('hi')] });
    const agent = new Agent({ keepAlive: true });
    try {
      const socketStillOpen = await new Promise<boolean>((resolve, reject) => {
        const req = httpRequest(
          `${s.url}/chat/completions`,
          { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.headers.connection === 'keep-alive'));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ model: 'm', messages: USER }));
      });
      expect(socketStillOpen).toBe(true);
      expect(await within(s.close(), 5_000)).toBeUndefined();
    } finally {
      agent.destroy();
    }
  });

  it('close() resolves promptly in the middle of a slow stream, which ends early', async () => {
    const s = await start({ script: [fault({ type: 'slow', tokenDelayMs: 60_000 }, { text: 'never finishes' })] });
    const response = await post(s.url, { model: 'm', messages: USER, stream: true });
    const reading = readUntilEnd(response);
    expect(await within(s.close(), 5_000)).toBeUndefined();
    const { text: received, error } = await reading;
    expect(error).toBeDefined();
    expect(received).not.toContain('[DONE]');
  });

  it('close() resolves while a turn delay is pending', async () => {
    const s = await start({ script: [text('late', { delayMs: 60_000 })] });
    const pending = post(s.url, { model: 'm', messages: USER }).then(
      () => 'answered',
      () => 'dropped',
    );
    // Wait until the server has the request, so close() really interrupts the delay.
    while (s.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(await within(s.close(), 5_000)).toBeUndefined();
    expect(await pending).toBe('dropped');
  });
});
