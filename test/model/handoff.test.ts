/**
 * The shared part of cross-provider handoff (src/model/handoff.ts): a history written by
 * any model, or cut short, made valid for the target model before an adapter encodes it.
 */
import { describe, expect, it } from 'vitest';
import { normalizeToolCallIds, prepareHistory, sameModel } from '../../src/model/handoff.js';
import { emptyUsage } from '../../src/model/types.js';
import type { AssistantMessage, Message, ModelRef, ToolCall, ToolResultMessage, UserMessage } from '../../src/model/types.js';

const claude: ModelRef = { provider: 'anthropic', id: 'claude-sonnet-4-5', api: 'anthropic-messages', baseUrl: 'http://127.0.0.1:1' };
const gpt: ModelRef = { provider: 'openai', id: 'gpt-4o', api: 'openai-chat', baseUrl: 'http://127.0.0.1:1' };

function user(text: string): UserMessage {
  return { role: 'user', content: text };
}

function assistant(by: ModelRef, content: AssistantMessage['content'], extra: Partial<AssistantMessage> = {}): AssistantMessage {
  const stopReason = content.some((c) => c.type === 'tool_call') ? 'tool_use' : 'stop';
  return { role: 'assistant', content, stopReason, usage: emptyUsage(), provider: by.provider, model: by.id, api: by.api, ...extra };
}

function call(id: string, name = 'lookup', signature?: string): ToolCall {
  const block: ToolCall = { type: 'tool_call', id, name, arguments: { q: id }, rawArguments: JSON.stringify({ q: id }) };
  if (signature !== undefined) block.signature = signature;
  return block;
}

function result(toolCallId: string, text = `result of ${toolCallId}`, toolName = 'lookup'): ToolResultMessage {
  return { role: 'tool', toolCallId, toolName, content: [{ type: 'text', text }], isError: false };
}

/** A compact picture of a history: role, and the ids / texts that matter. */
function shape(messages: readonly Message[]): string[] {
  return messages.map((m) => {
    if (m.role === 'user') return `user:${typeof m.content === 'string' ? m.content : '[parts]'}`;
    if (m.role === 'tool') return `tool:${m.toolCallId}${m.isError ? ':error' : ''}`;
    return `assistant:${m.content.map((c) => (c.type === 'tool_call' ? `call ${c.id}` : c.type === 'text' ? `text ${c.text}` : `thinking ${c.thinking}`)).join(',')}`;
  });
}

describe('sameModel', () => {
  it('is true only for the same provider, model id and API', () => {
    const own = assistant(claude, [{ type: 'text', text: 'hi' }]);
    expect(sameModel(own, claude)).toBe(true);
    expect(sameModel(own, { ...claude, id: 'claude-opus-4-1' })).toBe(false);
    expect(sameModel(own, { ...claude, provider: 'openrouter' })).toBe(false);
    expect(sameModel(own, { ...claude, api: 'openai-chat' })).toBe(false);
  });

  it('a message without `api` (written before it was recorded) is judged by provider and model', () => {
    const { api: _api, ...legacy } = assistant(claude, [{ type: 'text', text: 'hi' }]);
    expect(sameModel(legacy, claude)).toBe(true);
    expect(sameModel(legacy, gpt)).toBe(false);
  });
});

describe('prepareHistory', () => {
  it('returns a clean history as the same array, without copying', () => {
    const history: Message[] = [
      user('find x'),
      assistant(claude, [{ type: 'thinking', thinking: 'plan', signature: 'sig-own' }, call('toolu_1', 'lookup', 'call-sig')]),
      result('toolu_1'),
      assistant(claude, [{ type: 'text', text: 'done' }]),
    ];
    expect(prepareHistory(history, claude)).toBe(history);
  });

  it('does not replay turns that ended in an error or were aborted, nor the results of their calls', () => {
    const history: Message[] = [
      user('a'),
      assistant(gpt, [call('call_err')], { stopReason: 'error' }),
      result('call_err'),
      user('b'),
      assistant(gpt, [{ type: 'text', text: 'partial' }], { stopReason: 'aborted' }),
      user('c'),
    ];
    expect(shape(prepareHistory(history, gpt))).toEqual(['user:a', 'user:b', 'user:c']);
  });

  it('turns another model’s thinking into text, drops its redacted thinking and its signatures', () => {
    const foreign = assistant(claude, [
      { type: 'thinking', thinking: 'I should look it up', signature: 'claude-sig' },
      { type: 'thinking', thinking: '', signature: 'opaque', redacted: true },
      { type: 'text', text: 'Looking.', signature: 'text-sig' },
      call('toolu_1', 'lookup', 'call-sig'),
    ]);
    const history: Message[] = [user('q'), foreign, result('toolu_1')];
    const out = prepareHistory(history, gpt);
    const converted = out[1] as AssistantMessage;
    expect(converted.content).toEqual([
      { type: 'text', text: 'I should look it up' },
      { type: 'text', text: 'Looking.' },
      { type: 'tool_call', id: 'toolu_1', name: 'lookup', arguments: { q: 'toolu_1' }, rawArguments: '{"q":"toolu_1"}' },
    ]);
    expect(JSON.stringify(out)).not.toMatch(/claude-sig|opaque|text-sig|call-sig/);
    // The input was not changed.
    expect(foreign.content[0]).toEqual({ type: 'thinking', thinking: 'I should look it up', signature: 'claude-sig' });
  });

  it('keeps the target’s own thinking and signatures as they are', () => {
    const own = assistant(claude, [
      { type: 'thinking', thinking: 'plan', signature: 'sig' },
      { type: 'text', text: 'ok', signature: 't' },
    ]);
    const history: Message[] = [user('q'), own, user('again'), assistant(gpt, [{ type: 'thinking', thinking: 'gpt thought' }])];
    const out = prepareHistory(history, claude);
    expect(out[1]).toBe(own);
    expect(shape(out)).toEqual(['user:q', 'assistant:thinking plan,text ok', 'user:again', 'assistant:text gpt thought']);
  });

  it('drops a foreign turn left empty (only redacted or blank thinking)', () => {
    const history: Message[] = [
      user('q'),
      assistant(claude, [
        { type: 'thinking', thinking: '', signature: 'x', redacted: true },
        { type: 'thinking', thinking: '   ' },
      ]),
      user('next'),
    ];
    expect(shape(prepareHistory(history, gpt))).toEqual(['user:q', 'user:next']);
  });

  it('answers a dangling tool call with a synthetic error result right after the results that arrived', () => {
    const history: Message[] = [
      user('q'),
      assistant(gpt, [call('call_a'), call('call_b', 'fetch'), call('call_c')]),
      result('call_b'),
      user('where are the others?'),
    ];
    const out = prepareHistory(history, gpt);
    expect(shape(out)).toEqual([
      'user:q',
      'assistant:call call_a,call call_b,call call_c',
      'tool:call_b',
      'tool:call_a:error',
      'tool:call_c:error',
      'user:where are the others?',
    ]);
    const synthetic = out[3] as ToolResultMessage;
    expect(synthetic.toolName).toBe('lookup');
    expect(synthetic.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('"lookup" has no result') });
  });

  it('answers calls left dangling at the very end of the history too', () => {
    const history: Message[] = [user('q'), assistant(gpt, [call('call_a')])];
    expect(shape(prepareHistory(history, gpt))).toEqual(['user:q', 'assistant:call call_a', 'tool:call_a:error']);
  });

  it('drops orphan results: no matching call in the turn before, or a second result for one call', () => {
    const history: Message[] = [
      user('q'),
      result('call_nowhere'),
      assistant(gpt, [call('call_a')]),
      result('call_a'),
      result('call_a', 'again'),
      result('call_other'),
      user('next'),
      result('call_a'),
    ];
    expect(shape(prepareHistory(history, gpt))).toEqual(['user:q', 'assistant:call call_a', 'tool:call_a', 'user:next']);
  });

  it('a result is tied to the assistant turn right before it, not to an older one', () => {
    const history: Message[] = [
      user('q'),
      assistant(gpt, [call('call_a')]),
      result('call_a'),
      assistant(gpt, [call('call_b')]),
      result('call_a'),
      result('call_b'),
    ];
    expect(shape(prepareHistory(history, gpt))).toEqual([
      'user:q',
      'assistant:call call_a',
      'tool:call_a',
      'assistant:call call_b',
      'tool:call_b',
    ]);
  });
});

describe('prepareHistory on a history that grows turn by turn', () => {
  it('checks only what was appended, and still catches a foreign turn or a dangling call added later', () => {
    const history: Message[] = [user('hi'), assistant(gpt, [call('c1')]), result('c1')];
    expect(prepareHistory(history, gpt)).toBe(history);
    history.push(assistant(gpt, [{ type: 'text', text: 'ok' }]), user('more'));
    expect(prepareHistory(history, gpt)).toBe(history);
    // Another model's thinking appended after the clean prefix must still be converted.
    history.push(assistant(claude, [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, call('c2')]));
    const prepared = prepareHistory(history, gpt);
    expect(prepared).not.toBe(history);
    expect(prepared.at(-2)).toMatchObject({
      role: 'assistant',
      content: [
        { type: 'text', text: 'hmm' },
        { type: 'tool_call', id: 'c2' },
      ],
    });
    expect(prepared.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'c2', isError: true });
  });
});

describe('normalizeToolCallIds', () => {
  const valid = (id: string): boolean => /^[a-zA-Z0-9_-]{1,40}$/.test(id);
  const make = (_id: string, index: number): string => `call_${index}`;

  it('returns the input array when every id is valid', () => {
    const history: Message[] = [user('q'), assistant(gpt, [call('call_a')]), result('call_a')];
    expect(normalizeToolCallIds(history, valid, make)).toBe(history);
  });

  it('renames invalid ids consistently in calls and results, keeping valid ones and untouched messages', () => {
    const long = `fc_${'x'.repeat(60)}`;
    const dotted = 'tool.call:1';
    const first = user('q');
    const history: Message[] = [
      first,
      assistant(gpt, [{ type: 'text', text: 'two calls' }, call(long), call('call_ok')]),
      result(long),
      result('call_ok'),
      assistant(gpt, [call(dotted)]),
      result(dotted),
    ];
    const out = normalizeToolCallIds(history, valid, make);
    expect(shape(out)).toEqual([
      'user:q',
      'assistant:text two calls,call call_0,call call_ok',
      'tool:call_0',
      'tool:call_ok',
      'assistant:call call_1',
      'tool:call_1',
    ]);
    expect(out[0]).toBe(first);
    expect(out[3]).toBe(history[3]);
    // The renamed call keeps everything but its id.
    expect((out[1] as AssistantMessage).content[1]).toMatchObject({ name: 'lookup', arguments: { q: long } });
    // The input is not changed.
    expect((history[2] as ToolResultMessage).toolCallId).toBe(long);
  });

  it('an id used twice gets one new name', () => {
    const bad = 'bad id';
    const history: Message[] = [assistant(gpt, [call(bad)]), result(bad), user('again'), assistant(gpt, [call(bad)]), result(bad)];
    const ids = normalizeToolCallIds(history, valid, make).flatMap((m) =>
      m.role === 'tool' ? [m.toolCallId] : m.role === 'assistant' ? m.content.flatMap((c) => (c.type === 'tool_call' ? [c.id] : [])) : [],
    );
    expect(ids).toEqual(['call_0', 'call_0', 'call_0', 'call_0']);
  });
});
