/**
 * The seed tools: small, safe (risk `read`) and useful for demos and smoke tests.
 */
import { createCalculateTool } from './calculate.js';
import { createDiceTool } from './dice.js';
import { createCurrentTimeTool } from './time.js';
import type { Tool } from '../types.js';

/**
 * Fresh instances of the seed tools: `calculate`, `get_current_time`, `roll_dice`.
 *
 * @example
 * const agent = new Agent({ model: 'openai/gpt-4o-mini', tools: seedTools() });
 */
export function seedTools(): Tool[] {
  return [createCalculateTool(), createCurrentTimeTool(), createDiceTool()];
}
