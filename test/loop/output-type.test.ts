/** `result.output` is typed from the agent's `outputSchema` (checked by `tsc` over the tests). */
import { Type } from '@sinclair/typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';
import { Agent } from '../../src/loop/agent.js';
import { jsonSchema } from '../../src/tools/define.js';

describe('the type of result.output', () => {
  it('follows the output schema: zod (its input, as the answer is kept), TypeBox, jsonSchema<T>, or unknown without one', () => {
    // Never called: the agents below would need a model. The types are what is tested.
    const types = async (): Promise<void> => {
      const fromZod = new Agent({ model: 'openai/x', outputSchema: z.object({ city: z.string(), population: z.int().default(0) }) });
      expectTypeOf((await fromZod.run('q')).output).toEqualTypeOf<{ city: string; population?: number | undefined } | undefined>();
      const fromTypeBox = new Agent({ model: 'openai/x', outputSchema: Type.Object({ ok: Type.Boolean() }) });
      expectTypeOf((await fromTypeBox.run('q').result).output).toEqualTypeOf<{ ok: boolean } | undefined>();
      const fromJson = new Agent({
        model: 'openai/x',
        outputSchema: jsonSchema<{ answer: number }>({ type: 'object', properties: { answer: { type: 'number' } } }),
      });
      expectTypeOf((await fromJson.resume('run_1')).output).toEqualTypeOf<{ answer: number } | undefined>();
      const plain = new Agent({ model: 'openai/x', outputSchema: { type: 'object', properties: {} } });
      expectTypeOf((await plain.run('q')).output).toEqualTypeOf<Record<string, unknown> | undefined>();
      const none = new Agent({ model: 'openai/x' });
      expectTypeOf((await none.run('q')).output).toEqualTypeOf<unknown>();
    };
    expect(typeof types).toBe('function');
  });
});
