import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/define.js';
import { addTool, gateTool, setup } from './helpers.js';

const call = (name: string, args: Record<string, unknown> | string, id?: string) => ({
  toolCalls: [{ name, arguments: args, ...(id ? { id } : {}) }],
});

describe('stop reasons', () => {
  it('final_answer: a text-only answer ends the run', async () => {
    const { agent } = await setup([{ text: 'Hello there.' }]);
    const result = await agent.run('hi');
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer', text: 'Hello there.' });
    expect(result.totals.steps).toBe(1);
    expect(result.totals.usage.total).toBeGreaterThan(0);
  });

  it('a tool turn then a final answer, with the result sent back tied to its id', async () => {
    const { agent, server } = await setup([call('add', { a: 2, b: 40 }), { text: 'It is 42.' }], { tools: [addTool] });
    const result = await agent.run('2+40?');
    expect(result.reason).toBe('final_answer');
    expect(result.totals).toMatchObject({ steps: 2, toolCalls: 1 });
    const second = server.requests[1]!;
    const toolMessage = second.messages.at(-1)!;
    expect(toolMessage).toMatchObject({ role: 'tool', content: '42' });
    const assistant = second.messages.at(-2) as { tool_calls: Array<{ id: string }> };
    expect(toolMessage.tool_call_id).toBe(assistant.tool_calls[0]!.id);
  });

  it('terminate: every tool of the turn returned terminate, so no extra model call', async () => {
    const stopper = defineTool({
      name: 'stop_here',
      description: 'Ends the task.',
      parameters: { type: 'object', properties: {} },
      execute: () => ({ content: 'ok', terminate: true }),
    });
    const { agent, server } = await setup([call('stop_here', {}), { text: 'never asked' }], { tools: [stopper] });
    const result = await agent.run('go');
    expect(result).toMatchObject({ status: 'done', reason: 'terminate' });
    expect(server.requests).toHaveLength(1);
  });

  it('done_signal: the final-answer tool with arguments valid against the output schema', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] };
    const { agent, server } = await setup([call('final_answer', { answer: 'forty-two' }), call('final_answer', { answer: '42' })], {
      outputSchema: schema,
    });
    const result = await agent.run('answer?');
    expect(result).toMatchObject({ status: 'done', reason: 'done_signal', output: { answer: 42 } });
    // The invalid first attempt went back to the model naming the parameter.
    expect(String(server.requests[1]!.messages.at(-1)!.content)).toMatch(/answer/);
  });

  it('max_steps: a model that never stops calling tools is stopped after N model calls', async () => {
    let n = 0;
    const { agent } = await setup(() => call('add', { a: n, b: n++ }), { tools: [addTool], limits: { maxSteps: 3 } });
    const result = await agent.run('loop');
    expect(result).toMatchObject({ status: 'stopped', reason: 'max_steps' });
    expect(result.totals.steps).toBe(3);
    expect(result.messages.at(-1)!.role).toBe('tool');
  });

  it('timeout: the whole run is limited in time, mid-tool', async () => {
    const gate = gateTool();
    const { agent } = await setup([call('wait', {})], { tools: [gate.tool], limits: { timeoutMs: 300 } });
    const result = await agent.run('wait');
    expect(result).toMatchObject({ status: 'stopped', reason: 'timeout' });
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('no_progress: the same tool with canonically equal arguments 3 times in a row', async () => {
    const script = [call('add', { a: 1, b: 2 }), call('add', { b: 2, a: 1 }), call('add', '{"a":1,"b":2}'), { text: 'x' }];
    const { agent } = await setup(script, { tools: [addTool] });
    const result = await agent.run('repeat');
    expect(result).toMatchObject({ status: 'stopped', reason: 'no_progress' });
    expect(result.totals.steps).toBe(3);
  });

  it('tool_errors: 5 failing results in a row trip the breaker', async () => {
    let n = 0;
    const { agent } = await setup(() => call('nope', { n: n++ }), { tools: [addTool] });
    const result = await agent.run('fail');
    expect(result).toMatchObject({ status: 'stopped', reason: 'tool_errors' });
    expect(result.totals.toolCalls).toBe(5);
  });

  it('tool_errors: stopOnToolError stops at the first failing result', async () => {
    const { agent } = await setup([call('add', { a: 'x' }), { text: 'no' }], { tools: [addTool], stopOnToolError: true });
    const result = await agent.run('fail');
    expect(result.reason).toBe('tool_errors');
    expect(result.totals.toolCalls).toBe(1);
  });

  it('budget: the run stops once its total tokens reach the limit', async () => {
    let n = 0;
    const { agent } = await setup(
      () => ({ ...call('add', { a: n, b: n++ }), usage: { prompt_tokens: 60, completion_tokens: 40, total_tokens: 100 } }),
      {
        tools: [addTool],
        limits: { maxTokens: 250 },
      },
    );
    const result = await agent.run('spend');
    expect(result).toMatchObject({ status: 'stopped', reason: 'budget' });
    expect(result.totals.usage.total).toBe(300);
  });

  it('hook: shouldStopAfterTurn ends the run with its reason kept', async () => {
    let n = 0;
    const { agent } = await setup(() => call('add', { a: n, b: n++ }), {
      tools: [addTool],
      hooks: { shouldStopAfterTurn: (info) => (info.step === 2 ? 'enough after two turns' : false) },
    });
    const result = await agent.run('go');
    expect(result).toMatchObject({ status: 'stopped', reason: 'hook', detail: 'enough after two turns' });
    expect(result.totals.steps).toBe(2);
  });

  it('fatal_error: a non-retryable provider error fails the run with its history intact', async () => {
    const { agent, server } = await setup([call('add', { a: 1, b: 2 }), { fault: { type: 'status', status: 401 } }], { tools: [addTool] });
    const result = await agent.run('go');
    expect(result).toMatchObject({ status: 'failed', reason: 'fatal_error', error: { code: 'auth', kind: 'fatal' } });
    expect(server.requests).toHaveLength(2);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });
});
