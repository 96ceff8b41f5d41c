// limits.finalAnswerOnStop: a run a limit stops (max_steps, budget, timeout, no_progress)
// makes one last request with no tools and ends with its answer (or the output schema's
// output), the stop reason still the limit's; never after an abort or past the budget.
import { describe, expect, it } from 'vitest';
import type { ScriptRequest, ScriptTurn } from '../../src/testing/index.js';
import type { AgentOptions } from '../../src/loop/options.js';
import { messagesFromEvents } from '../../src/loop/fold.js';
import { addTool, collect, gateTool, setup } from './helpers.js';

const usage = { prompt_tokens: 100, completion_tokens: 20 };
const SCHEMA = { type: 'object', properties: { sum: { type: 'integer' } }, required: ['sum'] } as const;
type Limit = 'max_steps' | 'no_progress' | 'timeout' | 'budget';

/** A model that keeps working while it has tools, and answers when it has none. */
function worker(limit: Limit, withSchema: boolean) {
  const seen: ScriptRequest[] = [];
  let n = 0;
  const script = (request: ScriptRequest): ScriptTurn => {
    seen.push(request);
    if (request.toolNames.length === 0) return { text: withSchema ? "{'sum': 3}" : 'best answer so far: 3', usage };
    n++;
    if (limit === 'timeout') return { toolCalls: [{ name: 'wait', arguments: {} }], usage };
    // no_progress: the same call every turn; the others move on.
    return { toolCalls: [{ name: 'add', arguments: limit === 'no_progress' ? { a: 1, b: 2 } : { a: n, b: 1 } }], usage };
  };
  return { seen, script };
}

function optionsFor(limit: Limit, withSchema: boolean, extra: Partial<AgentOptions['limits']> = {}): Omit<AgentOptions, 'model'> {
  const limits = { max_steps: { maxSteps: 2 }, no_progress: {}, timeout: { timeoutMs: 1000 }, budget: { maxTokens: 1000 } }[limit];
  return {
    tools: limit === 'timeout' ? [gateTool().tool] : [addTool],
    limits: { ...limits, finalAnswerOnStop: true, ...extra },
    ...(limit === 'budget' ? { modelOptions: { maxTokens: 50 } } : {}),
    ...(withSchema ? { outputSchema: SCHEMA } : {}),
  };
}

describe('an answer at the limit', () => {
  for (const limit of ['max_steps', 'no_progress', 'timeout', 'budget'] as const) {
    for (const withSchema of [false, true]) {
      it(`${limit}${withSchema ? ', with an output schema' : ''}: one last request with no tools, its answer in the result`, async () => {
        const { seen, script } = worker(limit, withSchema);
        const { agent } = await setup(script, optionsFor(limit, withSchema));
        const { events, result } = await collect(agent.run('add things up'));
        expect(result).toMatchObject({ status: 'stopped', reason: limit });
        const last = seen.at(-1)!;
        expect(last.toolNames).toEqual([]);
        expect(last.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('no tools can be called any more') });
        expect(seen.slice(0, -1).every((r) => r.toolNames.length > 0)).toBe(true);
        if (withSchema) {
          expect(last.messages.at(-1)!.content).toContain(JSON.stringify(SCHEMA.properties));
          expect(result.output).toEqual({ sum: 3 });
        } else {
          expect(result.text).toBe('best answer so far: 3');
          expect(result).not.toHaveProperty('output');
        }
        // Its cost counts: every request, the last one too, reported 120 tokens.
        expect(result.totals.usage.total).toBe(120 * seen.length);
        if (limit === 'budget') {
          expect(result.totals.usage.total).toBeLessThanOrEqual(1000);
          expect(last.body.max_tokens).toBe(50);
        }
        expect(result.messages.at(-1)).toMatchObject({ role: 'assistant' });
        const finished = events.at(-1)!;
        expect(finished).toMatchObject({ type: 'run_finished', reason: limit });
        // The log folds to the same history: the instruction and the answer are in it.
        expect(messagesFromEvents(events)).toEqual(result.messages);
      });
    }
  }

  it('is off by default in the library: the run stops at the limit with no last request', async () => {
    const { seen, script } = worker('max_steps', false);
    const { agent } = await setup(script, { tools: [addTool], limits: { maxSteps: 2 } });
    const result = await agent.run('add things up');
    expect(result.reason).toBe('max_steps');
    expect(seen).toHaveLength(2);
    expect(result.text).toBe('');
  });

  it('drops a tool call the model makes in that answer: not run, not in the history or the log', async () => {
    let n = 0;
    const { agent } = await setup(
      (request) =>
        request.toolNames.length === 0
          ? { text: 'almost done', toolCalls: [{ name: 'add', arguments: { a: 9, b: 9 } }], usage }
          : { toolCalls: [{ name: 'add', arguments: { a: ++n, b: 1 } }], usage },
      { tools: [addTool], limits: { maxSteps: 1, finalAnswerOnStop: true } },
    );
    const { events, result } = await collect(agent.run('add'));
    expect(result).toMatchObject({ reason: 'max_steps', text: 'almost done' });
    expect(result.totals.toolCalls).toBe(1);
    expect(result.messages.at(-1)).toMatchObject({
      role: 'assistant',
      stopReason: 'stop',
      content: [{ type: 'text', text: 'almost done' }],
    });
    expect(messagesFromEvents(events)).toEqual(result.messages);
  });

  it('never runs after an abort', async () => {
    const { seen, script } = worker('timeout', false);
    const gate = gateTool();
    const { agent } = await setup(script, { tools: [gate.tool], limits: { finalAnswerOnStop: true } });
    const handle = agent.run('wait');
    await gate.started;
    handle.abort();
    const result = await handle;
    expect(result.reason).toBe('aborted');
    expect(seen).toHaveLength(1);
  });

  it('never runs past the budget: a turn that used it all up leaves no last request', async () => {
    const seen: ScriptRequest[] = [];
    const { agent } = await setup(
      (request) => (
        seen.push(request),
        { toolCalls: [{ name: 'add', arguments: { a: 1, b: seen.length } }], usage: { prompt_tokens: 900, completion_tokens: 200 } }
      ),
      { tools: [addTool], limits: { maxTokens: 1000, finalAnswerOnStop: true } },
    );
    const result = await agent.run('add');
    expect(result.reason).toBe('budget');
    expect(seen).toHaveLength(1);
    expect(result.totals.usage.total).toBe(1100);
  });

  it('never runs past the budget after another limit either', async () => {
    const seen: ScriptRequest[] = [];
    const { agent } = await setup(
      (request) => (
        seen.push(request),
        { toolCalls: [{ name: 'add', arguments: { a: 1, b: seen.length } }], usage: { prompt_tokens: 100, completion_tokens: 20 } }
      ),
      // Room for the first turn, not for an answer of up to 2048 tokens after it.
      { tools: [addTool], limits: { maxSteps: 1, maxTokens: 1000, finalAnswerOnStop: true } },
    );
    const result = await agent.run('add');
    expect(seen).toHaveLength(1);
    expect(['max_steps', 'budget']).toContain(result.reason);
  });

  it('refuses a limits.finalAnswerOnStop that is not a boolean', async () => {
    await expect(setup([{ text: 'x' }], { limits: { finalAnswerOnStop: 'yes' as unknown as boolean } })).rejects.toThrow(
      /limits\.finalAnswerOnStop.*true or false/,
    );
  });
});
