import { describe, expect, it } from 'vitest';
import { shouldCompact, splitForCompaction, turnStarts } from '../../src/context/compaction.js';
import type { AssistantMessage, Message, ToolResultMessage } from '../../src/model/types.js';
import { emptyUsage } from '../../src/model/types.js';

/** A small seeded PRNG (mulberry32), so a failing history can be reproduced from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const assistant = (calls: string[], text = ''): AssistantMessage => ({
  role: 'assistant',
  content: [
    ...(text ? [{ type: 'text' as const, text }] : []),
    ...calls.map((id) => ({ type: 'tool_call' as const, id, name: 'tool', arguments: {}, rawArguments: '{}' })),
  ],
  stopReason: calls.length > 0 ? 'tool_use' : 'stop',
  usage: emptyUsage(),
  provider: 'p',
  model: 'm',
});
const result = (id: string): ToolResultMessage => ({
  role: 'tool',
  toolCallId: id,
  toolName: 'tool',
  content: [{ type: 'text', text: `r-${id}` }],
  isError: false,
});
const user = (text: string): Message => ({ role: 'user', content: text });

/**
 * A history as runs make them: an input, then turns of parallel tool calls (results in any
 * order), text answers, steering messages; sometimes (`messy`) an orphan result or a user
 * message between a call and its result, which the split must still never cut across.
 */
function history(seed: number, messy: boolean): Message[] {
  const next = random(seed);
  const out: Message[] = [user('go')];
  let id = 0;
  const turns = 1 + Math.floor(next() * 30);
  for (let t = 0; t < turns; t++) {
    const r = next();
    if (r < 0.1) out.push(user(`steer ${t}`));
    else if (r < 0.2) out.push(assistant([], `thinking aloud ${t}`));
    else {
      const ids = Array.from({ length: 1 + Math.floor(next() * 4) }, () => `c${id++}`);
      out.push(assistant(ids));
      const results = ids.map(result).sort(() => next() - 0.5);
      if (messy && next() < 0.15) out.push(user('interjection'));
      out.push(...results);
      if (messy && next() < 0.1) out.push(result(`orphan${id++}`));
    }
  }
  return out;
}

function expectValidTail(all: readonly Message[], tail: readonly Message[]): void {
  const callsInTail = new Set(
    tail.flatMap((m) => (m.role === 'assistant' ? m.content.flatMap((c) => (c.type === 'tool_call' ? [c.id] : [])) : [])),
  );
  const callsInHistory = new Set(
    all.flatMap((m) => (m.role === 'assistant' ? m.content.flatMap((c) => (c.type === 'tool_call' ? [c.id] : [])) : [])),
  );
  expect(tail[0]?.role).not.toBe('tool');
  for (const m of tail) {
    // A kept result whose call exists anywhere must have its call kept too.
    if (m.role === 'tool' && callsInHistory.has(m.toolCallId))
      expect(callsInTail.has(m.toolCallId), `orphaned result ${m.toolCallId}`).toBe(true);
  }
  const resultsInTail = new Set(tail.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  for (const id of callsInTail) expect(resultsInTail.has(id), `call ${id} kept without its result`).toBe(true);
}

describe('where a history may be cut', () => {
  it('over 2,000 random histories with parallel calls: the kept tail is valid, holds exactly the last N turns, and nothing is changed', () => {
    let splits = 0;
    for (let seed = 1; seed <= 2_000; seed++) {
      const messages = history(seed, seed % 3 === 0);
      const before = structuredClone(messages);
      const starts = turnStarts(messages);
      for (const keep of [1, 2, 5, 8]) {
        const split = splitForCompaction(messages, keep);
        const available = starts.filter((i) => i > 0).length;
        if (!split) {
          expect(available, `seed ${seed} keep ${keep}`).toBeLessThan(keep);
          continue;
        }
        splits++;
        expect([...split.head, ...split.tail]).toEqual(messages);
        expect(split.head.length).toBe(split.keepFrom);
        expect(split.head.length).toBeGreaterThan(0);
        expect(starts.filter((i) => i >= split.keepFrom)).toHaveLength(keep);
        expectValidTail(messages, split.tail);
      }
      expect(messages).toEqual(before);
    }
    expect(splits).toBeGreaterThan(2_000);
  });

  it('a turn is an assistant message with its results, or a user message', () => {
    const messages = [user('go'), assistant(['a', 'b']), result('b'), result('a'), user('steer'), assistant([], 'done')];
    expect(turnStarts(messages)).toEqual([0, 1, 4, 5]);
    const split = splitForCompaction(messages, 2);
    expect(split?.tail).toEqual([user('steer'), assistant([], 'done')]);
    expect(splitForCompaction(messages, 3)?.keepFrom).toBe(1);
    expect(splitForCompaction(messages, 4)).toBeUndefined();
  });

  it('never starts the tail between a call and a result that arrived after a user message', () => {
    const messages = [user('go'), assistant(['a']), user('hurry'), result('a'), assistant([], 'ok')];
    expect(turnStarts(messages)).toEqual([0, 1, 4]);
    expect(splitForCompaction(messages, 2)?.keepFrom).toBe(1);
  });
});

describe('when to compact', () => {
  it('at the threshold fraction of the window (70% by default)', () => {
    expect(shouldCompact(89_599, 128_000)).toBe(false);
    expect(shouldCompact(89_600, 128_000)).toBe(true);
    expect(shouldCompact(50_000, 100_000, 0.5)).toBe(true);
    expect(shouldCompact(49_999, 100_000, 0.5)).toBe(false);
  });
});
