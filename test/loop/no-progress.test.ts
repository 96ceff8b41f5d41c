// no_progress counts turns, not calls: parallel equal calls in one answer are one turn;
// the same batch turn after turn, or a cycle of 2 or 3 batches, stops the run, and the
// reason names the calls that repeated.
import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/define.js';
import { RepeatTracker } from '../../src/loop/stop-rules.js';
import { setup } from './helpers.js';

const dice = defineTool({
  name: 'roll_dice',
  description: 'Roll a die.',
  parameters: { type: 'object', properties: { sides: { type: 'integer' } }, required: ['sides'] },
  execute: ({ sides }) => String(1 + Math.floor(Math.random() * (sides as number))),
});
const read = defineTool({
  name: 'read',
  description: 'Read a page.',
  parameters: { type: 'object', properties: { page: { type: 'string' } }, required: ['page'] },
  execute: ({ page }) => `page ${String(page)}`,
});
const roll = { name: 'roll_dice', arguments: { sides: 6 } };
const page = (p: string) => ({ toolCalls: [{ name: 'read', arguments: { page: p } }] });

describe('no_progress', () => {
  it('three identical calls in one answer ("roll three dice") are one turn: the run goes on to its answer', async () => {
    const { agent } = await setup([{ toolCalls: [roll, roll, roll] }, { text: 'You rolled three dice.' }], { tools: [dice] });
    const result = await agent.run('Roll three dice');
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer', text: 'You rolled three dice.' });
    expect(result.totals.toolCalls).toBe(3);
  });

  it('the same batch 3 turns in a row stops the run, naming the calls', async () => {
    const batch = { toolCalls: [roll, roll] };
    const { agent } = await setup([batch, batch, batch, { text: 'never' }], { tools: [dice] });
    const result = await agent.run('go');
    expect(result).toMatchObject({ status: 'stopped', reason: 'no_progress' });
    expect(result.totals.steps).toBe(3);
    expect(result.detail).toBe('the same calls were made 3 turns in a row: roll_dice {"sides":6} + roll_dice {"sides":6}');
  });

  it('a period-2 cycle A, B, A, B, A, B stops the run after its third round', async () => {
    const { agent } = await setup([page('a'), page('b'), page('a'), page('b'), page('a'), page('b'), { text: 'never' }], { tools: [read] });
    const result = await agent.run('go');
    expect(result).toMatchObject({ status: 'stopped', reason: 'no_progress' });
    expect(result.totals.steps).toBe(6);
    expect(result.detail).toBe('the same 2 turns repeated 3 times in a cycle: read {"page":"a"}, then read {"page":"b"}');
  });

  it('a period-3 cycle is found too; a run that moves on is not stopped', async () => {
    const cycle = [page('a'), page('b'), page('c')];
    const { agent } = await setup([...cycle, ...cycle, ...cycle, { text: 'never' }], { tools: [read] });
    const result = await agent.run('go');
    expect(result).toMatchObject({ reason: 'no_progress' });
    expect(result.detail).toContain(
      'the same 3 turns repeated 3 times in a cycle: read {"page":"a"}, then read {"page":"b"}, then read {"page":"c"}',
    );
    const moving = await setup([page('a'), page('b'), page('a'), page('c'), page('a'), page('b'), page('a'), { text: 'done' }], {
      tools: [read],
    });
    expect((await moving.agent.run('go')).reason).toBe('final_answer');
  });

  it('the tracker ignores key order and the order of calls in a batch; 0 turns it off', () => {
    const tracker = new RepeatTracker(2);
    expect(
      tracker.recordTurn([
        { name: 't', args: { a: 1, b: 2 } },
        { name: 'u', args: {} },
      ]),
    ).toBeUndefined();
    expect(
      tracker.recordTurn([
        { name: 'u', args: {} },
        { name: 't', args: { b: 2, a: 1 } },
      ]),
    ).toContain('2 turns in a row');
    const off = new RepeatTracker(0);
    for (let i = 0; i < 10; i++) expect(off.recordTurn([{ name: 't', args: {} }])).toBeUndefined();
  });
});
