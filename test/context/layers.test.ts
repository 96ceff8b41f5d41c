import { describe, expect, it } from 'vitest';
import { CONTEXT_BLOCK_HEADER, joinSystem, joinUser, RequestMessages, type Layer } from '../../src/context/layers.js';
import type { Message, UserMessage } from '../../src/model/types.js';

const user = (text: string): Message => ({ role: 'user', content: text });
const block: UserMessage = { role: 'user', content: 'BLOCK' };

describe('joining layers', () => {
  const layers: Layer[] = [
    { id: 'system', role: 'system', text: 'S' },
    { id: 'task', role: 'user', text: 'T' },
    { id: 'rules', role: 'system', text: 'R' },
    { id: 'empty', role: 'system', text: '  ' },
    { id: 'memory', role: 'user', text: 'M' },
  ];

  it('system layers in order into the system prompt, user layers under the harness header', () => {
    expect(joinSystem(layers)).toBe('S\n\nR');
    expect(joinUser(layers)).toBe(`${CONTEXT_BLOCK_HEADER}\n\nT\n\nM`);
    expect(joinSystem([])).toBeUndefined();
    expect(joinUser(layers.filter((l) => l.role === 'system'))).toBeUndefined();
  });
});

describe('placing the context message', () => {
  it('extends one array in place while the history only grows', () => {
    const placed = new RequestMessages();
    const history: Message[] = [user('a')];
    const first = placed.place(history, block);
    expect(first).toEqual([block, history[0]]);
    history.push({
      role: 'assistant',
      content: [{ type: 'text', text: 'b' }],
      stopReason: 'stop',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 },
      provider: 'p',
      model: 'm',
    });
    const second = placed.place(history, block);
    expect(second).toBe(first);
    expect(second).toEqual([history[0], history[1], block]);
    expect(history).toHaveLength(2);
  });

  it('starts a new array when the history was rewritten, leaving the old request as it was', () => {
    const placed = new RequestMessages();
    const history: Message[] = [user('a'), user('b'), user('c')];
    const before = placed.place(history, block);
    const snapshot = [...before];
    history.splice(0, 2, user('summary'));
    const after = placed.place(history, block);
    expect(after).not.toBe(before);
    expect(before).toEqual(snapshot);
    expect(after).toEqual([history[0], block, history[1]]);
    // A different source array is a rewrite too.
    expect(placed.place([...history], block)).not.toBe(after);
  });
});
