import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { ToolCall } from '../../src/model/types.js';
import { defineTool } from '../../src/tools/define.js';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { compileValidator } from '../../src/tools/validate.js';
import type { DispatchOutcome, Tool } from '../../src/tools/types.js';

const ctx = { signal: new AbortController().signal, runId: 'run-1', idempotencyKey: 'run-1:0:0' };
const call = (name: string, rawArguments: string): ToolCall => ({ type: 'tool_call', id: 'c1', name, arguments: {}, rawArguments });
const textOf = (outcome: DispatchOutcome): string => outcome.result.content.map((p) => ('text' in p ? p.text : '')).join('');

async function dispatchTo(tool: Tool, rawArguments: string): Promise<DispatchOutcome> {
  return createDispatcher(new ToolRegistry([tool])).dispatch(call(tool.name, rawArguments), ctx);
}

describe('zod schemas run on the arguments', () => {
  it('gives execute what zod makes of them: transforms applied, defaults filled', async () => {
    let seen: unknown;
    const tool = defineTool({
      name: 'book',
      description: 'Book a stay.',
      parameters: z.object({ city: z.string().transform((s) => s.trim().toUpperCase()), nights: z.int().default(2) }),
      execute: (args) => {
        seen = args;
        return 'booked';
      },
    });
    const outcome = await dispatchTo(tool, '{"city":"  paris "}');
    expect(outcome.result.isError).toBe(false);
    expect(seen).toEqual({ city: 'PARIS', nights: 2 });
    // What the log and the approvals see stays the JSON the model sent, checked and coerced.
    expect(outcome.arguments).toEqual({ city: '  paris ', nights: 2 });
  });

  it("answers a refinement's issue as invalid arguments naming the parameter; the tool does not run", async () => {
    let ran = false;
    const tool = defineTool({
      name: 'visit',
      description: 'Open a page.',
      parameters: z.object({
        pages: z.array(z.object({ url: z.string().refine((u) => u.startsWith('https://'), 'must start with https://') })),
      }),
      execute: () => {
        ran = true;
        return 'ok';
      },
    });
    const outcome = await dispatchTo(tool, '{"pages":[{"url":"https://a.example"},{"url":"ftp://b"}]}');
    expect(ran).toBe(false);
    expect(outcome.errorCode).toBe('invalid_arguments');
    expect(textOf(outcome)).toBe(
      'invalid arguments for tool "visit": parameter "pages[1].url": must start with https://. Fix it and call "visit" again.',
    );
  });

  it('lists several issues, and one about the whole object without a parameter name', async () => {
    const tool = defineTool({
      name: 'range',
      description: 'A range.',
      parameters: z
        .object({ from: z.number().refine((n) => n >= 0, 'must not be negative'), to: z.number() })
        .refine((r) => r.to > r.from, 'to must be greater than from'),
      execute: () => 'ok',
    });
    const one = await dispatchTo(tool, '{"from":5,"to":1}');
    expect(textOf(one)).toContain('the arguments: to must be greater than from');
    const two = await dispatchTo(tool, '{"from":-1,"to":-2}');
    expect(two.errorCode).toBe('invalid_arguments');
    expect(textOf(two)).toMatch(/^invalid arguments for tool "range":\n- parameter "from": must not be negative\n/);
  });

  it('waits for an async refinement', async () => {
    const taken = new Set(['alice']);
    const tool = defineTool({
      name: 'signup',
      description: 'Create a user.',
      parameters: z.object({ user: z.string().refine(async (u) => !taken.has(u), 'is taken; choose another name') }),
      execute: ({ user }) => `created ${user}`,
    });
    expect(textOf(await dispatchTo(tool, '{"user":"alice"}'))).toContain('parameter "user": is taken; choose another name');
    expect(textOf(await dispatchTo(tool, '{"user":"bob"}'))).toBe('created bob');
  });

  it('reports a refinement that throws as a failure of the tool, not of the arguments', async () => {
    const tool = defineTool({
      name: 'check',
      description: 'd',
      parameters: z.object({
        id: z.string().refine(() => {
          throw new Error('lookup service down');
        }),
      }),
      execute: () => 'ok',
    });
    const outcome = await dispatchTo(tool, '{"id":"x"}');
    expect(outcome.errorCode).toBe('tool_failed');
    expect(textOf(outcome)).toContain('lookup service down');
  });

  it('keeps a synchronous zod tool on the promise-free path', async () => {
    const tool = defineTool({ name: 'sq', description: 'Square.', parameters: z.object({ n: z.number() }), execute: ({ n }) => n * n });
    await compileValidator(tool.parameters);
    const outcome = createDispatcher(new ToolRegistry([tool])).dispatchNow(call('sq', '{"n":"3"}'), ctx);
    expect(outcome).not.toBeInstanceOf(Promise);
    expect(textOf(outcome as DispatchOutcome)).toBe('9');
  });
});
