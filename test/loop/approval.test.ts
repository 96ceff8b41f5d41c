import { describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { messagesFromEvents } from '../../src/loop/fold.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { collect, setup } from './helpers.js';

function gatedTool() {
  let runs = 0;
  const tool = defineTool({
    name: 'deploy',
    description: 'Deploys.',
    parameters: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
    execute: ({ env }) => {
      runs++;
      return `deployed to ${env}`;
    },
  });
  return { tool, runs: () => runs };
}

const askForDeploy = (call: { name: string }) => (call.name === 'deploy' ? ('ask' as const) : ('allow' as const));
const script = [
  { toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] },
  { text: 'Deployed.' },
  { text: 'Understood, not deployed.' },
];

describe('approvals that survive restarts', () => {
  it('an ask pauses the run durably; another process approves it and the run completes', async () => {
    const store = new MemoryRunStore();
    const first = gatedTool();
    const { agent, server } = await setup(script, { tools: [first.tool], store, approvalPolicy: askForDeploy });
    const handle = agent.run('deploy it');
    const { events, result } = await collect(handle);
    expect(result).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    expect(first.runs()).toBe(0);
    const requested = events.find((e) => e.type === 'approval_requested');
    expect(requested).toMatchObject({ name: 'deploy', arguments: { env: 'prod' }, argumentsHash: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(await store.getRun(handle.runId)).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });

    // A fresh agent (another process) with the same configuration decides.
    const second = gatedTool();
    const other = new Agent({ model: server.model(), tools: [second.tool], store, approvalPolicy: askForDeploy });
    const approved = await other.approve(handle.runId, { reason: 'looks fine' });
    expect(approved).toMatchObject({ status: 'done', reason: 'final_answer', text: 'Deployed.' });
    expect(second.runs()).toBe(1);
    const stored = await store.loadEvents(handle.runId);
    expect(stored.find((e) => e.type === 'approval_decided')).toMatchObject({ approved: true, reason: 'looks fine' });
    expect(messagesFromEvents(stored)).toEqual(approved.messages);
    // Approving twice is harmless: nothing waits any more, nothing runs again.
    expect(await other.approve(handle.runId)).toMatchObject({
      status: 'failed',
      error: { code: 'conflict', message: expect.stringMatching(/not waiting for approval/) },
    });
    expect(second.runs()).toBe(1);
  });

  it('a denial becomes an error result the model sees, and the tool never runs', async () => {
    const store = new MemoryRunStore();
    const gated = gatedTool();
    const { agent, server } = await setup([script[0]!, script[2]!], { tools: [gated.tool], store, approvalPolicy: askForDeploy });
    const paused = agent.run('deploy it');
    await paused;
    const result = await agent.approve(paused.runId, { approved: false, reason: 'not on a Friday' });
    expect(result).toMatchObject({ status: 'done', text: 'Understood, not deployed.' });
    expect(gated.runs()).toBe(0);
    expect(String(server.requests.at(-1)!.messages.at(-1)!.content)).toMatch(/permission denied for tool "deploy": not on a Friday/);
  });

  it('a stale or mismatched decision is refused with a clear error, and the run still waits', async () => {
    const store = new MemoryRunStore();
    const gated = gatedTool();
    const { agent } = await setup(script, { tools: [gated.tool], store, approvalPolicy: askForDeploy });
    const paused = agent.run('deploy it');
    await paused;
    expect(await agent.approve(paused.runId, { toolCallId: 'call_other' })).toMatchObject({
      status: 'failed',
      error: {
        code: 'conflict',
        message: expect.stringMatching(/matches no call waiting for approval \(waiting: call_\w+ \(arguments [0-9a-f]{32}\)\)/),
      },
    });
    expect(await agent.approve(paused.runId, { argumentsHash: 'f'.repeat(32) })).toMatchObject({
      status: 'failed',
      error: { code: 'conflict' },
    });
    expect(await store.getRun(paused.runId)).toMatchObject({ status: 'paused' });
    expect(gated.runs()).toBe(0);
    expect((await agent.approve(paused.runId)).status).toBe('done');
  });

  it('a second approve while the first drives the run is refused without taking the run over', async () => {
    const store = new MemoryRunStore();
    let started!: () => void;
    let release!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const gate = new Promise<void>((r) => (release = r));
    const slow = defineTool({
      name: 'deploy',
      description: 'Deploys.',
      parameters: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
      execute: async ({ env }) => {
        started();
        await gate;
        return `deployed to ${String(env)}`;
      },
    });
    const { agent } = await setup(script, { tools: [slow], store, approvalPolicy: askForDeploy });
    const paused = agent.run('deploy it');
    await paused;
    const first = agent.approve(paused.runId);
    await running;
    // The record says the run is being driven, not waiting.
    expect(await store.getRun(paused.runId)).toMatchObject({ status: 'running' });
    const epoch = (await store.getRun(paused.runId))!.leaseEpoch;
    expect(await agent.approve(paused.runId)).toMatchObject({
      status: 'failed',
      error: { code: 'conflict', message: expect.stringMatching(/not waiting for approval \(it is running\)/) },
    });
    // The same decision checked against the log, past a record that still said paused, is refused before the lease too.
    expect((await store.getRun(paused.runId))!.leaseEpoch).toBe(epoch);
    release();
    expect(await first).toMatchObject({ status: 'done', text: 'Deployed.' });
  });

  it('a stale decision is refused before the run is taken: the process driving it keeps its lease', async () => {
    const store = new MemoryRunStore();
    const gated = gatedTool();
    const { agent } = await setup(script, { tools: [gated.tool], store, approvalPolicy: askForDeploy });
    const paused = agent.run('deploy it');
    await paused;
    const epoch = (await store.getRun(paused.runId))!.leaseEpoch;
    expect(await agent.approve(paused.runId, { toolCallId: 'call_other' })).toMatchObject({
      status: 'failed',
      error: { code: 'conflict' },
    });
    expect((await store.getRun(paused.runId))!.leaseEpoch).toBe(epoch);
  });

  it('deny in the policy refuses the call without pausing; ask without a store cannot pause and refuses', async () => {
    const denied = gatedTool();
    const { agent } = await setup(script, { tools: [denied.tool], approvalPolicy: () => 'deny' });
    const result = await agent.run('deploy it');
    expect(result.status).toBe('done');
    expect(denied.runs()).toBe(0);
    const noStore = gatedTool();
    const { agent: unstored, server } = await setup(script, { tools: [noStore.tool], approvalPolicy: askForDeploy });
    await unstored.run('deploy it');
    expect(noStore.runs()).toBe(0);
    expect(String(server.requests.at(-1)!.messages.at(-1)!.content)).toMatch(/no store to pause in/);
  });

  it('a call no person decided is decided by the policy again when the run continues, and that decision is logged', async () => {
    const store = new MemoryRunStore();
    const gated = gatedTool();
    const audit = defineTool({
      name: 'audit',
      description: 'Audits.',
      parameters: { type: 'object', properties: {} },
      execute: () => 'audited',
    });
    const policy = (call: { name: string }) =>
      call.name === 'deploy' ? ('ask' as const) : { decision: 'deny' as const, rule: 'no audits today' };
    const both = [
      {
        toolCalls: [
          { name: 'deploy', arguments: { env: 'prod' } },
          { name: 'audit', arguments: {} },
        ],
      },
      { text: 'Done.' },
    ];
    const { agent } = await setup(both, { tools: [gated.tool, audit], store, approvalPolicy: policy });
    const paused = agent.run('deploy and audit');
    await paused;
    const before = (await store.loadEvents(paused.runId)).length;
    expect((await agent.approve(paused.runId)).status).toBe('done');
    const after = (await store.loadEvents(paused.runId)).slice(before);
    expect(after.filter((e) => e.type === 'permission_decided')).toEqual([
      expect.objectContaining({ name: 'audit', decision: 'deny', rule: 'no audits today' }),
    ]);
    expect(gated.runs()).toBe(1);
  });
});
