/**
 * `roll_dice`: fair random numbers, which models cannot produce themselves. Uses
 * `crypto.randomInt` (uniform, no modulo bias).
 */
import { randomInt } from 'node:crypto';
import { defineTool } from '../define.js';
import type { Tool } from '../types.js';

/** Largest die offered; `randomInt` itself stops at 2^48. */
const MAX_SIDES = 1_000_000;
const MAX_COUNT = 100;

/** Creates the `roll_dice` tool. */
export function createDiceTool(): Tool {
  return defineTool({
    name: 'roll_dice',
    description:
      'Roll one or more fair dice and get each roll and their sum. Use it for any random choice or dice game; ' +
      'do not invent random numbers yourself.',
    parameters: {
      type: 'object',
      properties: {
        sides: { type: 'integer', minimum: 1, maximum: MAX_SIDES, default: 6, description: 'Faces per die.' },
        count: { type: 'integer', minimum: 1, maximum: MAX_COUNT, default: 1, description: 'How many dice.' },
      },
      additionalProperties: false,
    },
    risk: 'read',
    effect: 'pure',
    execute: (args) => {
      // Validation (with defaults) has run, so both are integers in range.
      const sides = Number(args.sides);
      const count = Number(args.count);
      const rolls = Array.from({ length: count }, () => randomInt(1, sides + 1));
      const sum = rolls.reduce((a, b) => a + b, 0);
      const text = count === 1 ? `Rolled a d${sides}: ${sum}` : `Rolled ${count}d${sides}: ${rolls.join(', ')} (sum ${sum})`;
      return { content: text, details: { sides, count, rolls, sum } };
    },
  });
}
