/** Helpers to read an {@link AssistantStream} in tests and check the event contract. */
import { expect } from 'vitest';
import type { AssistantMessage, AssistantStream, AssistantStreamEvent, ModelRef, ToolCall } from '../../src/model/types.js';

/** All events of a stream, and its result. */
export async function collect(stream: AssistantStream): Promise<{ events: AssistantStreamEvent[]; message: AssistantMessage }> {
  const events: AssistantStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return { events, message: await stream.result() };
}

/** A model pointing at a test server. */
export function testModel(baseUrl: string, overrides: Partial<ModelRef> = {}): ModelRef {
  return { provider: 'openai', id: 'gpt-4o', api: 'openai-chat', baseUrl, apiKey: 'sk-test', ...overrides };
}

/** The text blocks of a message, joined. */
export function textOf(message: AssistantMessage): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** The thinking blocks of a message, joined. */
export function thinkingOf(message: AssistantMessage): string {
  return message.content.map((block) => (block.type === 'thinking' ? block.thinking : '')).join('');
}

/** The tool calls of a message. */
export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  return message.content.filter((block): block is ToolCall => block.type === 'tool_call');
}

/**
 * Checks the contract of one adapter attempt: `start` first unless the request failed
 * before any output, one terminal event last, every block opened before its deltas and
 * (on success) closed, deltas adding up to the block, and the final message matching.
 */
export function expectWellFormed(events: AssistantStreamEvent[], message: AssistantMessage): void {
  const terminal = events.filter((event) => event.type === 'done' || event.type === 'error');
  expect(terminal).toHaveLength(1);
  const last = events[events.length - 1];
  expect(last?.type === 'done' || last?.type === 'error').toBe(true);
  if (last?.type === 'done' || last?.type === 'error') expect(last.message).toBe(message);
  if (events.length > 1) expect(events[0]?.type).toBe('start');
  const opened = new Map<number, string>();
  const closed = new Set<number>();
  const deltas = new Map<number, string>();
  for (const event of events) {
    switch (event.type) {
      case 'text_start':
      case 'thinking_start':
      case 'tool_call_start':
        expect(opened.has(event.index)).toBe(false);
        opened.set(event.index, event.type);
        deltas.set(event.index, '');
        break;
      case 'text_delta':
      case 'thinking_delta':
      case 'tool_call_delta':
        expect(opened.has(event.index)).toBe(true);
        expect(closed.has(event.index)).toBe(false);
        deltas.set(event.index, (deltas.get(event.index) ?? '') + event.delta);
        break;
      case 'text_end':
        expect(event.text).toBe(deltas.get(event.index));
        closed.add(event.index);
        break;
      case 'thinking_end':
        expect(event.thinking).toBe(deltas.get(event.index));
        closed.add(event.index);
        break;
      case 'tool_call_end':
        expect(event.toolCall.rawArguments).toBe(deltas.get(event.index));
        closed.add(event.index);
        break;
      default:
        break;
    }
  }
  expect([...opened.keys()].sort((a, b) => a - b)).toEqual(message.content.map((_, index) => index));
  if (last?.type === 'done') expect(closed.size).toBe(opened.size);
  for (const [index, block] of message.content.entries()) {
    const streamed = deltas.get(index);
    if (block.type === 'text') expect(block.text).toBe(streamed);
    else if (block.type === 'thinking') expect(block.thinking).toBe(streamed);
    else expect(block.rawArguments).toBe(streamed);
  }
}

/** The error of the event that ended a stream (fails the test when the last event is not an error). */
export function lastError(events: AssistantStreamEvent[]) {
  const last = events[events.length - 1];
  if (last?.type !== 'error') throw new Error(`expected an error event, got ${last?.type}`);
  return last.error;
}
