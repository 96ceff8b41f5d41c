import { describe, expect, it } from 'vitest';
import { buildChatBody, buildChatRequest } from '../../src/model/providers/openai-chat-request.js';
import type { AssistantMessage, Message, ToolResultMessage } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';
import { testModel } from './stream-helpers.js';

const model = testModel('http://127.0.0.1:1/v1');
const tools = [{ name: 'add', description: 'Add two numbers.', parameters: { type: 'object', properties: { a: { type: 'number' } } } }];

function assistantCall(id: string, a: number): AssistantMessage {
  return {
    role: 'assistant',
    content: [{ type: 'tool_call', id, name: 'add', arguments: { a }, rawArguments: JSON.stringify({ a }) }],
    stopReason: 'tool_use',
    usage: emptyUsage(),
    provider: model.provider,
    model: model.id,
    api: 'openai-chat',
  };
}

function result(id: string, text: string): ToolResultMessage {
  return { role: 'tool', toolCallId: id, toolName: 'add', content: [{ type: 'text', text }], isError: false };
}

/** The body must always be the JSON of the request object, whatever was cached before. */
function expectExact(messages: Message[], system?: string): void {
  const context = { ...(system === undefined ? {} : { system }), messages, tools };
  expect(buildChatBody(model, context)).toBe(JSON.stringify(buildChatRequest(model, context)));
}

describe('Chat Completions body built from the JSON of earlier requests', () => {
  it('a history that grows turn by turn gives the exact body on every turn', () => {
    const history: Message[] = [{ role: 'user', content: 'Add things.' }];
    expectExact(history, 'Be terse.');
    for (let turn = 0; turn < 6; turn++) {
      history.push(assistantCall(`call_${turn}`, turn), result(`call_${turn}`, String(turn)));
      expectExact(history, 'Be terse.');
    }
  });

  it('a message replaced in the middle of the same array is sent as it is now', () => {
    const history: Message[] = [
      { role: 'user', content: 'one' },
      assistantCall('c1', 1),
      result('c1', 'first'),
      { role: 'user', content: 'two' },
    ];
    expectExact(history);
    history[2] = result('c1', 'redacted');
    expectExact(history);
    expect(buildChatBody(model, { messages: history })).toContain('redacted');
    expect(buildChatBody(model, { messages: history })).not.toContain('first');
  });

  it('a shortened array, and its last message replaced (as the context message is each turn), give the exact body', () => {
    const history: Message[] = [
      { role: 'user', content: 'one' },
      assistantCall('c1', 1),
      result('c1', '1'),
      { role: 'user', content: 'block A' },
    ];
    expectExact(history);
    history[3] = { role: 'user', content: 'block B' };
    expectExact(history);
    history.length = 1;
    expectExact(history);
    history.push({ role: 'user', content: 'again' });
    expectExact(history);
  });

  it('the same messages in a new array every turn (a transformContext copy) give the exact body', () => {
    const history: Message[] = [{ role: 'user', content: 'start' }];
    for (let turn = 0; turn < 4; turn++) {
      expectExact([{ role: 'user', content: 'rules: be brief' }, ...history]);
      history.push(assistantCall(`c${turn}`, turn), result(`c${turn}`, 'ok'));
    }
  });

  it('an empty history and an assistant message with nothing to send are handled like the request object', () => {
    expectExact([]);
    const empty: AssistantMessage = { ...assistantCall('x', 0), content: [] };
    const history: Message[] = [{ role: 'user', content: 'hi' }, empty, { role: 'user', content: 'again' }];
    expectExact(history);
    history.push({ role: 'user', content: 'more' });
    expectExact(history, 'sys');
  });
});
