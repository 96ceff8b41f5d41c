import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedServer, text, validateChatRequest, type ScriptedServer } from '../../src/testing/index.js';
import { assemble, post, streamChat, USER, type Wire } from './helpers.js';

const call = (id: string, name = 'read') => ({ id, type: 'function', function: { name, arguments: '{}' } });
const assistantCalls = (...ids: string[]) => ({ role: 'assistant', content: null, tool_calls: ids.map((id) => call(id)) });
const answer = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'result' });
const request = (messages: unknown[], extra: Record<string, unknown> = {}) => ({ model: 'm', messages, ...extra });

describe('validateChatRequest', () => {
  it('accepts a valid history with parallel tool calls answered in any order', () => {
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'go' },
      assistantCalls('call_a', 'call_b'),
      answer('call_b'),
      answer('call_a'),
      { role: 'assistant', content: 'done' },
      { role: 'user', content: [{ type: 'text', text: 'again' }] },
    ];
    const tools = [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: {} } } }];
    expect(validateChatRequest(request(messages, { tools, stream: true, stream_options: { include_usage: true } }))).toBeUndefined();
  });

  it('rejects an assistant tool call left without a tool message, naming the ids', () => {
    const dangling = validateChatRequest(
      request([...USER, assistantCalls('call_a', 'call_b'), answer('call_a'), { role: 'user', content: 'next' }]),
    );
    expect(dangling?.error).toMatchObject({ type: 'invalid_request_error', param: 'messages.[1].role' });
    expect(dangling?.error.message).toBe(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_b",
    );
    const atEnd = validateChatRequest(request([...USER, assistantCalls('call_z')]));
    expect(atEnd?.error.message).toContain('did not have response messages: call_z');
  });

  it('rejects a tool message answering an id the previous assistant did not call', () => {
    const wrong = validateChatRequest(request([...USER, assistantCalls('call_a'), answer('call_a'), answer('call_x')]));
    expect(wrong?.error.message).toBe("Invalid parameter: 'tool_call_id' of 'call_x' not found in 'tool_calls' of previous message.");
  });

  it('rejects a tool message that follows no tool calls', () => {
    const orphan = validateChatRequest(request([...USER, answer('call_a')]));
    expect(orphan?.error.message).toBe(
      "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    );
    const late = validateChatRequest(
      request([...USER, assistantCalls('call_a'), answer('call_a'), { role: 'assistant', content: 'x' }, answer('call_a')]),
    );
    expect(late?.error.message).toContain("must be a response to a preceeding message with 'tool_calls'");
  });

  it.each([
    ['missing model', { messages: USER }, 'you must provide a model parameter'],
    ['missing messages', { model: 'm' }, "Missing required parameter: 'messages'."],
    ['empty messages', { model: 'm', messages: [] }, "Invalid 'messages': empty array."],
    ['unknown role', request([{ role: 'robot', content: 'x' }]), "Invalid value: 'robot'."],
    [
      'tool without a name',
      request(USER, { tools: [{ type: 'function', function: { parameters: { type: 'object' } } }] }),
      "Missing required parameter: 'tools[0].function.name'.",
    ],
    [
      'tool name with a dot',
      request(USER, { tools: [{ type: 'function', function: { name: 'fs.read' } }] }),
      'string does not match pattern',
    ],
    [
      'tool schema not an object',
      request(USER, { tools: [{ type: 'function', function: { name: 'x', parameters: { type: 'string' } } }] }),
      'Invalid schema for function',
    ],
    [
      'arguments sent as an object',
      request([
        ...USER,
        { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'r', arguments: {} } }] },
        answer('c'),
      ]),
      'expected a string, but got an object',
    ],
    ['empty tool_calls', request([...USER, { role: 'assistant', content: null, tool_calls: [] }]), 'empty array'],
    [
      'assistant with neither content nor tool calls',
      request([...USER, { role: 'assistant', content: null }]),
      "Invalid value for 'content'",
    ],
    ['user message without content', request([{ role: 'user' }]), "Missing required parameter: 'messages[0].content'."],
    [
      'stream_options without stream',
      request(USER, { stream_options: { include_usage: true } }),
      "'stream_options' parameter is only allowed",
    ],
    ['a body that is not an object', [1, 2], 'expected an object'],
  ])('rejects %s', (_name, body, message) => {
    const failure = validateChatRequest(body);
    expect(failure?.error.type).toBe('invalid_request_error');
    expect(failure?.error.message).toContain(message);
  });
});

describe('scripted server: validation over HTTP', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('answers 400 with the OpenAI body, records the request, and takes no turn', async () => {
    server = await startScriptedServer({ script: [text('first turn')] });
    const bad = await post(server.url, request([...USER, assistantCalls('call_a')], { stream: true }));
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as Wire;
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages.[1].role', code: null });
    expect(body.error.message).toContain('call_a');
    expect(server.requests).toHaveLength(1);
    expect(assemble((await streamChat(server.url, {})).frames).text).toBe('first turn');
  });

  it('answers 400 to a body that is not JSON', async () => {
    server = await startScriptedServer({ script: [text('unused')] });
    const response = await post(server.url, '{"model": "m", "messages": [');
    expect(response.status).toBe(400);
    expect(((await response.json()) as Wire).error.message).toContain('could not parse the JSON body');
    expect(server.requests).toHaveLength(0);
  });
});
