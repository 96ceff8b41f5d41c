import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedServer, text, toolCall, type ScriptedServer, type ScriptRequest } from '../../src/testing/index.js';
import type { ModelApi } from '../../src/model/types.js';
import { assemble, parseSse, type Wire } from './helpers.js';
import { ANTHROPIC_HEADERS, foldAnthropicMessage, foldGemini, foldResponseBody, postTo } from './wire-client.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const args = (a: number, b: number) => ({ a, b });

/** One conversation (system, user, two parallel calls, their results, a user follow-up) in each wire's words. */
const CONVERSATION: Record<ModelApi, { path: string; body: Record<string, unknown>; headers?: Record<string, string> }> = {
  'openai-chat': {
    path: '/v1/chat/completions',
    body: {
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Add 2 and 3, and 4 and 5.' },
        {
          role: 'assistant',
          content: 'Adding.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'add', arguments: JSON.stringify(args(2, 3)) } },
            { id: 'call_b', type: 'function', function: { name: 'add', arguments: JSON.stringify(args(4, 5)) } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '5' },
        { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: '9' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [{ type: 'function', function: { name: 'add', parameters: { type: 'object' } } }],
    },
  },
  'anthropic-messages': {
    path: '/v1/messages',
    headers: ANTHROPIC_HEADERS,
    body: {
      model: 'm',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Add 2 and 3, and 4 and 5.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Adding.' },
            { type: 'tool_use', id: 'call_a', name: 'add', input: args(2, 3) },
            { type: 'tool_use', id: 'call_b', name: 'add', input: args(4, 5) },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_a', content: '5' },
            { type: 'tool_result', tool_use_id: 'call_b', content: [{ type: 'text', text: '9' }] },
            { type: 'text', text: 'Thanks' },
          ],
        },
      ],
      tools: [{ name: 'add', input_schema: { type: 'object' } }],
    },
  },
  'openai-responses': {
    path: '/v1/responses',
    body: {
      model: 'm',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: 'Add 2 and 3, and 4 and 5.' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Adding.' }] },
        { type: 'function_call', call_id: 'call_a', name: 'add', arguments: JSON.stringify(args(2, 3)) },
        { type: 'function_call', call_id: 'call_b', name: 'add', arguments: JSON.stringify(args(4, 5)) },
        { type: 'function_call_output', call_id: 'call_a', output: '5' },
        { type: 'function_call_output', call_id: 'call_b', output: '9' },
        { role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] },
      ],
      tools: [{ type: 'function', name: 'add', parameters: { type: 'object' } }],
    },
  },
  gemini: {
    path: '/v1beta/models/m:generateContent',
    body: {
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Add 2 and 3, and 4 and 5.' }] },
        {
          role: 'model',
          parts: [
            { text: 'Adding.' },
            { functionCall: { id: 'call_a', name: 'add', args: args(2, 3) } },
            { functionCall: { id: 'call_b', name: 'add', args: args(4, 5) } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_a', name: 'add', response: { result: '5' } } },
            { functionResponse: { id: 'call_b', name: 'add', response: { result: '9' } } },
            { text: 'Thanks' },
          ],
        },
      ],
      tools: [{ functionDeclarations: [{ name: 'add', parameters: { type: 'object' } }] }],
    },
  },
};

const NEUTRAL = {
  model: 'm',
  system: 'Be brief.',
  toolNames: ['add'],
  stream: false,
  messages: [
    { role: 'user', content: 'Add 2 and 3, and 4 and 5.' },
    {
      role: 'assistant',
      content: 'Adding.',
      toolCalls: [
        { id: 'call_a', name: 'add', arguments: '{"a":2,"b":3}' },
        { id: 'call_b', name: 'add', arguments: '{"a":4,"b":5}' },
      ],
    },
    { role: 'tool', toolCallId: 'call_a', name: 'add', content: '5', isError: false },
    { role: 'tool', toolCallId: 'call_b', name: 'add', content: '9', isError: false },
    { role: 'user', content: 'Thanks' },
  ],
};

/** The text of a non-streamed answer of any wire. */
function answerText(api: ModelApi, body: Wire): string {
  if (api === 'openai-chat') return String(body.choices[0].message.content);
  if (api === 'anthropic-messages') return foldAnthropicMessage(body).text;
  if (api === 'openai-responses') return foldResponseBody(body).text;
  return foldGemini([body]).text;
}

describe('scripted server: one script, every wire', () => {
  it('a script function sees the same conversation whichever wire it came through', async () => {
    const seen: ScriptRequest[] = [];
    server = await startScriptedServer({
      script: (request) => {
        seen.push(request);
        return text(`${request.api} sees ${request.messages.length} messages`);
      },
    });
    for (const [api, { path, body, headers }] of Object.entries(CONVERSATION) as Array<[ModelApi, (typeof CONVERSATION)[ModelApi]]>) {
      const response = await postTo(server.origin, path, body, headers);
      expect(response.status, `${api}: ${JSON.stringify(server.received.at(-1)?.rejected)}`).toBe(200);
      expect(answerText(api, (await response.json()) as Wire)).toBe(`${api} sees 5 messages`);
    }
    expect(seen.map((r) => r.api)).toEqual(['openai-chat', 'anthropic-messages', 'openai-responses', 'gemini']);
    for (const request of seen) {
      const { api: _api, body, ...view } = request;
      expect(view).toEqual(NEUTRAL);
      expect(body).toBe(server.received[seen.indexOf(request)]!.body);
    }
  });

  it('records every wire in received, and only Chat Completions bodies in requests', async () => {
    server = await startScriptedServer({ script: [text('1'), text('2'), toolCall('x'), text('4')] });
    for (const { path, body, headers } of Object.values(CONVERSATION)) await (await postTo(server.origin, path, body, headers)).text();
    await (await postTo(server.origin, '/v1/messages', { model: 'm', messages: [] }, ANTHROPIC_HEADERS)).text();
    expect(server.received.map((r) => [r.api, r.rejected === undefined])).toEqual([
      ['openai-chat', true],
      ['anthropic-messages', true],
      ['openai-responses', true],
      ['gemini', true],
      ['anthropic-messages', false],
    ]);
    expect(server.received[4]!.rejected).toBe('max_tokens: Field required');
    expect(server.received[4]!.request).toBeUndefined();
    expect(server.requests).toEqual([CONVERSATION['openai-chat'].body]);
  });

  it('shows thinking and error results in the neutral view', async () => {
    server = await startScriptedServer({ script: [text('a'), text('b')] });
    const chat = { ...CONVERSATION['openai-chat'].body };
    chat.messages = (chat.messages as Wire[]).map((m) => (m.role === 'assistant' ? { ...m, reasoning_content: 'Two sums.' } : m));
    await (await postTo(server.url, '/chat/completions', { ...chat, stream: true })).text();
    const gemini = structuredClone(CONVERSATION.gemini.body) as Wire;
    gemini.contents[1].parts.unshift({ text: 'Two sums.', thought: true });
    gemini.contents[2].parts[1] = { functionResponse: { id: 'call_b', name: 'add', response: { error: 'overflow' } } };
    await (await postTo(server.origin, '/v1beta/models/m:streamGenerateContent?alt=sse', gemini)).text();
    const [first, second] = server.received.map((r) => r.request!);
    expect(first!.messages[1]).toMatchObject({ role: 'assistant', thinking: 'Two sums.' });
    expect(first!.stream).toBe(true);
    expect(second!.messages[1]).toMatchObject({ role: 'assistant', thinking: 'Two sums.', content: 'Adding.' });
    expect(second!.messages[3]).toEqual({ role: 'tool', toolCallId: 'call_b', name: 'add', content: 'overflow', isError: true });
    expect(second!.stream).toBe(true);
  });

  it('streams over the chat wire still end in [DONE], untouched by the other wires', async () => {
    server = await startScriptedServer({ script: [text('hello')] });
    const response = await postTo(server.url, '/chat/completions', { ...CONVERSATION['openai-chat'].body, stream: true });
    const frames = parseSse(await response.text());
    expect(frames.at(-1)).toBe('[DONE]');
    expect(assemble(frames).text).toBe('hello');
  });
});
