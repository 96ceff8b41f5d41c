/**
 * Base URLs with a query, a fragment, and a user and password, through each adapter on
 * the wire: where the request goes, and that no error text quotes the credentials.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { streamAnthropic } from '../../src/model/providers/anthropic.js';
import { streamGemini } from '../../src/model/providers/gemini.js';
import { streamOpenAIChat } from '../../src/model/providers/openai-chat.js';
import { streamOpenAIResponses } from '../../src/model/providers/openai-responses.js';
import type { ModelRef, StreamFunction } from '../../src/model/types.js';
import { startServer } from './fixture-server.js';
import type { TestServer } from './fixture-server.js';
import { collect, lastError, testModel } from './stream-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Adapter {
  name: string;
  stream: StreamFunction;
  model: (baseUrl: string) => ModelRef;
  /** The path the adapter puts after a base path of `/gw`. */
  path: string;
  /** The parameters the adapter adds after the base query. */
  added: string;
}

const ADAPTERS: Adapter[] = [
  { name: 'openai-chat', stream: streamOpenAIChat, model: (baseUrl) => testModel(baseUrl), path: '/gw/chat/completions', added: '' },
  {
    name: 'openai-responses',
    stream: streamOpenAIResponses,
    model: (baseUrl) => testModel(baseUrl, { provider: 'openai-responses', api: 'openai-responses', id: 'gpt-5' }),
    path: '/gw/responses',
    added: '',
  },
  {
    name: 'anthropic',
    stream: streamAnthropic,
    model: (baseUrl) =>
      testModel(baseUrl, { provider: 'anthropic', api: 'anthropic-messages', id: 'claude-sonnet-4-5', apiKey: 'sk-ant-test' }),
    path: '/gw/v1/messages',
    added: '',
  },
  {
    name: 'gemini',
    stream: streamGemini,
    model: (baseUrl) => testModel(baseUrl, { provider: 'gemini', api: 'gemini', id: 'gemini-2.5-flash', apiKey: 'test-key' }),
    path: '/gw/v1beta/models/gemini-2.5-flash:streamGenerateContent',
    added: '&alt=sse',
  },
];

const NOT_FOUND = { status: 404, headers: { 'content-type': 'text/plain' }, body: 'Not Found' };

describe.each(ADAPTERS)('$name with a base URL carrying a query, a fragment and credentials', (adapter) => {
  it('posts to the base path + the API path, with the base query after it and without the fragment', async () => {
    server = await startServer([NOT_FOUND]);
    const origin = new URL(server.baseUrl).origin;
    await collect(
      adapter.stream(adapter.model(`${origin}/gw/?api-version=2024-10-21#frag`), { messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(server.requests[0]?.url).toBe(`${adapter.path}?api-version=2024-10-21${adapter.added}`);
  });

  it('error text names the URL as sent, without the user, password or secret parameters', async () => {
    server = await startServer([NOT_FOUND]);
    const { host } = new URL(server.baseUrl);
    const base = `http://alice:s3cret@${host}/gw?api-version=2024-10-21&api-key=k-123`;
    const { events } = await collect(adapter.stream(adapter.model(base), { messages: [{ role: 'user', content: 'hi' }] }));
    const error = lastError(events);
    expect(error.code).toBe('not_found');
    expect(error.message).toContain(`http://${host}${adapter.path}?api-version=2024-10-21${adapter.added}`);
    const text = JSON.stringify(events);
    for (const secret of ['alice', 's3cret', 'k-123']) expect(text).not.toContain(secret);
  });

  it('a base URL that does not parse is quoted without what may be its password', async () => {
    const { events } = await collect(
      adapter.stream(adapter.model('http://alice:pa/ss@127.0.0.1:1/v1'), { messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(events[events.length - 1]?.type).toBe('error');
    const text = JSON.stringify(events);
    for (const secret of ['alice', 'pa/ss']) expect(text).not.toContain(secret);
  });
});
