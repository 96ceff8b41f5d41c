import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { handoff } from '../../src/loop/handoff-tool.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { defineTool } from '../../src/tools/define.js';
import { collect, gateTool } from './helpers.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMemory } from '../../src/memory/sqlite-memory.js';
import type { Skill } from '../../src/skills/types.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const usage = { prompt_tokens: 10, completion_tokens: 5 };
const retry = { baseDelayMs: 5, maxDelayMs: 50, jitter: false };

const refund = defineTool({
  name: 'refund',
  description: 'Refunds an invoice.',
  parameters: { type: 'object', properties: { invoice: { type: 'string' } }, required: ['invoice'] },
  effect: 'idempotent',
  execute: ({ invoice }) => `refunded ${String(invoice)}`,
});

describe('handoff', () => {
  it('hands the conversation from an OpenAI Chat agent to an Anthropic Messages agent: same history, other prompt, tools and wire; logged; the result names the agent that finished', async () => {
    const server = await startScriptedServer({
      script: (request) => {
        const turn = request.messages.filter((m) => m.role === 'assistant').length;
        if (request.api === 'openai-chat')
          return { toolCalls: [{ name: 'transfer_to_billing', arguments: {}, id: 'call_triage_1' }], usage };
        // Billing (Anthropic wire): refunds, then answers.
        if (turn === 1) return { toolCalls: [{ name: 'refund', arguments: { invoice: 'INV-7' }, id: 'toolu_refund_1' }], usage };
        return { text: 'Refunded INV-7.', usage };
      },
    });
    servers.push(server);
    const billing = new Agent({
      name: 'billing',
      model: server.model('claude-billing', 'anthropic-messages'),
      system: 'You handle invoices.',
      retry,
      tools: [refund],
    });
    const triage = new Agent({
      name: 'triage',
      model: server.model('gpt-triage', 'openai-chat'),
      system: 'You route requests.',
      retry,
      tools: [handoff(billing)],
    });
    const { events, result } = await collect(triage.run('I was charged twice for INV-7'));
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer', text: 'Refunded INV-7.', agent: 'billing' });
    const switched = events.filter((e) => e.type === 'handoff');
    expect(switched).toEqual([
      expect.objectContaining({
        type: 'handoff',
        step: 1,
        toolCallId: 'call_triage_1',
        from: 'triage',
        to: 'billing',
        model: { provider: 'scripted', id: 'claude-billing', api: 'anthropic-messages' },
      }),
    ]);
    // Logged right after the handoff call's end.
    const at = events.findIndex((e) => e.type === 'handoff');
    expect(events[at - 1]).toMatchObject({ type: 'tool_finished', toolCallId: 'call_triage_1' });
    const requests = server.received;
    expect(requests.map((r) => r.api)).toEqual(['openai-chat', 'anthropic-messages', 'anthropic-messages']);
    const second = requests[1]!.request!;
    // The whole conversation so far, written by the other provider, valid on the Anthropic wire.
    expect(second.system).toBe('You handle invoices.');
    expect(second.toolNames).toEqual(['refund']);
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(second.messages[0]).toMatchObject({ role: 'user', content: 'I was charged twice for INV-7' });
    expect(second.messages[2]).toMatchObject({ role: 'tool', content: 'Transferred the conversation to the billing agent.' });
    expect(result.messages.filter((m) => m.role === 'assistant').map((m) => (m.role === 'assistant' ? m.api : ''))).toEqual([
      'openai-chat',
      'anthropic-messages',
      'anthropic-messages',
    ]);
  });

  it('a resumed run goes on with the agent it was handed to', async () => {
    const gate = gateTool('wait');
    const server = await startScriptedServer({
      script: (request) => {
        const turn = request.messages.filter((m) => m.role === 'assistant').length;
        if (request.api === 'openai-chat') return { toolCalls: [{ name: 'transfer_to_waiter', arguments: {} }], usage };
        if (turn === 1) return { toolCalls: [{ name: 'wait', arguments: {} }], usage };
        return { text: 'the waiter finished', usage };
      },
    });
    servers.push(server);
    const store = new MemoryRunStore();
    const waiter = new Agent({
      name: 'waiter',
      model: server.model('claude-waiter', 'anthropic-messages'),
      retry,
      tools: [gate.tool],
      store,
    });
    const first = new Agent({ name: 'first', model: server.model('gpt-first', 'openai-chat'), retry, tools: [handoff(waiter)], store });
    const handle = first.run('go');
    await gate.started;
    handle.abort();
    const aborted = await handle;
    expect(aborted).toMatchObject({ status: 'aborted', agent: 'waiter' });
    gate.release();
    const resumed = await first.resume(aborted.runId);
    expect(resumed).toMatchObject({ status: 'done', text: 'the waiter finished', agent: 'waiter' });
    expect(server.received.at(-1)?.api).toBe('anthropic-messages');
  });

  it("the agent a run is handed to brings its skills and memory: its memory hits and tools reach its requests, a skill it loads narrows its tools, and the run's events reach its paging", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rein-handoff-extras-'));
    const memory = await openMemory({ path: ':memory:', project: 'handoff' });
    try {
      memory.remember('Refunds above 500 euros need a second signature.');
      const refundsSkill: Skill = {
        name: 'refunds',
        description: 'How to refund an invoice.',
        body: 'Check the invoice, then refund it.',
        disableModelInvocation: false,
        dir,
        file: join(dir, 'SKILL.md'),
        allowedTools: ['refund'],
      };
      const big = defineTool({
        name: 'invoice_text',
        description: 'The text of an invoice.',
        parameters: { type: 'object', properties: {} },
        effect: 'pure',
        execute: () => 'line '.repeat(20_000),
      });
      const server = await startScriptedServer({
        script: (request) => {
          const turn = request.messages.filter((m) => m.role === 'assistant').length;
          if (request.api === 'openai-chat') return { toolCalls: [{ name: 'transfer_to_billing', arguments: {}, id: 'call_t' }], usage };
          if (turn === 1) return { toolCalls: [{ name: 'invoice_text', arguments: {}, id: 'toolu_big' }], usage };
          if (turn === 2)
            return {
              toolCalls: [{ name: 'read_tool_output', arguments: { tool_call_id: 'toolu_big', offset: 1000 }, id: 'toolu_page' }],
              usage,
            };
          if (turn === 3) return { toolCalls: [{ name: 'load_skill', arguments: { name: 'refunds' }, id: 'toolu_skill' }], usage };
          if (turn === 4) return { toolCalls: [{ name: 'refund', arguments: { invoice: 'INV-9' }, id: 'toolu_refund' }], usage };
          return { text: 'Refunded INV-9.', usage };
        },
      });
      servers.push(server);
      const billing = new Agent({
        name: 'billing',
        model: server.model('claude-billing', 'anthropic-messages'),
        system: 'You handle invoices.',
        retry,
        tools: [refund, big],
        skills: { skills: [refundsSkill], match: false },
        memory,
        toolOutputPaging: true,
      });
      const triage = new Agent({ name: 'triage', model: server.model('gpt-triage', 'openai-chat'), retry, tools: [handoff(billing)] });
      const { result } = await collect(triage.run('Refund invoice INV-9, please'));
      expect(result).toMatchObject({ status: 'done', text: 'Refunded INV-9.', agent: 'billing' });
      const requests = server.received.map((r) => r.request!);
      const first = requests[1]!;
      // Its memory: the hit in its request, its tools offered; its skills' catalog and tools too.
      expect(JSON.stringify(first)).toContain('Refunds above 500 euros need a second signature.');
      expect(first.toolNames).toEqual(expect.arrayContaining(['remember', 'recall', 'load_skill', 'read_tool_output']));
      expect(first.system).toContain('refunds');
      // Its paging saw the cut result of the run (events reach the handed-to agent's extras).
      const paged = result.messages.find((m) => m.role === 'tool' && m.toolCallId === 'toolu_page');
      expect(paged).toMatchObject({ isError: false });
      expect(JSON.stringify(paged)).toContain('line line');
      // The skill it loaded is active for the run: its allowed-tools narrow the next request.
      expect(requests[4]!.toolNames).toEqual(['refund', 'load_skill', 'read_skill_file']);
    } finally {
      memory.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an agent without a name', () => {
    const nameless = new Agent({ model: 'openai/gpt-4o-mini', modelConfig: { apiKey: 'x' } });
    expect(() => handoff(nameless)).toThrow(/handoff\(agent\): the agent needs a name/);
  });
});
