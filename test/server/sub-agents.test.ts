// `rein serve` builds the sub-agents an agent file names (`agents: [helper]`): a run of the
// parent starts the child as a run of its own in the server's store, tied to the call.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentFile, call, startInProcess, until, type InProcess } from './helpers.js';

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
});
