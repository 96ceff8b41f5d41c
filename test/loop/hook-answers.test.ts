/**
 * Hooks that answer with the wrong shape end the run with a `config` error that names the
 * hook and what it must return, instead of passing for "go on" (shouldStopAfterTurn) or
 * failing deep in an adapter (transformContext).
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/model/types.js';
import type { AgentHooks } from '../../src/loop/options.js';
import { addTool, setup } from './helpers.js';

const addThenAnswer = () => [{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three' }];

describe('shouldStopAfterTurn answering with the wrong shape', () => {
  it.each([
    ['a number', 42, /it returned 42/],
    ['a stop that is not a boolean', { stop: 'yes' }, /it returned \{"stop":"yes"\}/],
    ['a typo of stop', { stpo: true }, /it returned \{"stpo":true\}/],
    ['a reason that is not a string', { stop: true, reason: 7 }, /it returned \{"stop":true,"reason":7\}/],
    ['an array', [true], /it returned an array of 1/],
  ])('%s ends the run as fatal_error naming the hook, after the turn it judged', async (_label, answer, returned) => {
    const { agent, server } = await setup(addThenAnswer(), {
      tools: [addTool],
      hooks: { shouldStopAfterTurn: (() => answer) as unknown as AgentHooks['shouldStopAfterTurn'] },
    });
    const result = await agent.run('add');
    expect(result).toMatchObject({ status: 'failed', reason: 'fatal_error', error: { code: 'config' } });
    expect(result.error?.message).toMatch(
      /^hooks\.shouldStopAfterTurn must return true, a non-empty reason or \{ stop: true, reason\? \} to stop/,
    );
    expect(result.error?.message).toMatch(returned);
    // The turn's work is kept; no further model call was made.
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(server.requests).toHaveLength(1);
  });

  it('an asynchronous hook is read the same way', async () => {
    const { agent } = await setup(addThenAnswer(), {
      tools: [addTool],
      hooks: { shouldStopAfterTurn: (async () => 42) as unknown as AgentHooks['shouldStopAfterTurn'] },
    });
    expect(await agent.run('add')).toMatchObject({
      reason: 'fatal_error',
      error: { code: 'config', message: expect.stringMatching(/returned 42/) },
    });
  });

  it.each([
    ['false', false],
    ["''", ''],
    ['{ stop: false }', { stop: false }],
    ['nothing (undefined)', undefined],
    ['null', null],
  ])('%s goes on', async (_label, answer) => {
    const { agent } = await setup(addThenAnswer(), {
      tools: [addTool],
      hooks: { shouldStopAfterTurn: (() => answer) as unknown as AgentHooks['shouldStopAfterTurn'] },
    });
    expect(await agent.run('add')).toMatchObject({ reason: 'final_answer', text: 'three' });
  });

  it('{ stop: true, reason } still stops with the reason kept', async () => {
    const { agent } = await setup(addThenAnswer(), {
      tools: [addTool],
      hooks: { shouldStopAfterTurn: () => ({ stop: true, reason: 'seen enough' }) },
    });
    expect(await agent.run('add')).toMatchObject({ reason: 'hook', detail: 'seen enough' });
  });
});

describe('transformContext returning something that is not a request', () => {
  const bogus = { role: 'bogus', content: 'x' };
  it.each([
    [
      'a message of no known role',
      (messages: Message[]) => [...messages, bogus],
      /^hooks\.transformContext\(…\)\[1\]\.role: expected 'user', 'assistant' or 'tool', got "bogus"/,
    ],
    [
      'a message without content',
      (messages: Message[]) => [messages[0], { role: 'user' }],
      /^hooks\.transformContext\(…\)\[1\]: expected a user message \(\{ role: 'user', content: string \| parts\[\] \}\), got \{"role":"user"\}$/,
    ],
    [
      'something that is not an object',
      (messages: Message[]) => [...messages, 'hello'],
      /^hooks\.transformContext\(…\)\[1\]: expected a message object, got "hello"/,
    ],
    ['an empty list', () => [], /^hooks\.transformContext must return an array of messages.*got an empty array/],
  ])('%s fails the run with a config error before any request', async (_label, transform, message) => {
    const { agent, server } = await setup([{ text: 'never' }], {
      hooks: { transformContext: transform as unknown as AgentHooks['transformContext'] },
    });
    const result = await agent.run('hi');
    expect(result).toMatchObject({ status: 'failed', reason: 'fatal_error', error: { code: 'config' } });
    expect(result.error?.message).toMatch(message);
    expect(server.requests).toHaveLength(0);
  });

  it('a valid list is sent as returned', async () => {
    const { agent, server } = await setup([{ text: 'ok' }], {
      hooks: { transformContext: (messages) => [{ role: 'user', content: 'be brief' }, ...messages] },
    });
    expect(await agent.run('hi')).toMatchObject({ reason: 'final_answer' });
    expect(server.requests[0]!.messages.map((m) => m.content)).toEqual(['be brief', 'hi']);
  });
});
