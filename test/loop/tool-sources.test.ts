import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import type { Tool, ToolSource } from '../../src/tools/types.js';
import { addTool, collect, setup } from './helpers.js';

function echoTool(name: string): Tool {
  return defineTool({
    name,
    description: `Echo as ${name}.`,
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    effect: 'pure',
    execute: ({ text }) => `${name}: ${String(text)}`,
  });
}

/** A source whose tools the test swaps, like an MCP server whose list changed. */
function mutableSource(initial: Tool[]): ToolSource & { set(tools: Tool[]): void } {
  let tools: readonly Tool[] = initial;
  return { id: 'test', tools: () => tools, set: (next) => (tools = next) };
}

describe('tool sources', () => {
  it("a source's tools are offered and callable, and a change is seen from the next turn", async () => {
    const source = mutableSource([echoTool('first')]);
    const script = [
      { toolCalls: [{ name: 'first', arguments: { text: 'a' } }] },
      { toolCalls: [{ name: 'second', arguments: { text: 'b' } }] },
      { text: 'done' },
    ];
    const { agent, server } = await setup(script, { tools: [addTool], toolSources: [source] });
    const handle = agent.run('go');
    let swapped = false;
    // A listener runs as the event is emitted: the swap lands before the next turn starts.
    handle.subscribe((event) => {
      if (event.type === 'tool_finished' && !swapped) {
        swapped = true;
        source.set([echoTool('second')]);
      }
    });
    const result = await handle;
    expect(result.status).toBe('done');
    const offered = server.requests.map((r) => (r as { tools?: Array<{ function: { name: string } }> }).tools?.map((t) => t.function.name));
    expect(offered[0]).toEqual(['add', 'first']);
    expect(offered[1]).toEqual(['add', 'second']);
    const results = result.messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => m.role === 'tool' && m.content[0])).toEqual([
      { type: 'text', text: 'first: a' },
      { type: 'text', text: 'second: b' },
    ]);
  });

  it("a source's tool whose name is taken is left out, and the agent's own tool wins", async () => {
    const source = mutableSource([echoTool('add'), echoTool('other')]);
    const agent = new Agent({ model: 'ollama/llama3.1', tools: [addTool], toolSources: [source] });
    expect(agent.tools.map((t) => t.name)).toEqual(['add', 'other']);
    expect(agent.tools[0]).toBe(addTool);
    expect(agent.toolConflicts).toEqual([{ source: 'test', name: 'add' }]);
  });

  it('a changing source does not block resuming a stored run: the record names the source, not its tools', async () => {
    const store = new MemoryRunStore();
    const source = mutableSource([echoTool('first')]);
    const { agent, server } = await setup([{ text: 'one' }], { toolSources: [source], store });
    const first = await agent.run('hi');
    expect(first.status).toBe('done');
    source.set([echoTool('first'), echoTool('second')]);
    const again = new Agent({ model: server.model(), toolSources: [source], store });
    const record = await store.getRun(first.runId);
    expect(record?.config).toMatchObject({ toolSources: ['test'] });
    expect(again.tools.map((t) => t.name)).toEqual(['first', 'second']);
  });
});

describe('least privilege: allowedTools', () => {
  it('tools not listed are neither offered to the model nor executable', async () => {
    const script = [{ toolCalls: [{ name: 'secret', arguments: { text: 'x' } }] }, { text: 'ok' }];
    const { agent, server } = await setup(script, {
      tools: [addTool, echoTool('secret'), echoTool('github__issues'), echoTool('github__pulls')],
      allowedTools: ['add', 'github__*'],
    });
    const { result } = await collect(agent.run('go'));
    const offered = (server.requests[0]! as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    expect(offered).toEqual(['add', 'github__issues', 'github__pulls']);
    const toolResult = result.messages.find((m) => m.role === 'tool');
    expect(toolResult).toMatchObject({ isError: true });
    expect(toolResult?.role === 'tool' && toolResult.content[0]).toEqual({
      type: 'text',
      text: 'unknown tool "secret". Available tools: add, github__issues, github__pulls',
    });
  });

  it('a malformed allowedTools entry is a config error that shows a valid example', () => {
    expect(() => new Agent({ model: 'ollama/llama3.1', tools: [addTool], allowedTools: ['bash(ls)'] })).toThrow(
      /not a tool name or glob.*github__\*/,
    );
  });

  it('the final-answer tool stays available when allowedTools does not name it', async () => {
    const script = [{ toolCalls: [{ name: 'final_answer', arguments: { n: 3 } }] }];
    const { agent } = await setup(script, {
      tools: [addTool],
      allowedTools: ['add'],
      outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    });
    const result = await agent.run('go');
    expect(result).toMatchObject({ reason: 'done_signal', output: { n: 3 } });
  });
});

describe('tool progress', () => {
  it('ctx.progress reaches listeners as tool_progress events, which are not stored', async () => {
    const store = new MemoryRunStore();
    const slow = defineTool({
      name: 'slow',
      description: 'Works in steps.',
      parameters: { type: 'object', properties: {} },
      effect: 'pure',
      execute: async (_args, ctx) => {
        for (let i = 1; i <= 3; i++) ctx.progress({ progress: i, total: 3, message: `step ${i}` });
        return 'finished';
      },
    });
    const { agent } = await setup([{ toolCalls: [{ name: 'slow', arguments: {} }] }, { text: 'ok' }], { tools: [slow], store });
    const handle = agent.run('go');
    const { events } = await collect(handle);
    const progress = events.filter((e) => e.type === 'tool_progress');
    expect(progress.map((e) => e.type === 'tool_progress' && [e.name, e.progress, e.total, e.message])).toEqual([
      ['slow', 1, 3, 'step 1'],
      ['slow', 2, 3, 'step 2'],
      ['slow', 3, 3, 'step 3'],
    ]);
    expect(progress[0]).toMatchObject({ step: 1, toolCallId: expect.any(String) });
    const stored = await store.loadEvents(handle.runId);
    expect(stored.some((e) => e.type === 'tool_progress')).toBe(false);
  });
});
