import { afterEach, describe, expect, it } from 'vitest';
import { adapters, streamModel } from '../../src/model/providers/index.js';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import type { ModelApi } from '../../src/model/types.js';
import { fixtureResponse, startServer } from './fixture-server.js';
import type { TestServer } from './fixture-server.js';
import { collect, testModel, textOf } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('streamModel', () => {
  it('registers the adapters explicitly by API', () => {
    expect(adapters['openai-chat']).toBe(streamOpenAIChat);
  });

  it('loads an adapter other than Chat Completions on its first request, then calls it directly', async () => {
    server = await startServer([fixtureResponse('anthropic/stream-text.sse'), fixtureResponse('anthropic/stream-text.sse')]);
    const model = testModel(server.baseUrl, { api: 'anthropic-messages', provider: 'anthropic' });
    const first = await collect(streamModel(model, { messages: [{ role: 'user', content: 'hi' }] }));
    expect(first.message.stopReason).toBe('stop');
    expect(first.events.map((e) => e.type)).toContain('text_delta');
    expect(adapters['anthropic-messages']).toBeTypeOf('function');
    const second = await collect(streamModel(model, { messages: [{ role: 'user', content: 'hi' }] }));
    expect(second.message).toEqual(first.message);
  });

  it('dispatches on model.api', async () => {
    server = await startServer([fixtureResponse('openai-chat/stream-text-usage.sse')]);
    const { message } = await collect(streamModel(testModel(server.baseUrl), { messages: [] }));
    expect(textOf(message)).toBe('4200 + 42 equals 4242.');
  });

  it('an unknown API ends in a config error event instead of throwing', async () => {
    const model = testModel('http://127.0.0.1:1/v1', { api: 'nope' as ModelApi });
    const { events, message } = await collect(streamModel(model, { messages: [] }));
    expect(events.map((e) => e.type)).toEqual(['error']);
    expect(message.error?.code).toBe('config');
  });
});
