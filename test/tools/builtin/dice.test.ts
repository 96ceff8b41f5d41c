import { describe, expect, it } from 'vitest';
import { createDiceTool } from '../../../src/tools/builtin/dice.js';
import { createDispatcher } from '../../../src/tools/dispatch.js';
import { ToolRegistry } from '../../../src/tools/registry.js';

const dispatcher = createDispatcher(new ToolRegistry([createDiceTool()]));
const ctx = { signal: new AbortController().signal, runId: 'r', idempotencyKey: 'k' };
const roll = (rawArguments: string) =>
  dispatcher.dispatch({ type: 'tool_call', id: 'c', name: 'roll_dice', arguments: {}, rawArguments }, ctx);

interface DiceDetails {
  sides: number;
  count: number;
  rolls: number[];
  sum: number;
}

describe('roll_dice', () => {
  it('rolls one six-sided die by default', async () => {
    const outcome = await roll('{}');
    const details = outcome.result.details as DiceDetails;
    expect(details).toMatchObject({ sides: 6, count: 1 });
    expect(details.rolls).toHaveLength(1);
    expect(details.rolls[0]).toBeGreaterThanOrEqual(1);
    expect(details.rolls[0]).toBeLessThanOrEqual(6);
    expect(outcome.result.content).toEqual([{ type: 'text', text: `Rolled a d6: ${details.sum}` }]);
  });

  it('keeps every roll in range and sums them', async () => {
    const outcome = await roll('{"sides": 4, "count": 100}');
    const details = outcome.result.details as DiceDetails;
    expect(details.rolls).toHaveLength(100);
    for (const value of details.rolls) {
      expect(Number.isInteger(value)).toBe(true);
      expect(value).toBeGreaterThanOrEqual(1);
      expect(value).toBeLessThanOrEqual(4);
    }
    expect(details.sum).toBe(details.rolls.reduce((a, b) => a + b, 0));
    expect((outcome.result.content[0] as { text: string }).text).toMatch(/^Rolled 100d4: (\d, ){99}\d \(sum \d+\)$/);
  });

  it('a one-sided die always shows 1 (coerced from a string)', async () => {
    const outcome = await roll('{"sides": "1", "count": 3}');
    expect((outcome.result.details as DiceDetails).rolls).toEqual([1, 1, 1]);
  });

  it.each([
    ['{"sides": 0}', 'parameter "sides" must be >= 1, got 0'],
    ['{"count": 101}', 'parameter "count" must be <= 100, got 101'],
    ['{"count": 0}', 'parameter "count" must be >= 1, got 0'],
    ['{"sides": 2.5}', 'parameter "sides" expects an integer, got the number 2.5'],
  ])('refuses %s', async (args, message) => {
    const outcome = await roll(args);
    expect(outcome.errorCode).toBe('invalid_arguments');
    expect((outcome.result.content[0] as { text: string }).text).toContain(message);
  });
});
