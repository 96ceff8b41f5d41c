import { describe, expect, it } from 'vitest';
import { ThinkTagSplitter } from '../../src/model/providers/think-tags.js';

type Piece = ['text' | 'thinking', string];

/** What the splitter sends out for `pieces`, each push's output kept apart (`|` marks a push). */
function split(pieces: string[]): { out: Piece[]; perPush: Piece[][] } {
  const out: Piece[] = [];
  const perPush: Piece[][] = [];
  const splitter = new ThinkTagSplitter((kind, text) => {
    expect(text).not.toBe('');
    out.push([kind, text]);
  });
  for (const piece of pieces) {
    const before = out.length;
    splitter.push(piece);
    perPush.push(out.slice(before));
  }
  const before = out.length;
  splitter.end();
  perPush.push(out.slice(before));
  return { out, perPush };
}

/** The pieces joined by kind, in order, adjacent pieces of one kind merged. */
function joined(out: Piece[]): Piece[] {
  const merged: Piece[] = [];
  for (const [kind, text] of out) {
    const last = merged[merged.length - 1];
    if (last !== undefined && last[0] === kind) last[1] += text;
    else merged.push([kind, text]);
  }
  return merged;
}

describe('ThinkTagSplitter', () => {
  it('splits <think>…</think> at the start off the answer, trimming the blank lines after the tag', () => {
    expect(joined(split(['<think>', '\nuser wants hi\n', '</think>\n\n', 'Hello!']).out)).toEqual([
      ['thinking', '\nuser wants hi\n'],
      ['text', 'Hello!'],
    ]);
    expect(joined(split(['  \n<think>plan</think>   answer </think> kept']).out)).toEqual([
      ['thinking', 'plan'],
      ['text', 'answer </think> kept'],
    ]);
  });

  it('finds both tags cut at every character, with the same result', () => {
    const content = '<think>a plan</think>\n\nThe answer.';
    for (let cut = 1; cut < content.length; cut++) {
      for (let second = cut + 1; second < content.length; second++) {
        const pieces = [content.slice(0, cut), content.slice(cut, second), content.slice(second)];
        expect(joined(split(pieces).out), pieces.join(' | ')).toEqual([
          ['thinking', 'a plan'],
          ['text', 'The answer.'],
        ]);
      }
    }
    expect(joined(split([...content]).out)).toEqual([
      ['thinking', 'a plan'],
      ['text', 'The answer.'],
    ]);
  });

  it('leaves content that does not start with <think> untouched, and passes it on at once', () => {
    const { out, perPush } = split(['Hello', ' <think>x</think>', ' world']);
    expect(out).toEqual([
      ['text', 'Hello'],
      ['text', ' <think>x</think>'],
      ['text', ' world'],
    ]);
    expect(perPush.map((p) => p.length)).toEqual([1, 1, 1, 0]);
    expect(joined(split(['\n\n', 'Hi']).out)).toEqual([['text', '\n\nHi']]);
    expect(joined(split(['<thing>']).out)).toEqual([['text', '<thing>']]);
  });

  it('holds back only what may still be a tag: "<th" waits, "<b" does not; "</thi" inside thinking waits', () => {
    const { perPush } = split(['<th', 'ink>reason', 'ing</thi', 'nk>', 'ok']);
    expect(perPush).toEqual([[], [['thinking', 'reason']], [['thinking', 'ing']], [], [['text', 'ok']], []]);
    expect(split(['<b', '>bold</b>']).perPush[0]).toEqual([['text', '<b']]);
    // `<` then `/`: a possible `</think>` is held, and let go as soon as it is not one.
    expect(split(['<think>a <', '/b> c']).perPush).toEqual([[['thinking', 'a ']], [['thinking', '</b> c']], []]);
  });

  it('an unclosed <think> stays thinking to the end; a content cut inside the opening tag is text', () => {
    expect(joined(split(['<think>still going', ' </th']).out)).toEqual([['thinking', 'still going </th']]);
    expect(split(['<think>', '</think>', '\n']).out).toEqual([]);
    expect(split([' <thi']).out).toEqual([['text', ' <thi']]);
    expect(split(['\n']).out).toEqual([['text', '\n']]);
  });
});
