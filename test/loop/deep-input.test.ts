// Deep or huge input from the model never crashes a run: tool arguments nested past the
// depth limit, or longer than the size limit, come back to the model as a correctable
// error naming the limit, over each of the four wires; the run goes on and its log folds.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../src/loop/agent.js';
import { MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH } from '../../src/model/json-limits.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/index.js';
import type { ModelApi } from '../../src/model/types.js';
import { MemoryRunStore } from '../../src/store/memory.js';
import { expectLogFoldsTo } from './log-folds.js';
import { addTool } from './helpers.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const WIRES: ModelApi[] = ['openai-chat', 'anthropic-messages', 'openai-responses', 'gemini'];
const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)},"b":1}`;

async function runWith(api: ModelApi, rawArguments: string) {
  const server = await startScriptedServer({
    script: [{ toolCalls: [{ name: 'add', arguments: rawArguments }] }, { text: 'ok' }],
    chunkSize: 4096,
  });
  servers.push(server);
  const store = new MemoryRunStore();
  const agent = new Agent({
    model: server.model('scripted', api),
    tools: [addTool],
    store,
    retry: { baseDelayMs: 5, maxDelayMs: 50, jitter: false },
  });
  const handle = agent.run('go');
  const result = await handle;
  const events = await store.loadEvents(result.runId);
  expectLogFoldsTo(events, result);
  return { result, events };
}

describe('tool arguments past the limits', () => {
  for (const api of WIRES) {
    // Gemini sends arguments as an object inside the event: 5,000 levels there is a response
    // past the wire's own depth limit (below), so its case here is one just past the argument limit.
    for (const depth of api === 'gemini' ? [MAX_ARGUMENT_DEPTH + 1, 300] : [MAX_ARGUMENT_DEPTH + 1, 5_000, 100_000]) {
      it(`${api}: arguments nested ${depth} levels deep are refused naming the limit; the run goes on to its answer`, async () => {
        const { result, events } = await runWith(api, nested(depth));
        expect(result).toMatchObject({ status: 'done', reason: 'final_answer', text: 'ok' });
        const finished = events.find((e) => e.type === 'tool_finished');
        expect(finished).toMatchObject({ errorCode: 'invalid_arguments' });
        expect(JSON.stringify(finished)).toContain(`nested more than ${MAX_ARGUMENT_DEPTH} levels deep`);
        expect(result.totals.usage.input).toBeLessThan(10_000);
      });
    }
  }

  it(`arguments longer than ${MAX_ARGUMENT_CHARS} characters are refused naming the limit`, async () => {
    const { result, events } = await runWith('openai-chat', JSON.stringify({ a: 1, b: 2, pad: 'x'.repeat(MAX_ARGUMENT_CHARS) }));
    expect(result.reason).toBe('final_answer');
    expect(JSON.stringify(events.find((e) => e.type === 'tool_finished'))).toContain('the limit is 1,048,576');
  });

  it('a refused call goes back to the model as {} beside its error, not as the text it sent', async () => {
    const server = await startScriptedServer({
      script: [
        { toolCalls: [{ name: 'add', arguments: 'not json at all' }] },
        { toolCalls: [{ name: 'add', arguments: nested(5_000) }] },
        { text: 'ok' },
      ],
    });
    servers.push(server);
    const agent = new Agent({ model: server.model(), tools: [addTool] });
    expect((await agent.run('go')).reason).toBe('final_answer');
    const sent = server.requests
      .at(-1)!
      .messages.flatMap((m) => ('tool_calls' in m && m.tool_calls ? m.tool_calls.map((c) => c.function.arguments) : []));
    expect(sent).toEqual(['{}', '{}']);
  });

  it(`arguments nested exactly ${MAX_ARGUMENT_DEPTH} levels deep are accepted`, async () => {
    const { events } = await runWith('openai-chat', nested(MAX_ARGUMENT_DEPTH));
    // `add` rejects an array for `a`: what matters is that the limit let the call through to validation.
    expect(JSON.stringify(events.find((e) => e.type === 'tool_finished'))).not.toContain('levels deep');
  });
});
