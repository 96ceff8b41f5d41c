import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { FINAL_ANSWER_TOOL, createFinalAnswerTool, finalAnswerOf, isFinalAnswerDetails } from '../../src/tools/final-answer.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ToolCall } from '../../src/model/types.js';

const ctx = { signal: new AbortController().signal, runId: 'run-1', idempotencyKey: 'k' };
const call = (rawArguments: string, name = FINAL_ANSWER_TOOL): ToolCall => ({
  type: 'tool_call',
  id: 'c1',
  name,
  arguments: {},
  rawArguments,
});

describe('createFinalAnswerTool', () => {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, population: { type: 'integer' } },
    required: ['city', 'population'],
  };

  it('records validated arguments and asks the loop to stop', async () => {
    const dispatcher = createDispatcher(new ToolRegistry([createFinalAnswerTool(schema)]));
    const outcome = await dispatcher.dispatch(call('{"city": "Oslo", "population": "709000"}'), ctx);
    expect(outcome.terminate).toBe(true);
    expect(outcome.errorCode).toBeUndefined();
    expect(outcome.result.content).toEqual([{ type: 'text', text: 'final answer recorded' }]);
    expect(outcome.result.details).toEqual({ kind: 'final_answer', output: { city: 'Oslo', population: 709000 } });
    expect(outcome.arguments).toEqual({ city: 'Oslo', population: 709000 });
    expect(finalAnswerOf(outcome.result)).toEqual({ city: 'Oslo', population: 709000 });
    expect(isFinalAnswerDetails(outcome.result.details)).toBe(true);
  });

  it('sends an invalid answer back as an error result, without terminating', async () => {
    const dispatcher = createDispatcher(new ToolRegistry([createFinalAnswerTool(schema)]));
    const outcome = await dispatcher.dispatch(call('{"city": "Oslo"}'), ctx);
    expect(outcome.terminate).toBe(false);
    expect(outcome.errorCode).toBe('invalid_arguments');
    expect(finalAnswerOf(outcome.result)).toBeUndefined();
  });

  it('accepts zod and TypeBox schemas and a custom name', () => {
    const fromZod = createFinalAnswerTool(z.object({ answer: z.string() }), { name: 'submit', description: 'Submit.' });
    expect(fromZod).toMatchObject({ name: 'submit', description: 'Submit.', risk: 'read' });
    expect(fromZod.parameters).toMatchObject({ type: 'object', required: ['answer'] });
    const fromTypeBox = createFinalAnswerTool(Type.Object({ answer: Type.String() }));
    expect(fromTypeBox.name).toBe('final_answer');
    expect(fromTypeBox.parameters).toMatchObject({ type: 'object', required: ['answer'] });
  });

  it('holds a zod answer to its refinements, and keeps the JSON the model sent', async () => {
    const answer = z.object({
      city: z.string().transform((s) => s.toUpperCase()),
      population: z.int().refine((n) => n > 0, 'must be positive'),
    });
    const dispatcher = createDispatcher(new ToolRegistry([createFinalAnswerTool(answer)]));
    const refused = await dispatcher.dispatch(call('{"city": "Oslo", "population": 0}'), ctx);
    expect(refused.terminate).toBe(false);
    expect(refused.errorCode).toBe('invalid_arguments');
    expect(refused.result.content).toEqual([
      {
        type: 'text',
        text: 'invalid arguments for tool "final_answer": parameter "population": must be positive. Fix it and call "final_answer" again.',
      },
    ]);
    const kept = await dispatcher.dispatch(call('{"city": "Oslo", "population": 709000}'), ctx);
    expect(kept.terminate).toBe(true);
    expect(finalAnswerOf(kept.result)).toEqual({ city: 'Oslo', population: 709000 });
  });

  it('refuses a schema that is not an object schema', () => {
    expect(() => createFinalAnswerTool({ type: 'string' })).toThrow(/of type "object"/);
    expect(() => createFinalAnswerTool('nope')).toThrow(/must be a JSON Schema, zod or TypeBox object schema/);
  });

  it('does not mistake other details for a final answer', () => {
    expect(isFinalAnswerDetails({ output: 1 })).toBe(false);
    expect(isFinalAnswerDetails(null)).toBe(false);
  });
});
