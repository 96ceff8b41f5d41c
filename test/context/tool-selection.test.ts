import { describe, expect, it } from 'vitest';
import { createSearchToolsTool, createToolSelector, SEARCH_TOOLS } from '../../src/context/tool-selection.js';
import { createToolOutputTool } from '../../src/context/tool-output.js';
import type { RunEvent } from '../../src/events.js';
import type { ToolCall, ToolSpec } from '../../src/model/types.js';
import { streamModel } from '../../src/model/providers/index.js';
import { toolCall, type ScriptFunction } from '../../src/testing/index.js';
import { defineTool } from '../../src/tools/define.js';
import { createDispatcher } from '../../src/tools/dispatch.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/types.js';
import { collect, setup as setupAgent } from '../loop/helpers.js';

const spec = (name: string, description = `Does ${name}.`, properties: Record<string, unknown> = {}): ToolSpec => ({
  name,
  description,
  parameters: { type: 'object', properties },
});
const names = (specs: readonly ToolSpec[]): string[] => specs.map((s) => s.name);
const empty = { recentlyUsed: [], pinned: new Set<string>() };

/** 40 MCP-like tools from three servers, plus `search_tools` registered last. */
function manyTools(): ToolSpec[] {
  const specs: ToolSpec[] = [];
  const servers = {
    github: ['create_issue', 'list_issues', 'get_pull_request', 'merge_pull_request', 'search_code', 'create_branch', 'list_commits'],
    postgres: ['query', 'list_tables', 'describe_table', 'explain_query'],
    slack: ['post_message', 'list_channels', 'read_thread', 'add_reaction'],
  };
  for (const [server, tools] of Object.entries(servers))
    for (const tool of tools) specs.push(spec(`${server}__${tool}`, `${tool.replaceAll('_', ' ')} on ${server}.`));
  for (let i = specs.length; i < 40; i++) specs.push(spec(`misc_${i}`, `Miscellaneous helper number ${i}.`));
  specs.push(spec(SEARCH_TOOLS, 'Find more tools.'));
  return specs;
}

describe('createToolSelector: select', () => {
  it('sends every tool, as the same array, while there are at most maxTools', () => {
    const all = [spec('a'), spec('b'), spec('c')];
    const selector = createToolSelector({ maxTools: 3 });
    expect(selector.select(all, empty)).toBe(all);
    expect(selector.forRun('r').select(all)).toBe(all);
  });

  it('over maxTools: search_tools, always, pinned, skills, recent — then the first registered — in registration order', () => {
    const all = manyTools();
    const selector = createToolSelector({ maxTools: 8, always: ['slack__post_message'] });
    const picked = selector.select(all, {
      pinned: new Set(['postgres__query']),
      activeSkillTools: new Set(['github__merge_pull_request']),
      recentlyUsed: ['misc_30', 'slack__read_thread'],
    });
    expect(picked).toHaveLength(8);
    // Chosen ones, plus fill from the top of the registry, all in registration order.
    expect(names(picked)).toEqual([
      'github__create_issue',
      'github__list_issues',
      'github__merge_pull_request',
      'postgres__query',
      'slack__post_message',
      'slack__read_thread',
      'misc_30',
      SEARCH_TOOLS,
    ]);
  });

  it('when chosen tools exceed the budget, the latest pins and most recent uses win', () => {
    const all = manyTools();
    const selector = createToolSelector({ maxTools: 4, fill: false });
    const picked = selector.select(all, {
      pinned: new Set(['misc_20', 'misc_21', 'misc_22']),
      recentlyUsed: ['misc_30', 'misc_31'],
    });
    expect(names(picked)).toEqual(['misc_20', 'misc_21', 'misc_22', SEARCH_TOOLS]);
    const fewerPins = selector.select(all, { pinned: new Set(['misc_20']), recentlyUsed: ['misc_30', 'misc_31', 'misc_32'] });
    expect(names(fewerPins)).toEqual(['misc_20', 'misc_31', 'misc_32', SEARCH_TOOLS]);
  });

  it('with fill off sends only what was chosen, and names the tools left out in search_tools', () => {
    const all = manyTools();
    const selector = createToolSelector({ maxTools: 10, fill: false });
    const picked = selector.select(all, { pinned: new Set(['github__create_issue']), recentlyUsed: [] });
    expect(names(picked)).toEqual(['github__create_issue', SEARCH_TOOLS]);
    const search = picked.find((s) => s.name === SEARCH_TOOLS)!;
    expect(search.description).toMatch(
      /^Find more tools\.\n\nTools available but not shown \(39\): github__list_issues, github__get_pull_request, /,
    );
    expect(search.description).not.toContain('github__create_issue,');
    // The registered spec itself is not changed.
    expect(all.at(-1)!.description).toBe('Find more tools.');
  });

  it('always includes read_tool_output when it is registered', () => {
    const all = [...manyTools(), spec('read_tool_output')];
    const picked = createToolSelector({ maxTools: 3, fill: false }).select(all, {
      pinned: new Set(['misc_20', 'misc_21']),
      recentlyUsed: [],
    });
    expect(names(picked)).toEqual(['misc_21', SEARCH_TOOLS, 'read_tool_output']);
  });

  it('keeps the same array from turn to turn until the selection changes', () => {
    const all = manyTools();
    const selector = createToolSelector({ maxTools: 6 });
    const run = selector.forRun('r1');
    const first = run.select(all);
    expect(run.select(all)).toBe(first);
    run.noteUsed('github__create_issue'); // already in the fill: nothing changes
    expect(run.select(all)).toBe(first);
    run.pin(['slack__add_reaction']);
    const second = run.select(all);
    expect(second).not.toBe(first);
    expect(names(second)).toContain('slack__add_reaction');
    // Order is registration order, never the order tools were chosen in.
    const positions = names(second).map((n) => names(all).indexOf(n));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(run.select(all)).toBe(second);
  });

  it('runs are independent, and a run can be restored from its events', () => {
    const all = manyTools();
    const selector = createToolSelector({ maxTools: 4, fill: false });
    selector.forRun('a').pin(['postgres__query']);
    expect(names(selector.forRun('b').select(all))).toEqual([SEARCH_TOOLS]);
    const events = [
      {
        type: 'tool_started',
        runId: 'a',
        seq: 3,
        at: 0,
        step: 1,
        toolCallId: 'c1',
        name: 'slack__read_thread',
        arguments: {},
        idempotencyKey: 'k',
      },
      {
        type: 'tool_finished',
        runId: 'a',
        seq: 4,
        at: 0,
        step: 1,
        toolCallId: 'c2',
        name: SEARCH_TOOLS,
        result: {
          role: 'tool',
          toolCallId: 'c2',
          toolName: SEARCH_TOOLS,
          content: [],
          isError: false,
          details: { query: 'x', pinned: ['github__list_commits'] },
        },
        durationMs: 1,
      },
    ] as RunEvent[];
    selector.endRun('a');
    const restored = selector.forRun('a');
    expect(restored.pinned.size).toBe(0);
    restored.restore(events);
    expect(names(restored.select(all))).toEqual(['github__list_commits', 'slack__read_thread', SEARCH_TOOLS]);
  });

  it('refuses a maxTools that is not a whole number ≥ 1', () => {
    expect(() => createToolSelector({ maxTools: 0 })).toThrow(/maxTools must be a whole number/);
  });
});

describe('search', () => {
  const selector = createToolSelector();
  const all = manyTools();

  it('ranks by name and description words, deterministically, never listing search_tools', () => {
    expect(names(selector.search(all, 'create an issue', 3))[0]).toBe('github__create_issue');
    expect(names(selector.search(all, 'pull requests', 5))).toEqual(['github__get_pull_request', 'github__merge_pull_request']);
    expect(names(selector.search(all, 'sql table', 5)).slice(0, 2)).toEqual(['postgres__list_tables', 'postgres__describe_table']);
    expect(selector.search(all, 'find more tools', 5).map((s) => s.name)).not.toContain(SEARCH_TOOLS);
    expect(selector.search(all, 'slack', 2)).toEqual(selector.search(all, 'slack', 2));
  });

  it('puts exact names first and matches word starts', () => {
    expect(names(selector.search(all, 'misc_33, postgres__query', 2))).toEqual(['postgres__query', 'misc_33']);
    expect(names(selector.search(all, 'chan', 3))).toEqual(['slack__list_channels']);
  });

  it('matches parameter names too, and finds nothing for unrelated words', () => {
    const specs = [spec('fetch', 'Fetch a URL.', { url: {} }), spec('weather', 'Forecast for a city.', { city: {} })];
    expect(names(selector.search(specs, 'city', 5))).toEqual(['weather']);
    expect(selector.search(specs, 'zebra', 5)).toEqual([]);
  });
});

describe('search_tools', () => {
  function dispatcherFor(tools: Tool[]) {
    const selector = createToolSelector({ maxTools: 5, fill: false });
    const registry = new ToolRegistry([...tools, createSearchToolsTool(selector)]);
    const dispatcher = createDispatcher(registry);
    const search = async (query: string, limit?: number) => {
      const call: ToolCall = {
        type: 'tool_call',
        id: 'c',
        name: SEARCH_TOOLS,
        arguments: {},
        rawArguments: JSON.stringify({ query, limit }),
      };
      return (await dispatcher.dispatch(call, { signal: new AbortController().signal, runId: 'run-1', idempotencyKey: 'k' })).result;
    };
    return { selector, registry, search };
  }
  const tools = manyTools()
    .filter((s) => s.name !== SEARCH_TOOLS)
    .map((s) => defineTool({ ...s, execute: () => s.name }));

  it('pins its hits for the calling run and lists them with one line each', async () => {
    const { selector, registry, search } = dispatcherFor(tools);
    expect(names(selector.forRun('run-1').select(registry.specs()))).toEqual([SEARCH_TOOLS]);
    const result = await search('merge a pull request', 1);
    expect(result.isError).toBe(false);
    expect(result.content[0]).toEqual({
      type: 'text',
      text: '1 tool found for "merge a pull request"; you can call it now:\n- github__merge_pull_request: merge pull request on github.',
    });
    expect(result.details).toEqual({ query: 'merge a pull request', pinned: ['github__merge_pull_request'] });
    expect(names(selector.forRun('run-1').select(registry.specs()))).toEqual(['github__merge_pull_request', SEARCH_TOOLS]);
    expect(selector.forRun('run-2').pinned.size).toBe(0);
  });

  it('says so when nothing matches, pinning nothing', async () => {
    const { selector, search } = dispatcherFor(tools);
    const result = await search('teleport');
    expect(result.isError).toBe(false);
    expect(result.content[0]).toMatchObject({ text: expect.stringMatching(/^No tool matches "teleport"\. Try other words/) });
    expect(selector.forRun('run-1').pinned.size).toBe(0);
  });

  it('through a real agent: the next request offers the tool it found, in a stable order', async () => {
    const selector = createToolSelector({ maxTools: 6, always: ['read_tool_output'], fill: false });
    const reader = createToolOutputTool(() => undefined);
    const searchTools = createSearchToolsTool(selector);
    const registry = new ToolRegistry([...tools, reader, searchTools]);
    const offered: string[][] = [];
    const script: ScriptFunction = (request, info) => {
      offered.push(request.toolNames);
      if (info.index === 0) return toolCall(SEARCH_TOOLS, { query: 'post a slack message', limit: 1 });
      if (info.index === 1) return toolCall('slack__post_message', {});
      return { text: 'posted' };
    };
    // Until the agent offers a hook for it, the selection sits in front of the provider call.
    const { agent, server } = await setupAgent(script, {
      tools: [...registry.list()],
      streamFn: (model, context, options) =>
        streamModel(model, { ...context, tools: selector.forRun('run-sel').select(context.tools ?? []) }, options),
    });
    const handle = agent.run('tell the team', { runId: 'run-sel' });
    const { events, result } = await collect(handle);
    expect(result.reason).toBe('final_answer');
    expect(offered[0]).toEqual(['read_tool_output', SEARCH_TOOLS]);
    expect(offered[1]).toEqual(['slack__post_message', 'read_tool_output', SEARCH_TOOLS]);
    expect(offered[2]).toEqual(offered[1]);
    expect(events.some((e) => e.type === 'tool_finished' && e.name === 'slack__post_message' && !e.result.isError)).toBe(true);
    expect(server.received).toHaveLength(3);
  });
});
