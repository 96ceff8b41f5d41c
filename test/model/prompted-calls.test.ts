// Reading prompted tool calls out of streamed text: split anywhere, several per answer, fenced or tagged, malformed.
import { describe, expect, it } from 'vitest';
import { EventStream } from '../../src/model/event-stream.js';
import { parseCallText, PromptedCallReader } from '../../src/model/prompted-calls.js';
import { emptyUsage, type AssistantMessage, type AssistantStreamEvent } from '../../src/model/types.js';

/** Feeds `text` in pieces of `size` characters through a reader, as a wire's text deltas, and ends with `stopReason`. */
async function read(text: string, size: number, stopReason: AssistantMessage['stopReason'] = 'stop') {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  const events: AssistantStreamEvent[] = [];
  const done = out.listen((event) => events.push(event));
  const reader = new PromptedCallReader(out, new Set(['add', 'read_file']));
  reader.push({ type: 'start', provider: 'p', model: 'm' });
  reader.push({ type: 'text_start', index: 0 });
  for (let i = 0; i < text.length; i += size) reader.push({ type: 'text_delta', index: 0, delta: text.slice(i, i + size) });
  reader.push({ type: 'text_end', index: 0, text });
  const inner: AssistantMessage = {
    role: 'assistant',
    content: [{ type: 'text', text }],
    stopReason,
    usage: emptyUsage(),
    provider: 'p',
    model: 'm',
  };
  reader.push({ type: 'done', message: inner });
  const message = await done;
  return { events, message };
}

const calls = (message: AssistantMessage) =>
  message.content.flatMap((b) => (b.type === 'tool_call' ? [{ name: b.name, raw: b.rawArguments, args: b.arguments }] : []));
const texts = (message: AssistantMessage) => message.content.flatMap((b) => (b.type === 'text' ? [b.text] : []));

describe('prompted tool calls in streamed text', () => {
  const answer =
    'Let me add them.\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 40}}\n</tool_call>\n<tool_call>{"name":"read_file","arguments":{"path":"a.txt"}}</tool_call>\n';

  it('reads several calls, the same however the text is cut into deltas', async () => {
    for (const size of [1, 2, 3, 5, 7, 11, 1000]) {
      const { message, events } = await read(answer, size);
      expect(calls(message)).toEqual([
        { name: 'add', raw: '{"a": 2, "b": 40}', args: { a: 2, b: 40 } },
        { name: 'read_file', raw: '{"path":"a.txt"}', args: { path: 'a.txt' } },
      ]);
      expect(texts(message)).toEqual(['Let me add them.\n']);
      expect(message.stopReason).toBe('tool_use');
      // The text streamed is the text kept; no part of a call leaked into it.
      const streamed = events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : [])).join('');
      expect(streamed).toBe('Let me add them.\n');
      // Each block's events carry its index in the message.
      const ends = events.flatMap((e) => (e.type === 'tool_call_end' ? [e.index] : []));
      expect(ends.map((i) => message.content[i]?.type)).toEqual(['tool_call', 'tool_call']);
      expect(new Set(calls(message).map((_, i) => (message.content[ends[i] as number] as { id: string }).id)).size).toBe(2);
    }
  });

  it('reads a fenced JSON block that names an offered tool; any other fence is text', async () => {
    const text = 'Sure.\n```json\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n```\nAlso:\n```json\n{"name": "x", "value": 1}\n```';
    for (const size of [1, 4, 1000]) {
      const { message } = await read(text, size);
      expect(calls(message)).toEqual([{ name: 'add', raw: '{"a": 1, "b": 2}', args: { a: 1, b: 2 } }]);
      expect(texts(message).join('|')).toBe('Sure.\n|\nAlso:\n```json\n{"name": "x", "value": 1}\n```');
    }
  });

  it('an answer without calls is its text, whole, and stops as it stopped', async () => {
    const { message } = await read('No tool needed: 2 < 3 and `a` is fine.', 3);
    expect(texts(message)).toEqual(['No tool needed: 2 < 3 and `a` is fine.']);
    expect(message.stopReason).toBe('stop');
  });

  it("a malformed call keeps the model's argument text, for the dispatcher to repair or refuse", async () => {
    const { message } = await read('<tool_call>{"name": "add", "arguments": {\'a\': 1, b: 2,}}</tool_call>', 4);
    expect(calls(message)).toEqual([{ name: 'add', raw: "{'a': 1, b: 2,}", args: {} }]);
    expect(parseCallText('{"name": "add", "arguments": {"a": 1')).toEqual({ name: 'add', rawArguments: '{"a": 1' });
    expect(parseCallText('not a call at all')).toBeUndefined();
  });

  it('a call left open by an answer that ended is a call; one cut by the output limit stays text', async () => {
    const open = '<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}';
    expect(calls((await read(open, 5)).message)).toEqual([{ name: 'add', raw: '{"a": 1, "b": 2}', args: { a: 1, b: 2 } }]);
    const cut = await read(open, 5, 'length');
    expect(calls(cut.message)).toEqual([]);
    expect(cut.message.stopReason).toBe('length');
    expect(texts(cut.message)).toEqual([open]);
  });
});
