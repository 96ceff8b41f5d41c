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
