/**
 * When a follow-up queued in reaction to an event is in time: a listener runs as the event
 * is emitted, before the loop decides what the answer means; an iterator reads events after
 * the loop moved on, so a follow-up from it comes after the final answer ended the run and
 * is handed back in `unsent`.
 */
import { describe, expect, it } from 'vitest';
import { addTool, roles, setup } from './helpers.js';

const echo = (request: { messages: Array<{ role: string; content: string }> }) => ({
  text: `reply to ${request.messages.at(-1)?.content}`,
});

describe('a follow-up queued on the final assistant_message', () => {
  it('from subscribe(): the run answers it', async () => {
    const { agent, server } = await setup(echo);
    const run = agent.run('first');
    let queued = false;
    run.subscribe((event) => {
      if (event.type === 'assistant_message' && !queued) {
        queued = true;
        run.followUp('second');
      }
    });
    const result = await run;
    expect(result).toMatchObject({ reason: 'final_answer', text: 'reply to second' });
    expect(server.requests).toHaveLength(2);
    expect(run.unsent.followUps).toEqual([]);
  });

  it('a steer from shouldStopAfterTurn, asked after a tool turn, enters before the next model call', async () => {
    const { agent, server } = await setup([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'three, briefly' }], {
      tools: [addTool],
      hooks: {
        shouldStopAfterTurn: ({ toolResults }) => {
          if (toolResults.length > 0) run.steer('answer briefly');
          return false;
        },
      },
    });
    const run = agent.run('add');
    expect((await run).text).toBe('three, briefly');
    expect(roles(server.requests[1]!.messages)).toBe('user,assistant,tool,user');
    expect(server.requests[1]!.messages.at(-1)?.content).toBe('answer briefly');
  });

  it('from a for-await loop: too late, the run has ended with its answer, and the message is in unsent', async () => {
    const { agent, server } = await setup(echo);
    const run = agent.run('first');
    let queued = false;
    for await (const event of run) {
      if (event.type === 'assistant_message' && !queued) {
        queued = true;
        run.followUp('second');
      }
    }
    const result = await run;
    expect(result).toMatchObject({ reason: 'final_answer', text: 'reply to first' });
    expect(server.requests).toHaveLength(1);
    expect(run.unsent.followUps).toEqual([{ role: 'user', content: 'second' }]);
  });
});
