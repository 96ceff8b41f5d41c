import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { agentTool, type SubAgent } from '../../src/loop/agent-tool.js';
import type { RunEvent } from '../../src/events.js';
import { startScriptedServer, type ScriptRequest, type ScriptTurn, type ScriptedServer } from '../../src/testing/index.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { addTool, collect, gateTool } from './helpers.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const usage = { prompt_tokens: 100, completion_tokens: 20 };
const retry = { baseDelayMs: 5, maxDelayMs: 50, jitter: false };

/** One server for the whole tree: each agent has its own model id, and the script answers by it. */
async function tree(script: (request: ScriptRequest, turn: number) => ScriptTurn): Promise<ScriptedServer> {
  const server = await startScriptedServer({
    script: (request) => script(request, request.messages.filter((m) => m.role === 'assistant').length),
  });
  servers.push(server);
  return server;
}

const taskOf = (request: ScriptRequest): string => {
  const first = request.messages.find((m) => m.role === 'user');
  return first?.role === 'user' ? first.content : '';
};

describe('sub-agents (agentTool)', () => {
  it('a parent runs two children in parallel: each is a run of its own, its events reach the parent with depth, its usage counts in the parent', async () => {
    const server = await tree((request, turn) => {
      if (request.model === 'lead') {
        if (turn === 0)
          return {
            toolCalls: [
              { name: 'researcher', arguments: { task: 'find the facts' } },
              { name: 'reviewer', arguments: { task: 'check the draft' } },
            ],
            usage,
          };
        const results = request.messages.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? m.content : ''));
        return { text: `combined: ${results.join(' + ')}`, usage };
      }
      return { text: `${request.model} did "${taskOf(request).split('\n')[0]}"`, usage, delayMs: 30 };
    });
    const store = new MemoryRunStore();
    const child = (name: string) => new Agent({ name, model: server.model(name), store, retry });
    const researcher = child('researcher');
    const reviewer = child('reviewer');
    const lead = new Agent({
      name: 'lead',
      model: server.model('lead'),
      store,
      retry,
      tools: [
        agentTool(researcher, { name: 'researcher', description: 'Finds facts.' }),
        agentTool(reviewer, { name: 'reviewer', description: 'Reviews a draft.' }),
      ],
    });
    const { events, result } = await collect(lead.run('write the report'));
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer', agent: 'lead' });
    expect(result.text).toContain('researcher did "find the facts"');
    expect(result.text).toContain('reviewer did "check the draft"');
    // Each child is a stored run naming its parent and the call.
    const runs = await store.listRuns();
    const children = runs.filter((r) => r.parentRunId === result.runId);
    expect(children).toHaveLength(2);
    for (const child of children) {
      const log = await store.loadEvents(child.id);
      const started = log[0];
      expect(started?.type).toBe('run_started');
      if (started?.type !== 'run_started') throw new Error('no run_started');
      expect(started.parentRunId).toBe(result.runId);
      expect(started.depth).toBe(1);
      expect(['researcher', 'reviewer']).toContain(started.agent);
      // The child's input is its task plus the parent's, nothing of the parent's conversation.
      expect(started.input.content).toMatch(/^(find the facts|check the draft)\n\n\(This is part of a larger task: write the report\)$/);
      expect(started.history).toEqual([]);
      const calls = result.messages.flatMap((m) => (m.role === 'assistant' ? m.content.filter((c) => c.type === 'tool_call') : []));
      expect(calls.map((c) => (c.type === 'tool_call' ? c.id : ''))).toContain(started.parentToolCallId);
      // Nothing of a child is in the parent's own log.
    }
    const parentLog = await store.loadEvents(result.runId);
    expect(parentLog.every((e) => e.runId === result.runId && e.depth === undefined)).toBe(true);
    // The parent's listeners saw the children's events, with their run ids and depth 1.
    const childEvents = events.filter((e) => e.runId !== result.runId);
    expect(new Set(childEvents.map((e) => e.runId))).toEqual(new Set(children.map((c) => c.id)));
    expect(childEvents.every((e) => e.depth === 1)).toBe(true);
    expect(childEvents.filter((e) => e.type === 'run_finished')).toHaveLength(2);
    // The parent's totals hold its own two turns and the children's usage (3 turns at 120 tokens).
    expect(result.totals.usage.total).toBe(2 * 120 + 2 * 120);
    const finished = parentLog.filter((e): e is Extract<RunEvent, { type: 'tool_finished' }> => e.type === 'tool_finished');
    expect(finished.map((e) => e.usage?.total)).toEqual([120, 120]);
  });

  it('children run in parallel, as parallel tool calls do', async () => {
    const server = await tree((request, turn) => {
      if (request.model === 'lead')
        return turn === 0
          ? {
              toolCalls: [
                { name: 'a', arguments: { task: 'x' } },
                { name: 'b', arguments: { task: 'y' } },
              ],
              usage,
            }
          : { text: 'ok', usage };
      return turn === 0 ? { toolCalls: [{ name: 'meet', arguments: {} }], usage } : { text: 'met', usage };
    });
    let inside = 0;
    let release!: () => void;
    const both = new Promise<void>((r) => (release = r));
    const meet = defineTool({
      name: 'meet',
      description: 'Waits until both children are inside it.',
      parameters: { type: 'object', properties: {} },
      execute: async () => {
        if (++inside === 2) release();
        await both;
        return 'met';
      },
    });
    const child = (name: string) =>
      agentTool(new Agent({ name, model: server.model(name), retry, tools: [meet] }), { name, description: `Child ${name}.` });
    const lead = new Agent({ model: server.model('lead'), retry, tools: [child('a'), child('b')] });
    const result = await lead.run('go');
    expect(result).toMatchObject({ status: 'done', text: 'ok' });
    expect(inside).toBe(2);
  });

  it('a failing child returns an error result saying why, and the parent goes on', async () => {
    const server = await tree((request, turn) => {
      if (request.model === 'lead') {
        if (turn === 0) return { toolCalls: [{ name: 'helper', arguments: { task: 'help' } }], usage };
        const tool = request.messages.find((m) => m.role === 'tool');
        return { text: tool?.role === 'tool' ? `the helper failed: ${tool.content}` : 'no result seen', usage };
      }
      return { fault: { type: 'status', status: 401, body: { error: { message: 'bad key', type: 'invalid_request_error' } } } };
    });
    const helper = new Agent({ name: 'helper', model: server.model('helper'), retry });
    const lead = new Agent({ model: server.model('lead'), retry, tools: [agentTool(helper, { name: 'helper', description: 'Helps.' })] });
    const result = await lead.run('do it');
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer' });
    expect(result.text).toMatch(/^the helper failed: sub-agent "helper" \(run run_\w+\) failed \(fatal_error\): /);
  });

  it('a child stopped by its own limit returns an error result naming the limit', async () => {
    const server = await tree((request, turn) => {
      if (request.model === 'lead')
        return turn === 0 ? { toolCalls: [{ name: 'adder', arguments: { task: 'add forever' } }], usage } : { text: 'parent done', usage };
      return { toolCalls: [{ name: 'add', arguments: { a: turn, b: 1 } }], usage };
    });
    const adder = new Agent({ name: 'adder', model: server.model('adder'), retry, tools: [addTool], limits: { maxSteps: 2 } });
    const lead = new Agent({ model: server.model('lead'), retry, tools: [agentTool(adder, { name: 'adder', description: 'Adds.' })] });
    const { events, result } = await collect(lead.run('go'));
    expect(result).toMatchObject({ status: 'done', text: 'parent done' });
    const finished = events.find((e) => e.type === 'tool_finished' && e.runId === result.runId);
    expect(finished?.type === 'tool_finished' && finished.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/sub-agent "adder" .* stopped \(max_steps\)/) }],
    });
    const childEnd = events.find((e) => e.type === 'run_finished' && e.runId !== result.runId);
    expect(childEnd).toMatchObject({ status: 'stopped', reason: 'max_steps', depth: 1 });
  });

  it('the depth limit stops a recursive agent with a clear reason', async () => {
    const server = await tree((request, turn) => {
      const tool = request.messages.find((m) => m.role === 'tool');
      if (turn === 0) return { toolCalls: [{ name: 'delegate', arguments: { task: 'go deeper' } }], usage };
      return { text: tool?.role === 'tool' ? `deeper said: ${tool.content}` : 'nothing', usage };
    });
    // An agent that can hand work to itself.
    let self!: Agent;
    const proxy: SubAgent = {
      options: {},
      run: (input, options) => self.run(input, options),
      resume: (id, options) => self.resume(id, options),
    };
    self = new Agent({
      model: server.model('recursive'),
      retry,
      tools: [agentTool(proxy, { name: 'delegate', description: 'Hands work to a copy of itself.', maxDepth: 2 })],
    });
    const { events, result } = await collect(self.run('start'));
    expect(result.status).toBe('done');
    const depths = new Set(events.map((e) => e.depth ?? 0));
    expect(depths).toEqual(new Set([0, 1, 2]));
    // The run at depth 2 was refused a child at depth 3.
    const refused = events.find((e) => e.type === 'tool_finished' && e.depth === 2);
    expect(refused?.type === 'tool_finished' && refused.result).toMatchObject({
      isError: true,
      content: [
        {
          text: expect.stringContaining(
            'was not started (max_depth): it would run at depth 3 of the tree of runs, and at most 2 levels are allowed',
          ),
        },
      ],
    });
    expect(refused?.type === 'tool_finished' && refused.result.details).toMatchObject({ reason: 'max_depth', depth: 3, maxDepth: 2 });
  });

  it('the tree shares the parent’s cost budget: the child is capped by what is left, and the tree stops at the parent’s limit', async () => {
    // Every answer costs $1 (100k input tokens at $10 per million).
    const costly = { prompt_tokens: 100_000, completion_tokens: 0 };
    const server = await tree((request, turn) => {
      if (request.model === 'lead') return { toolCalls: [{ name: 'spender', arguments: { task: `spend ${turn}` } }], usage: costly };
      return { toolCalls: [{ name: 'add', arguments: { a: turn, b: 1 } }], usage: costly };
    });
    const pricing = { input: 10, output: 0 };
    const spender = new Agent({
      name: 'spender',
      model: server.model('spender'),
      retry,
      tools: [addTool],
      modelInfo: { pricing },
      limits: { maxSteps: 50 },
    });
    const lead = new Agent({
      model: server.model('lead'),
      retry,
      modelInfo: { pricing },
      limits: { maxCostUsd: 5, maxSteps: 50 },
      tools: [agentTool(spender, { name: 'spender', description: 'Spends.' })],
    });
    const { events, result } = await collect(lead.run('spend it all'));
    expect(result).toMatchObject({ status: 'stopped', reason: 'budget' });
    // The parent spent $1, leaving $4: the child stops at its capped budget after 4 answers.
    const child = events.find((e) => e.type === 'run_started' && e.depth === 1);
    expect(child?.type === 'run_started' && child.limits.maxCostUsd).toBeCloseTo(4, 10);
    const childEnd = events.find((e) => e.type === 'run_finished' && e.depth === 1);
    expect(childEnd).toMatchObject({ status: 'stopped', reason: 'budget' });
    expect(childEnd?.type === 'run_finished' && childEnd.result.totals.usage.cost?.total).toBeCloseTo(4, 10);
    // The parent's total is its own $1 and the child's $4: the tree stopped at $5, one child only.
    expect(result.totals.usage.cost?.total).toBeCloseTo(5, 10);
    expect(events.filter((e) => e.type === 'run_started')).toHaveLength(2);
  });

  it('a child with an output schema answers with its validated output; the parent’s remaining tokens and time cap the child', async () => {
    const server = await tree((request, turn) => {
      if (request.model === 'lead') {
        if (turn === 0) return { toolCalls: [{ name: 'grader', arguments: { task: 'grade it' } }], usage };
        const tool = request.messages.find((m) => m.role === 'tool');
        return { text: tool?.role === 'tool' ? tool.content : '', usage };
      }
      return { toolCalls: [{ name: 'final_answer', arguments: { grade: 'A', score: '9' } }], usage };
    });
    const grader = new Agent({
      name: 'grader',
      model: server.model('grader'),
      retry,
      outputSchema: { type: 'object', properties: { grade: { type: 'string' }, score: { type: 'integer' } }, required: ['grade', 'score'] },
      limits: { maxTokens: 100_000 },
    });
    const lead = new Agent({
      model: server.model('lead'),
      retry,
      limits: { maxTokens: 1000, timeoutMs: 60_000 },
      tools: [agentTool(grader, { name: 'grader', description: 'Grades.' })],
    });
    const { events, result } = await collect(lead.run('grade the essay'));
    // The score came as a string and was coerced by the child's schema.
    expect(result).toMatchObject({ status: 'done', text: '{"grade":"A","score":9}' });
    const child = events.find((e) => e.type === 'run_started' && e.depth === 1);
    if (child?.type !== 'run_started') throw new Error('no child run');
    // The parent had spent 120 of its 1000 tokens when it called the child.
    expect(child.limits.maxTokens).toBe(880);
    expect(child.limits.timeoutMs).toBeGreaterThan(50_000);
    expect(child.limits.timeoutMs).toBeLessThanOrEqual(60_000);
  });

  it('aborting the parent aborts its child', async () => {
    const gate = gateTool('wait');
    const server = await tree((request, turn) => {
      if (request.model === 'lead')
        return turn === 0 ? { toolCalls: [{ name: 'waiter', arguments: { task: 'wait' } }], usage } : { text: 'never', usage };
      return turn === 0 ? { toolCalls: [{ name: 'wait', arguments: {} }], usage } : { text: 'released', usage };
    });
    const waiter = new Agent({ name: 'waiter', model: server.model('waiter'), retry, tools: [gate.tool] });
    const lead = new Agent({ model: server.model('lead'), retry, tools: [agentTool(waiter, { name: 'waiter', description: 'Waits.' })] });
    const handle = lead.run('go');
    const events: RunEvent[] = [];
    handle.subscribe((e) => events.push(e));
    await gate.started;
    handle.abort('stop the tree');
    const result = await handle;
    expect(result).toMatchObject({ status: 'aborted', reason: 'aborted' });
    expect(events.find((e) => e.type === 'run_finished' && e.depth === 1)).toMatchObject({ status: 'aborted', reason: 'aborted' });
  });
});
