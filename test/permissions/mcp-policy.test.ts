// The same permission policy governs MCP tools: an agent whose tools come from real MCP
// servers (server-everything from npm, and the fault fixture for a tool without
// annotations), driven by the scripted model. Deny and allow rules name MCP tools, plan
// mode refuses those that may change things, and an unannotated tool asks — which, with a
// store and nobody to ask, pauses the run until `agent.approve()`.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { Agent } from '../../src/loop/agent.js';
import type { RunHandle } from '../../src/loop/handle.js';
import { startMcp, type McpHost } from '../../src/mcp/host.js';
import { groupAlive } from '../../src/process/process-group.js';
import { startScriptedServer, type ScriptedServer, type ScriptFunction, type ScriptToolCall } from '../../src/testing/index.js';
import type { ToolResultMessage } from '../../src/model/types.js';
import { createPermissionPolicy, type PermissionOptions } from '../../src/permissions/policy.js';
import { MemoryRunStore } from '../../src/store/memory.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const EVERYTHING = join(repo, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const FIXTURE = join(repo, 'test', 'mcp', 'fixtures', 'fault-server.mjs');

let mcp: McpHost;
const pids: number[] = [];
const servers: ScriptedServer[] = [];

beforeAll(async () => {
  mcp = await startMcp({
    servers: {
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      fixture: { command: process.execPath, args: [FIXTURE] },
    },
    configFiles: false,
  });
  for (const s of mcp.status()) {
    expect(s.state).toBe('connected');
    pids.push(s.pid as number);
  }
}, 30_000);

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await mcp.close();
  // Closing the host ended every server process it started.
  expect(pids.filter((pid) => groupAlive(pid))).toEqual([]);
});

/** Answers the task with `calls`; once tool results are in, with a short text. */
function script(calls: ScriptToolCall[]): ScriptFunction {
  return (request) => (request.messages.at(-1)?.role === 'user' ? { toolCalls: calls } : { text: 'Done.' });
}

async function agentWith(calls: ScriptToolCall[], options: PermissionOptions, store?: MemoryRunStore): Promise<Agent> {
  const server = await startScriptedServer({ script: script(calls) });
  servers.push(server);
  const policy = createPermissionPolicy(options);
  return new Agent({
    model: server.model(),
    toolSources: [mcp],
    approvalPolicy: (call, tool) => policy.decide(call, tool),
    ...(store ? { store } : {}),
  });
}

async function collect(handle: RunHandle): Promise<{ events: RunEvent[]; result: Awaited<RunHandle> }> {
  const events: RunEvent[] = [];
  for await (const event of handle) events.push(event);
  return { events, result: await handle };
}

function decisions(events: RunEvent[]): Array<[string, string, string | undefined]> {
  return events.flatMap((e) =>
    e.type === 'permission_decided' ? [[e.name, e.decision, e.rule] as [string, string, string | undefined]] : [],
  );
}

function results(events: RunEvent[]): Record<string, ToolResultMessage> {
  return Object.fromEntries(events.flatMap((e) => (e.type === 'tool_finished' ? [[e.toolCallId, e.result]] : [])));
}

const text = (result: ToolResultMessage | undefined): string =>
  (result?.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('the permission policy over MCP tools', () => {
  it('a deny rule refuses an MCP tool, naming the rule; an allow rule lets another run with its real result', async () => {
    const agent = await agentWith(
      [
        { id: 'call_sum', name: 'everything__get-sum', arguments: { a: 2, b: 3 } },
        { id: 'call_echo', name: 'everything__echo', arguments: { message: 'through the policy' } },
      ],
      { deny: ['everything__get-sum'], allow: ['everything__echo'] },
    );
    const { events, result } = await collect(agent.run('add and echo'));
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer' });
    expect(decisions(events)).toEqual([
      ['everything__get-sum', 'deny', 'deny everything__get-sum'],
      ['everything__echo', 'allow', 'allow everything__echo'],
    ]);
    // The denied call never reached the server.
    expect(events.filter((e) => e.type === 'tool_started').map((e) => (e as { toolCallId: string }).toolCallId)).toEqual(['call_echo']);
    const byCall = results(events);
    expect(byCall.call_sum?.isError).toBe(true);
    expect(text(byCall.call_sum)).toMatch(
      /^permission denied for tool "everything__get-sum": the rule "deny everything__get-sum" refuses this call/,
    );
    expect(byCall.call_echo).toMatchObject({ isError: false });
    expect(text(byCall.call_echo)).toBe('Echo: through the policy');
  });

  it('globs name MCP tools too, and plan mode runs read-only MCP tools but refuses those that may change things', async () => {
    const agent = await agentWith(
      [
        { id: 'call_sum', name: 'everything__get-sum', arguments: { a: 2, b: 3 } },
        { id: 'call_toggle', name: 'everything__toggle-simulated-logging', arguments: {} },
        { id: 'call_env', name: 'everything__get-env', arguments: {} },
      ],
      { mode: 'plan', deny: ['everything__get-e*'] },
    );
    const { events } = await collect(agent.run('look around'));
    expect(decisions(events)).toEqual([
      ['everything__get-sum', 'allow', 'default: risk read allows'],
      ['everything__toggle-simulated-logging', 'deny', 'mode plan: no side effects'],
      ['everything__get-env', 'deny', 'deny everything__get-e*'],
    ]);
    const byCall = results(events);
    expect(text(byCall.call_sum)).toContain('5');
    expect(text(byCall.call_toggle)).toMatch(/plan mode runs only read-only tools/);
    // The server's environment never reached the model.
    expect(text(byCall.call_env)).toMatch(/^permission denied for tool "everything__get-env"/);
  });

  it('an MCP tool without annotations is risk write and asks; with a store the run pauses until approve() runs it', async () => {
    const bridged = mcp.tools().find((t) => t.name === 'fixture__ping_client');
    expect(bridged).toMatchObject({ risk: 'write', effect: 'unsafe' });
    const store = new MemoryRunStore();
    const agent = await agentWith([{ id: 'call_ping', name: 'fixture__ping_client', arguments: {} }], {}, store);
    const paused = await collect(agent.run('ping the client'));
    expect(paused.result).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    expect(decisions(paused.events)).toEqual([['fixture__ping_client', 'ask', 'default: risk write asks']]);
    expect(paused.events.find((e) => e.type === 'approval_requested')).toMatchObject({
      toolCallId: 'call_ping',
      name: 'fixture__ping_client',
    });
    expect(paused.events.some((e) => e.type === 'tool_started')).toBe(false);

    const approved = await collect(agent.approve(paused.result.runId));
    expect(approved.result).toMatchObject({ status: 'done', reason: 'final_answer', text: 'Done.' });
    const ping = results(approved.events).call_ping;
    expect(ping).toMatchObject({ isError: false });
    // The fixture really ran: it pinged rein back over the live connection.
    expect(text(ping)).toBe('the client answered ping');
  });
});
