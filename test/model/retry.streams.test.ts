import { describe, expect, it } from 'vitest';
import { ReinError } from '../../src/errors.js';
import { EventStream } from '../../src/model/event-stream.js';
import { streamWithRetry } from '../../src/model/retry.js';
import type { RetryPolicy } from '../../src/model/retry.js';
import type { AssistantMessage, AssistantStream, AssistantStreamEvent, ModelRef, StreamFunction } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';
import { collect, testModel } from './stream-helpers.js';

const model = testModel('http://127.0.0.1:1/v1');
const instant: Partial<RetryPolicy> = { sleep: () => Promise.resolve() };

function answer(m: ModelRef): AssistantMessage {
  return {
    role: 'assistant',
    content: [{ type: 'text', text: 'hi' }],
    stopReason: 'stop',
    usage: emptyUsage(),
    provider: m.provider,
    model: m.id,
  };
}

/** A stream that is only iterable (no `listen`), as a custom StreamFunction may return. */
function iterableOnly(events: AssistantStreamEvent[], result: AssistantMessage): AssistantStream {
  return {
    async *[Symbol.asyncIterator]() {
      for (const event of events) yield event;
    },
    result: () => Promise.resolve(result),
  };
}

describe('streamWithRetry over streams of every kind', () => {
  it('a stream whose listen throws ends with that error, without a retry', async () => {
    let calls = 0;
    const broken: StreamFunction = () => {
      calls++;
      const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
      out.listen = () => {
        throw new Error('listen failed');
      };
      return out;
    };
    const { events, message } = await collect(streamWithRetry(broken, model, { messages: [] }, {}, instant));
    expect(events.map((e) => e.type)).toEqual(['error']);
    expect(message.error?.message).toBe('listen failed');
    expect(calls).toBe(1);
  });

  it('a stream that ends without done or error is a fatal internal error', async () => {
    const silent: StreamFunction = (m) => {
      const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
      out.push({ type: 'start', provider: m.provider, model: m.id });
      out.end(answer(m));
      return out;
    };
    const { events, message } = await collect(streamWithRetry(silent, model, { messages: [] }, {}, instant));
    expect(events.map((e) => e.type)).toEqual(['start', 'error']);
    expect(message.error).toMatchObject({ code: 'internal', kind: 'fatal' });
  });

  it('an iterable-only stream is retried after a transient error and its events forwarded', async () => {
    let calls = 0;
    const flaky: StreamFunction = (m) => {
      calls++;
      const ok = answer(m);
      if (calls === 1) {
        const error = new ReinError('overloaded', 'transient', 'busy');
        const failed = { ...ok, content: [], stopReason: 'error' as const, error: error.toJSON() };
        return iterableOnly(
          [
            { type: 'start', provider: m.provider, model: m.id },
            { type: 'error', error, message: failed },
          ],
          failed,
        );
      }
      return iterableOnly(
        [
          { type: 'start', provider: m.provider, model: m.id },
          { type: 'done', message: ok },
        ],
        ok,
      );
    };
    const stream = streamWithRetry(flaky, model, { messages: [] }, {}, instant);
    const seen: string[] = [];
    const message = await (stream.listen as NonNullable<AssistantStream['listen']>)((event) => seen.push(event.type));
    expect(seen).toEqual(['start', 'retry', 'attempt', 'start', 'done']);
    expect(message.stopReason).toBe('stop');
    expect(calls).toBe(2);
  });

  it('a sleep that throws ends the stream as aborted instead of hanging', async () => {
    const failing: StreamFunction = (m) => {
      const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
      const error = new ReinError('overloaded', 'transient', 'busy');
      const message = { ...answer(m), content: [], stopReason: 'error' as const, error: error.toJSON() };
      out.push({ type: 'error', error, message });
      out.end(message);
      return out;
    };
    const policy: Partial<RetryPolicy> = {
      sleep: () => {
        throw new Error('no timers here');
      },
    };
    const { events, message } = await collect(streamWithRetry(failing, model, { messages: [] }, {}, policy));
    expect(events.map((e) => e.type)).toEqual(['retry', 'error']);
    expect(message.stopReason).toBe('aborted');
  });
});
