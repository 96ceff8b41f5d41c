// An agent run through the scripted model, with real MCP servers as a tool source: the
// model's calls reach server-everything, server-filesystem and server-memory, and their
// real results come back as tool results.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolResultMessage } from '../../src/model/types.js';
import type { ScriptRequest } from '../../src/testing/index.js';
import { collect, setup } from '../loop/helpers.js';
import { FILESYSTEM, MEMORY, everything, fixture, host, tempDir, textOf } from './helpers.js';

describe('an agent with MCP servers as a tool source', () => {
  it('calls tools of three real servers and gets their real results', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'plan.md'), 'step one: ship the MCP host\n');
    const mcp = await host({
      everything: everything(),
      fs: { command: process.execPath, args: [FILESYSTEM, dir], roots: [dir] },
      memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } },
    });
    const seen: ScriptRequest[] = [];
    const { agent } = await setup(
      (request, { index }) => {
        seen.push(request);
        if (index === 0) {
          return {
            toolCalls: [
              { name: 'everything__echo', arguments: { message: 'hello from the model' } },
              { name: 'fs__read_text_file', arguments: { path: join(dir, 'plan.md') } },
              {
                name: 'memory__create_entities',
                arguments: { entities: [{ name: 'plan', entityType: 'doc', observations: ['ship the MCP host'] }] },
              },
            ],
          };
        }
        if (index === 1) {
          return {
            toolCalls: [
              { name: 'memory__search_nodes', arguments: { query: 'ship' } },
              { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } },
            ],
          };
        }
        return { text: 'All done.' };
      },
      { toolSources: [mcp] },
    );
    const { events, result } = await collect(agent.run('Use the tools.'));
    expect(result.reason).toBe('final_answer');
    expect(result.text).toBe('All done.');

    // The model was offered the servers' tools under their rein names.
    expect(seen[0]?.toolNames).toEqual(
      expect.arrayContaining(['everything__echo', 'fs__read_text_file', 'memory__create_entities', 'list_resources', 'read_resource']),
    );

    const results = result.messages.filter((m): m is ToolResultMessage => m.role === 'tool');
    const byName = Object.fromEntries(results.map((r) => [r.toolName, r]));
    expect(byName.everything__echo).toMatchObject({ isError: false, content: [{ type: 'text', text: 'Echo: hello from the model' }] });
    expect(textOf(byName.fs__read_text_file!.content)).toBe('step one: ship the MCP host\n');
    expect(byName.memory__create_entities?.isError).toBe(false);
    expect(textOf(byName.memory__create_entities!.content)).toContain('"name": "plan"');
    expect(textOf(byName.memory__search_nodes!.content)).toContain('ship the MCP host');
    expect(byName['everything__trigger-long-running-operation']?.details).toMatchObject({
      server: 'everything',
      tool: 'trigger-long-running-operation',
    });

    // The tool results the model was sent on the next turn are the servers' real answers.
    expect(seen[1]?.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(
      expect.arrayContaining(['Echo: hello from the model', 'step one: ship the MCP host\n']),
    );
    // Progress notifications became tool_progress events.
    const progress = events.filter((e) => e.type === 'tool_progress');
    expect(progress.map((e) => e.type === 'tool_progress' && [e.name, e.progress, e.total])).toEqual([
      ['everything__trigger-long-running-operation', 1, 2],
      ['everything__trigger-long-running-operation', 2, 2],
    ]);
  });

  it('follows a changing tool list from one turn to the next, and a crashed server answers an error result', async () => {
    const mcp = await host({ f: fixture() }, { reconnect: { initialDelayMs: 2000, maxDelayMs: 4000 } });
    const seen: ScriptRequest[] = [];
    const { agent } = await setup(
      (request, { index }) => {
        seen.push(request);
        const turns = [
          { toolCalls: [{ name: 'f__add_tool', arguments: { name: 'brand_new' } }] },
          { toolCalls: [{ name: 'f__brand_new', arguments: {} }] },
          { toolCalls: [{ name: 'f__crash', arguments: {} }] },
          { toolCalls: [{ name: 'f__echo', arguments: { text: 'anyone?' } }] },
        ];
        return turns[index] ?? { text: 'ok' };
      },
      { toolSources: [mcp] },
    );
    const { result } = await collect(agent.run('go'));
    expect(result.reason).toBe('final_answer');
    // list_changed arrives while the first call is answered: the next turn offers the new tool.
    expect(seen[0]?.toolNames).not.toContain('f__brand_new');
    expect(seen[1]?.toolNames).toContain('f__brand_new');
    const results = result.messages.filter((m): m is ToolResultMessage => m.role === 'tool');
    expect(textOf(results[1]!.content)).toBe('ran brand_new');
    expect(results[2]?.isError).toBe(true);
    expect(textOf(results[2]!.content)).toContain('MCP server "f" crashed: its process exited with code 3');
    // Down, its tools are still offered and answer why.
    expect(seen[3]?.toolNames).toContain('f__echo');
    expect(results[3]?.isError).toBe(true);
    expect(textOf(results[3]!.content)).toContain('MCP server "f" is reconnecting (attempt 1');
  });
});
