import { describe, expect, it } from 'vitest';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { defineTool } from '../../src/tools/define.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { compileValidator } from '../../src/tools/validate.js';
import type { ToolCall } from '../../src/model/types.js';

const ctx = () => ({ signal: new AbortController().signal, runId: 'run_1', idempotencyKey: 'run_1:0:0' });
const call = (name: string, rawArguments: string): ToolCall => ({ type: 'tool_call', id: 'call_1', name, arguments: {}, rawArguments });

describe('dispatch outcomes carry their duration on every path', () => {
  it('a synchronous tool with a compiled schema is answered synchronously, timed', async () => {
    const add = defineTool({
      name: 'add',
      description: 'Add.',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      execute: ({ a, b }) => String((a as number) + (b as number)),
    });
    await compileValidator(add.parameters);
    const outcome = createDispatcher(new ToolRegistry([add])).dispatchNow(call('add', '{"a": "2", "b": 3}'), ctx());
    expect(outcome).not.toBeInstanceOf(Promise);
    expect(outcome).toMatchObject({ result: { content: [{ type: 'text', text: '5' }], isError: false }, arguments: { a: 2, b: 3 } });
    expect(typeof (outcome as { durationMs: number }).durationMs).toBe('number');
  });

  it('an asynchronous tool is answered with a promise of the timed outcome', async () => {
    const later = defineTool({
      name: 'later',
      description: 'Later.',
      parameters: { type: 'object', properties: {} },
      execute: async () => 'done',
    });
    await compileValidator(later.parameters);
    const pending = createDispatcher(new ToolRegistry([later])).dispatchNow(call('later', '{}'), ctx());
    expect(pending).toBeInstanceOf(Promise);
    const outcome = await pending;
    expect(outcome.result.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('a lookup that throws becomes an internal error result naming the tool, never a throw', () => {
    const broken = {
      get: () => {
        throw new Error('registry gone');
      },
      names: () => [],
    };
    const outcome = createDispatcher(broken).dispatchNow(call('add', '{}'), ctx());
    expect(outcome).toMatchObject({ errorCode: 'internal', result: { isError: true, toolName: 'add', toolCallId: 'call_1' } });
    expect(JSON.stringify((outcome as { result: unknown }).result)).toContain('tool \\"add\\" could not be run: registry gone');
    expect(typeof (outcome as { durationMs: number }).durationMs).toBe('number');
  });
});
