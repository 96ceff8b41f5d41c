import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import type { ToolCall } from '../../src/model/types.js';
import { collect, setup } from './helpers.js';

function counted(name: string) {
  const calls: unknown[] = [];
  const tool = defineTool({
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: { x: { type: 'string' } } },
    execute: (args) => {
      calls.push(args);
      return `${name} ran`;
    },
  });
  return { tool, calls };
}

/** A policy as data: read allows, deploy asks, wipe is denied by a named rule. */
function policy(call: ToolCall) {
  if (call.name === 'wipe')
    return { decision: 'deny' as const, rule: 'deny wipe', reason: 'wiping is never allowed here (rule: deny wipe)' };
  if (call.name === 'deploy') return { decision: 'ask' as const, rule: 'ask deploy' };
  return { decision: 'allow' as const, rule: 'default: risk read allows' };
}

const batch = [
  {
    toolCalls: [
      { name: 'read', arguments: { x: '1' } },
      { name: 'deploy', arguments: { x: '2' } },
      { name: 'wipe', arguments: { x: '3' } },
    ],
  },
  { text: 'done' },
];

const decisions = (events: RunEvent[]) =>
  events.filter((e) => e.type === 'permission_decided').map((e) => e.type === 'permission_decided' && [e.name, e.decision, e.rule]);

describe('the permission policy in the loop', () => {
  it('every decision is an event with its rule; a person is asked only about the calls the policy asks for', async () => {
    const [read, deploy, wipe] = [counted('read'), counted('deploy'), counted('wipe')];
    const asked: string[] = [];
    const { agent, server } = await setup(batch, {
      tools: [read.tool, deploy.tool, wipe.tool],
      approvalPolicy: policy,
      hooks: {
        onConfirm: (call) => {
          asked.push(call.name);
          return { allow: false, reason: 'not today' };
        },
      },
    });
    const { events, result } = await collect(agent.run('go'));
    expect(result.status).toBe('done');
    expect(decisions(events)).toEqual([
      ['read', 'allow', 'default: risk read allows'],
      ['deploy', 'ask', 'ask deploy'],
      ['wipe', 'deny', 'deny wipe'],
    ]);
    expect(asked).toEqual(['deploy']);
    expect([read.calls.length, deploy.calls.length, wipe.calls.length]).toEqual([1, 0, 0]);
    const sent = server.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(sent).toEqual([
      'read ran',
      'permission denied for tool "deploy": a person declined it: not today',
      'permission denied for tool "wipe": wiping is never allowed here (rule: deny wipe)',
    ]);
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({
      toolCallId: expect.any(String),
      approved: false,
      reason: 'not today',
    });
  });

  it('without a store or a person, only the calls that ask are refused; the others run', async () => {
    const [read, deploy, wipe] = [counted('read'), counted('deploy'), counted('wipe')];
    const { agent, server } = await setup(batch, { tools: [read.tool, deploy.tool, wipe.tool], approvalPolicy: policy });
    const result = await agent.run('go');
    expect(result.status).toBe('done');
    expect([read.calls.length, deploy.calls.length, wipe.calls.length]).toEqual([1, 0, 0]);
    const sent = server.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(sent[1]).toMatch(/needs a person's approval, and this run has no store to pause in/);
  });

  it('after a pause, approving runs the approved call and the policy still refuses the denied one', async () => {
    const store = new MemoryRunStore();
    const [read, deploy, wipe] = [counted('read'), counted('deploy'), counted('wipe')];
    const { agent } = await setup(batch, { tools: [read.tool, deploy.tool, wipe.tool], approvalPolicy: policy, store });
    const paused = agent.run('go');
    expect(await paused).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    expect([read.calls.length, deploy.calls.length, wipe.calls.length]).toEqual([0, 0, 0]);
    const result = await agent.approve(paused.runId);
    expect(result.status).toBe('done');
    expect([read.calls.length, deploy.calls.length, wipe.calls.length]).toEqual([1, 1, 0]);
    const stored = await store.loadEvents(paused.runId);
    const finished = stored
      .filter((e) => e.type === 'tool_finished')
      .map((e) => e.type === 'tool_finished' && [e.name, e.errorCode ?? 'ok']);
    expect(finished).toEqual([
      ['read', 'ok'],
      ['deploy', 'ok'],
      ['wipe', 'tool_denied'],
    ]);
  });

  it("a call of an unknown tool gets the dispatcher's answer, not a policy decision", async () => {
    const read = counted('read');
    const { agent } = await setup([{ toolCalls: [{ name: 'nope', arguments: {} }] }, { text: 'ok' }], {
      tools: [read.tool],
      approvalPolicy: policy,
    });
    const { events, result } = await collect(agent.run('go'));
    expect(decisions(events)).toEqual([]);
    expect(JSON.stringify(result.messages)).toMatch(/unknown tool \\"nope\\"/);
  });
});
