// A server's sampling requests made during a run's tool call are the run's: answered by a
// rein model, what they spent is in the call's `tool_finished` usage and the run's totals
// (so its token budget applies), and each is logged in the run as an `mcp_sampling` event,
// without the conversation's text. Against a server of our own on the official SDK.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/events.js';
import { Agent } from '../../src/loop/agent.js';
import { modelSampler } from '../../src/mcp/model-sampler.js';
import type { ScriptRequest } from '../../src/testing/index.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { collect, setup } from '../loop/helpers.js';
import { everything, host } from './helpers.js';

const BOOKING = fileURLToPath(new URL('./fixtures/booking-server.mjs', import.meta.url));

/** The agent's turns and the sampler's answers, from one scripted model: each sampling request says which it is. */
function script(request: ScriptRequest) {
  const last = request.messages.at(-1);
  const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  if (text.includes('first: SECRET-TEXT')) return { text: 'one', usage: { prompt_tokens: 100, completion_tokens: 10 } };
  if (text.includes('second: SECRET-TEXT')) return { text: 'two', usage: { prompt_tokens: 200, completion_tokens: 20 } };
  if (last?.role === 'user')
    return {
      toolCalls: [{ name: 'booking__summarize', arguments: { text: 'SECRET-TEXT' } }],
      usage: { prompt_tokens: 50, completion_tokens: 5 },
    };
  return { text: 'summarized', usage: { prompt_tokens: 60, completion_tokens: 6 } };
}

describe('sampling during a run', () => {
  it("counts the sampling answers in the call's usage and the run's totals, and logs each as mcp_sampling", async () => {
    const store = new MemoryRunStore();
    const { server } = await setup(script);
    const mcp = await host(
      { booking: { command: process.execPath, args: [BOOKING] } },
      {
        sample: modelSampler({ model: server.model(), decision: 'allow' }),
      },
    );
    const run = new Agent({ model: server.model(), toolSources: [mcp], store });
    const { events, result } = await collect(run.run('summarize it'));
    expect(result.status).toBe('done');
    const finished = events.find((e): e is Extract<RunEvent, { type: 'tool_finished' }> => e.type === 'tool_finished');
    expect(finished?.result.content).toEqual([{ type: 'text', text: 'summaries: one | two' }]);
    // The two sampling answers: 300 prompt and 30 output tokens.
    expect(finished?.usage).toMatchObject({ input: 300, output: 30, total: 330 });
    // The run's two turns (110 + 11) and the sampling (330).
    expect(result.totals.usage).toMatchObject({ input: 410, output: 41, total: 451 });
    const sampling = events.filter((e): e is Extract<RunEvent, { type: 'mcp_sampling' }> => e.type === 'mcp_sampling');
    expect(sampling).toHaveLength(2);
    expect(sampling[0]).toMatchObject({
      toolCallId: finished?.toolCallId,
      step: finished?.step,
      server: 'booking',
      decision: 'allow',
      model: `${server.model().provider}/${server.model().id}`,
      usage: { input: 100, output: 10 },
      stopReason: 'endTurn',
    });
    // Logged before the call's end, and stored.
    expect(events.indexOf(sampling[1] as RunEvent)).toBeLessThan(events.indexOf(finished as RunEvent));
    const stored = await store.loadEvents(result.runId);
    expect(stored.filter((e) => e.type === 'mcp_sampling')).toHaveLength(2);
    expect(JSON.stringify(sampling)).not.toContain('SECRET-TEXT');
  });

  it("a token budget counts what sampling spent: the run stops at the end of the call's turn", async () => {
    const { server } = await setup(script);
    const mcp = await host(
      { booking: { command: process.execPath, args: [BOOKING] } },
      {
        sample: modelSampler({ model: server.model(), decision: 'allow' }),
      },
    );
    // 55 tokens for the first turn would leave room for the next: the 330 of sampling do not.
    const agent = new Agent({ model: server.model(), toolSources: [mcp], limits: { maxTokens: 300 } });
    const result = await agent.run('summarize it');
    expect(result).toMatchObject({ status: 'stopped', reason: 'budget' });
    expect(result.totals.usage.total).toBe(385);
  });

  it('a refused sampling request is logged as denied for the call', async () => {
    const { server } = await setup(script);
    const mcp = await host(
      { booking: { command: process.execPath, args: [BOOKING] } },
      {
        sample: modelSampler({ model: server.model(), decision: 'deny' }),
      },
    );
    const { events } = await collect(new Agent({ model: server.model(), toolSources: [mcp] }).run('summarize it'));
    const sampling = events.filter((e) => e.type === 'mcp_sampling');
    expect(sampling).toEqual([expect.objectContaining({ server: 'booking', decision: 'deny', reason: expect.stringMatching(/denied/) })]);
    const finished = events.find((e): e is Extract<RunEvent, { type: 'tool_finished' }> => e.type === 'tool_finished');
    expect(finished?.usage).toBeUndefined();
  });

  it("server-everything's sampling request in a run: answered by the run's model and counted in its totals", async () => {
    const { server } = await setup((request) => {
      const last = request.messages.at(-1);
      const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
      if (text.includes('context: say hi')) return { text: 'hi there', usage: { prompt_tokens: 70, completion_tokens: 7 } };
      if (!request.messages.some((m) => m.role === 'tool'))
        return {
          toolCalls: [{ name: 'everything__trigger-sampling-request', arguments: { prompt: 'say hi' } }],
          usage: { prompt_tokens: 5, completion_tokens: 1 },
        };
      return { text: 'done', usage: { prompt_tokens: 5, completion_tokens: 1 } };
    });
    const mcp = await host({ everything: everything() }, { sample: modelSampler({ model: server.model(), decision: 'allow' }) });
    const { events, result } = await collect(new Agent({ model: server.model(), toolSources: [mcp] }).run('sample something'));
    expect(result.status).toBe('done');
    const finished = events.find((e): e is Extract<RunEvent, { type: 'tool_finished' }> => e.type === 'tool_finished');
    expect(JSON.stringify(finished?.result.content)).toContain('hi there');
    expect(finished?.usage).toMatchObject({ input: 70, output: 7 });
    expect(result.totals.usage).toMatchObject({ input: 80, output: 9 });
    expect(events.filter((e) => e.type === 'mcp_sampling')).toEqual([
      expect.objectContaining({ server: 'everything', decision: 'allow', usage: expect.objectContaining({ input: 70 }) }),
    ]);
  });
});
