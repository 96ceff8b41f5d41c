import { describe, expect, it } from 'vitest';
import { EventStream } from '../../src/model/event-stream.js';
import { PartialJsonParser } from '../../src/model/partial-json.js';
import { ChatDecoder } from '../../src/model/providers/openai-chat-decode.js';
import type { AssistantMessage, AssistantStreamEvent } from '../../src/model/types.js';
import { testModel } from './stream-helpers.js';

type Delta = Extract<AssistantStreamEvent, { type: 'tool_call_delta' }>;

const PIECES = ['{"path": "src/ma', 'in.ts", "li', 'nes": [1, 2', '0], "note": "a \\"quoted\\" word"', '}'];

/** Decodes one response whose tool call arguments arrive in `pieces`; the events and the message. */
function decode(pieces: string[]): { deltas: Delta[]; message: AssistantMessage } {
  const out = new EventStream<AssistantStreamEvent, AssistantMessage>();
  const events: AssistantStreamEvent[] = [];
  void out.listen((event) => events.push(event));
  const decoder = new ChatDecoder(out, testModel('http://127.0.0.1:1/v1'), {
    provider: 'openai',
    model: 'gpt-4o',
    url: 'http://127.0.0.1:1/v1/chat/completions',
  });
  decoder.start();
  const chunk = (delta: unknown, finish: string | null = null) =>
    JSON.stringify({ id: 'c1', choices: [{ index: 0, delta, finish_reason: finish }] });
  decoder.sse(undefined, chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write', arguments: '' } }] }));
  for (const piece of pieces) decoder.sse(undefined, chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  decoder.sse(undefined, chunk({}, 'tool_calls'));
  decoder.sse(undefined, '[DONE]');
  return { deltas: events.filter((e): e is Delta => e.type === 'tool_call_delta'), message: decoder.message };
}

/** What an incremental parse of the first `n` pieces shows. */
function expected(pieces: string[], n: number): unknown {
  const parser = new PartialJsonParser();
  for (const piece of pieces.slice(0, n)) parser.push(piece);
  return parser.value;
}

describe('partialArguments of streamed tool call deltas', () => {
  it('each delta shows the arguments as far as they had arrived at that delta', () => {
    const { deltas, message } = decode(PIECES);
    expect(deltas).toHaveLength(PIECES.length);
    deltas.forEach((delta, i) => expect(delta.partialArguments).toEqual(expected(PIECES, i + 1)));
    expect(deltas[0]?.partialArguments).toEqual({ path: 'src/ma' });
    expect(message.content[0]).toMatchObject({
      type: 'tool_call',
      arguments: { path: 'src/main.ts', lines: [1, 20], note: 'a "quoted" word' },
    });
  });

  it('read after the stream ended and in any order, each delta still shows its own point', () => {
    const { deltas } = decode(PIECES);
    for (let i = deltas.length - 1; i >= 0; i--) expect(deltas[i]?.partialArguments).toEqual(expected(PIECES, i + 1));
    // Read twice, a delta answers with the same object.
    expect(deltas[2]?.partialArguments).toBe(deltas[2]?.partialArguments);
  });

  it('a delta is a plain object: spread, JSON and key listings include partialArguments', () => {
    const { deltas } = decode(PIECES);
    const first = deltas[0] as Delta;
    expect(Object.keys(first)).toEqual(['type', 'index', 'delta', 'partialArguments']);
    expect({ ...first }).toEqual({ type: 'tool_call_delta', index: 0, delta: PIECES[0], partialArguments: { path: 'src/ma' } });
    expect(JSON.parse(JSON.stringify(deltas[1]))).toMatchObject({ partialArguments: { path: 'src/main.ts' } });
  });

  it('arguments that are not JSON end as {} on the call, and the deltas show what could be read', () => {
    const { deltas, message } = decode(['{"a": 1,', ' oops']);
    expect(deltas[0]?.partialArguments).toEqual({ a: 1 });
    expect(message.content[0]).toMatchObject({ type: 'tool_call', arguments: {}, rawArguments: '{"a": 1, oops' });
  });
});
