import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { agentTool } from '../../src/loop/agent-tool.js';
import { waitingInTree } from '../../src/loop/tree-approval.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const usage = { prompt_tokens: 10, completion_tokens: 5 };
const retry = { baseDelayMs: 5, maxDelayMs: 50, jitter: false };

async function build(store: MemoryRunStore, runs: string[], parentStored = true) {
  const server = await startScriptedServer({
    script: (request) => {
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      const tool = request.messages.filter((m) => m.role === 'tool').find((m) => m.role === 'tool' && m.name !== 'note');
      if (request.model === 'lead') {
        if (turn === 0)
          return {
            toolCalls: [
              { name: 'deployer', arguments: { task: 'deploy v2' } },
              { name: 'note', arguments: { text: 'started' } },
            ],
            usage,
          };
        return { text: `lead done: ${tool?.role === 'tool' ? tool.content : ''}`, usage };
      }
      if (turn === 0) return { toolCalls: [{ name: 'deploy', arguments: { version: 'v2' } }], usage };
      return { text: `deployer: ${tool?.role === 'tool' ? tool.content : ''}`, usage };
    },
  });
  servers.push(server);
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys a version.',
    parameters: { type: 'object', properties: { version: { type: 'string' } }, required: ['version'] },
    effect: 'idempotent',
    execute: ({ version }) => {
      runs.push(`deploy ${String(version)}`);
      return `deployed ${String(version)}`;
    },
  });
  const note = defineTool({
    name: 'note',
    description: 'Takes a note.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    effect: 'pure',
    execute: ({ text }) => {
      runs.push(`note ${String(text)}`);
      return 'noted';
    },
  });
  const deployer = new Agent({
    name: 'deployer',
    model: server.model('deployer'),
    store,
    retry,
    tools: [deploy],
    approvalPolicy: (call) => (call.name === 'deploy' ? 'ask' : 'allow'),
  });
  const lead = new Agent({
    name: 'lead',
    model: server.model('lead'),
    ...(parentStored ? { store } : {}),
    retry,
    tools: [agentTool(deployer, { name: 'deployer', description: 'Deploys.' }), note],
  });
  return lead;
}

describe('an approval inside a sub-agent', () => {
  it('pauses the whole tree durably; approving the root (from a fresh agent) decides the child’s call, bound to it, and finishes the tree', async () => {
    const store = new MemoryRunStore();
    const runs: string[] = [];
    const lead = await build(store, runs);
    const paused = await lead.run('ship it');
    expect(paused).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    expect(runs).toEqual(['note started']);
    expect((await store.getRun(paused.runId))?.status).toBe('paused');
    const waiting = await waitingInTree(store, paused.runId);
    expect(waiting).toEqual([
      {
        runId: expect.stringMatching(/\./),
        depth: 1,
        parentRunId: paused.runId,
        toolCallId: expect.any(String),
        name: 'deploy',
        arguments: { version: 'v2' },
        argumentsHash: expect.any(String),
      },
    ]);
    const child = waiting[0]!;
    expect((await store.getRun(child.runId))?.status).toBe('paused');
    // A decision for another call, or other arguments, is refused as stale.
    const fresh = await build(store, runs);
    const stale = await fresh.approve(paused.runId, { toolCallId: child.toolCallId, argumentsHash: 'not-the-hash' });
    expect(stale).toMatchObject({
      status: 'failed',
      error: { code: 'conflict', message: expect.stringContaining(`waiting: ${child.toolCallId} of run ${child.runId}`) },
    });
    expect(runs).toEqual(['note started']);

    const done = await fresh.approve(paused.runId, { toolCallId: child.toolCallId, argumentsHash: child.argumentsHash });
    expect(done).toMatchObject({ status: 'done', reason: 'final_answer', agent: 'lead', text: 'lead done: deployer: deployed v2' });
    // Each call ran once: the note before the pause, the deploy after the approval.
    expect(runs).toEqual(['note started', 'deploy v2']);
    const childLog = await store.loadEvents(child.runId);
    const decided = childLog.find((e) => e.type === 'approval_decided');
    expect(decided).toMatchObject({ toolCallId: child.toolCallId, approved: true, argumentsHash: child.argumentsHash });
    expect((await store.getRun(child.runId))?.status).toBe('done');
    expect(await waitingInTree(store, paused.runId)).toEqual([]);
    // The parent's log: one tool_finished per call, the sub-agent's with the child's usage.
    const parentLog = await store.loadEvents(paused.runId);
    const finished = parentLog.filter((e) => e.type === 'tool_finished');
    expect(finished.map((e) => (e.type === 'tool_finished' ? e.name : ''))).toEqual(['note', 'deployer']);
    expect(done.totals.usage.total).toBe(4 * 15);
  });

  it('a parent without a store cannot pause with its child: the call is an error saying so, and the child waits in its store', async () => {
    const store = new MemoryRunStore();
    const runs: string[] = [];
    const lead = await build(store, runs, false);
    const result = await lead.run('ship it');
    expect(result.status).toBe('done');
    expect(result.text).toMatch(
      /^lead done: sub-agent "deployer" \(run run_[\w.]+\) waits for a person's approval, and this run has no store to pause in/,
    );
    const [child] = await store.listRuns();
    expect(child?.status).toBe('paused');
    expect(runs).toEqual(['note started']);
  });

  it('a denial from the root reaches the child’s model as a refusal', async () => {
    const store = new MemoryRunStore();
    const runs: string[] = [];
    const lead = await build(store, runs);
    const paused = await lead.run('ship it');
    const done = await lead.approve(paused.runId, { approved: false, reason: 'not today' });
    expect(done.status).toBe('done');
    expect(done.text).toMatch(/^lead done: deployer: permission denied for tool "deploy": .*not today/);
    expect(runs).toEqual(['note started']);
  });
});
