// `rein serve` builds the sub-agents an agent file names (`agents: [helper]`): a run of the
// parent starts the child as a run of its own in the server's store, tied to the call.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentFile, call, readStream, startInProcess, until, type InProcess } from './helpers.js';

let env: InProcess | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

describe('served agents with sub-agents', () => {
  it('a served agent calls the sub-agent its file names; the child is a stored run of the tree', async () => {
    env = await startInProcess({
      agents: { lead: agentFile('lead', { tools: '[calculate]', agents: '[helper]' }) },
      script: (request) => {
        const turn = request.messages.filter((m) => m.role === 'assistant').length;
        const tool = request.messages.find((m) => m.role === 'tool');
        if (request.system?.includes('You lead.')) {
          if (turn === 0) return { toolCalls: [{ name: 'helper', arguments: { task: 'say hi' }, id: 'call_lead_1' }] };
          return { text: `lead: ${tool?.role === 'tool' ? tool.content : ''}` };
        }
        return { text: 'hi from the helper' };
      },
    });
    // Files are read for each new run: the child names the scripted server itself.
    await writeFile(
      join(env.project, '.rein/agents/lead.md'),
      agentFile('lead', { tools: '[calculate]', agents: '[helper]' }, 'You lead.'),
    );
    await writeFile(
      join(env.project, '.rein/agents/helper.md'),
      agentFile('helper', { tools: '[calculate]', baseUrl: env.model.url }, 'You help.'),
    );
    const made = await call(env.url, '/v1/runs', { body: { agent: 'lead', input: 'greet' } });
    expect(made.status).toBe(201);
    const runId = made.body.runId as string;
    const detail = await until(async () => {
      const { body } = await call(env!.url, `/v1/runs/${runId}`);
      return body.record.status !== 'running' && !body.record.live ? body : undefined;
    }, 'the tree to end');
    expect(detail.result).toMatchObject({ status: 'done', text: 'lead: hi from the helper', agent: 'lead' });
    const children = (await env.store.listRuns()).filter((r) => r.parentRunId === runId);
    expect(children).toHaveLength(1);
    const first = (await env.store.loadEvents(children[0]!.id))[0];
    expect(first).toMatchObject({ type: 'run_started', agent: 'helper', parentRunId: runId, parentToolCallId: 'call_lead_1', depth: 1 });
  });
  it('a parent whose file and its child name the same flags (no tools, no server) still gets its sub-agent tool', async () => {
    // Without a list of tools or a baseUrl both files open the same flags: the parent must not
    // take the workbench opened for its child, which has no sub-agent tool.
    env = await startInProcess({
      agents: { lead: agentFile('lead', { agents: '[helper]' }, 'You lead.'), helper: agentFile('helper', {}, 'You help.') },
      script: (request) => {
        const tool = request.messages.find((m) => m.role === 'tool');
        if (request.system?.includes('You lead.')) {
          if (!tool) return { toolCalls: [{ name: 'helper', arguments: { task: 'say hi' }, id: 'call_lead_1' }] };
          return { text: `lead: ${tool.content}` };
        }
        return { text: 'hi from the helper' };
      },
    });
    const made = await call(env.url, '/v1/runs', { body: { agent: 'lead', input: 'greet' } });
    const runId = made.body.runId as string;
    const detail = await until(async () => {
      const { body } = await call(env!.url, `/v1/runs/${runId}`);
      return body.record.status !== 'running' && !body.record.live ? body : undefined;
    }, 'the tree to end');
    expect(detail.result).toMatchObject({ status: 'done', text: 'lead: hi from the helper' });
    expect(env.model.received[0]?.request?.toolNames).toContain('helper');
    expect(detail.children).toEqual([expect.objectContaining({ agent: 'helper', parentToolCallId: 'call_lead_1', depth: 1 })]);
  });

  it("a parent's stream tells of each child as it starts (child_run, no id), and its detail lists its children", async () => {
    // The lead's first model call waits until the test listens to its stream.
    let listening!: () => void;
    const heard = new Promise<void>((r) => (listening = r));
    env = await startInProcess({
      agents: { lead: agentFile('lead', { tools: '[calculate]', agents: '[helper]' }, 'You lead.') },
      script: async (request) => {
        const tool = request.messages.find((m) => m.role === 'tool');
        if (request.system?.includes('You lead.')) {
          if (!tool) {
            await heard;
            return { toolCalls: [{ name: 'helper', arguments: { task: 'say hi' }, id: 'call_lead_1' }] };
          }
          return { text: 'lead done' };
        }
        return { text: 'hi from the helper' };
      },
    });
    await writeFile(
      join(env.project, '.rein/agents/helper.md'),
      agentFile('helper', { tools: '[calculate]', baseUrl: env.model.url }, 'You help.'),
    );
    const made = await call(env.url, '/v1/runs', { body: { agent: 'lead', input: 'greet' } });
    const runId = made.body.runId as string;
    const stream = await readStream(env.url, runId, {
      stopAfter: (m) => {
        if (m.event === 'run_started') listening();
        return false;
      },
    });
    expect(stream.ended).toBe('end');
    const notices = stream.messages.filter((m) => m.event === 'child_run');
    expect(notices).toHaveLength(1);
    const notice = notices[0]!;
    expect(notice.id).toBeUndefined();
    const children = (await env.store.listRuns()).filter((r) => r.parentRunId === runId);
    expect(children).toHaveLength(1);
    expect(notice.data).toEqual({ runId: children[0]!.id, parentRunId: runId, parentToolCallId: 'call_lead_1', agent: 'helper', depth: 1 });
    // Told before the call that waits for it ends.
    const finished = stream.messages.findIndex((m) => m.event === 'tool_finished');
    expect(stream.messages.indexOf(notice)).toBeLessThan(finished);

    const detail = (await call(env.url, `/v1/runs/${runId}`)).body;
    expect(detail.children).toEqual([
      expect.objectContaining({
        id: children[0]!.id,
        parentRunId: runId,
        parentToolCallId: 'call_lead_1',
        depth: 1,
        agent: 'helper',
        status: 'done',
        steps: 1,
        live: false,
        task: expect.stringMatching(/^say hi/),
      }),
    ]);
    const own = (await call(env.url, `/v1/runs/${children[0]!.id}`)).body;
    expect(own.record.parentRunId).toBe(runId);
    expect(own.children).toEqual([]);
  });
});
